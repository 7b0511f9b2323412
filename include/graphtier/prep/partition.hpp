// `partition`: split a dataset for the P ranks of a (P/c) x c process grid (docs/format.md,
// "Partition directory"; docs/architecture.md, Scale-out). Each rank gets a directory holding two
// format-v1 datasets: graph/ (the whole topology, or its block row) and features/ (the hot prefix
// and the feature block of its process row, as local rows), plus the partition manifest. The
// directory is written atomically as a whole, like a dataset (graph::DatasetWriter).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/dataset.hpp"

namespace graphtier::prep {

inline constexpr const char* kPartitionFormat = "graphtier-partition";
inline constexpr int kPartitionVersion = 1;
inline constexpr const char* kPartitionManifestName = "partition.json";

enum class PartitionGraph : uint8_t { kReplicated, kPartitioned };
/// How the feature rows [h, N) are split among the process rows: equal row counts (kBytes), equal
/// expected reads by the source's hotness scores (kHotness), or kHotness when the source has
/// hotness.bin and kBytes otherwise (kAuto, the default; a layout holds the resolved choice).
enum class PartitionBalance : uint8_t { kBytes, kHotness, kAuto };

std::string_view partition_graph_name(PartitionGraph g);
std::string_view partition_balance_name(PartitionBalance b);
/// "replicated" | "partitioned"; throws InvalidArgument naming --graph.
PartitionGraph parse_partition_graph(std::string_view text);
/// "bytes" | "hotness"; throws InvalidArgument naming --balance.
PartitionBalance parse_partition_balance(std::string_view text);

/// The replicated hot prefix as given: a count ("1000", "10K") or a percent of the nodes ("5%").
struct HotRows {
  int64_t count = 0;
  double percent = -1;  // >= 0: a percent of N, and `count` is unused
  /// Throws InvalidArgument naming --hot-replicated.
  static HotRows parse(std::string_view text);
  /// Rows [0, resolve(N)) are replicated; a percent rounds down. A count above N throws
  /// InvalidArgument naming --hot-replicated.
  int64_t resolve(int64_t num_nodes) const;
};

struct PartitionOptions {
  int64_t ranks = 1;        // P >= 1
  int64_t replication = 1;  // c >= 1, divides P; R = P / c process rows, R <= N
  PartitionGraph graph = PartitionGraph::kReplicated;
  PartitionBalance balance = PartitionBalance::kAuto;
  HotRows hot_rows;
  bool overwrite = false;
};

/// The bounds of a partition (docs/format.md, "Partition directory"). Ids are global.
struct PartitionLayout {
  int64_t ranks = 1;
  int64_t replication = 1;
  int64_t process_rows = 1;
  PartitionGraph graph = PartitionGraph::kReplicated;
  PartitionBalance balance = PartitionBalance::kBytes;
  int64_t num_nodes = 0;
  int64_t num_edges = 0;
  int64_t hot_rows = 0;
  std::vector<int64_t> feature_bounds;   // [R + 1]: 0, ..., N; empty for a typed source
  std::vector<int64_t> topology_bounds;  // [R + 1] partitioned, [0, N] replicated
  std::vector<int64_t> edge_offsets;     // [R] partitioned: indptr[t_i]; [0] replicated
  /// A typed source's: [T][R + 1], type t's id range [o_t, o_{t+1}) split into R equal row
  /// counts (b_t,0 = o_t, b_t,R = o_{t+1}); process row i owns [b_t,i, b_t,i+1) of every type.
  /// Empty for a homogeneous source.
  std::vector<std::vector<int64_t>> type_feature_bounds;

  bool typed() const noexcept { return !type_feature_bounds.empty(); }
  /// Homogeneous: process row i's owned block [max(b_i, h), max(b_{i+1}, h)).
  std::pair<int64_t, int64_t> owned_range(int64_t row) const;
  /// Process row i's local feature rows as global id ranges in local row order: homogeneous
  /// [0, h) then owned_range(i); typed, [b_t,i, b_t,i+1) of every type t in type order.
  std::vector<std::pair<int64_t, int64_t>> local_ranges(int64_t row) const;
  int64_t local_rows(int64_t row) const;
  /// The topology block row that process row i holds: [t_i, t_{i+1}), or [0, N) replicated.
  std::pair<int64_t, int64_t> topology_range(int64_t row) const;
};

/// Feature bounds that split [h, N) into R ranges of equal row count (b_0 = 0, b_R = N, and
/// b_i = h + (N - h) * i / R in between).
std::vector<int64_t> bounds_by_rows(int64_t num_nodes, int64_t hot_rows, int64_t process_rows);
/// Feature bounds that give each of the R ranges of [h, N) an equal share of the scores: b_i is
/// the first id whose prefix sum over [h, b_i) reaches i / R of the total. Scores must be
/// non-negative with a positive sum over [h, N) (else InvalidArgument naming --balance).
std::vector<int64_t> bounds_by_scores(std::span<const double> scores, int64_t hot_rows, int64_t process_rows);
/// Topology bounds: t_i = the first node v with indptr[v] >= E * i / R (about E / R edges each).
std::vector<int64_t> bounds_by_edges(std::span<const int64_t> indptr, int64_t process_rows);

/// Checks the options against the source and computes the layout; throws InvalidArgument naming
/// the option at fault (--ranks, --replication, --hot-replicated, --balance).
PartitionLayout plan_partition(const graph::Dataset& source, const PartitionOptions& options);

struct PartitionReport {
  PartitionLayout layout;
  int64_t bytes_written = 0;  // array bytes over every rank
  double seconds = 0;
};

/// Writes the partition directory of `source_dir` at `output_dir` (atomically: a hidden
/// temporary directory beside it, renamed into place; `overwrite` replaces an earlier partition
/// directory, never anything else), with a Progress line over the bytes written. Feature rows
/// are copied with bounded buffers, never the whole table in memory; the ranks are written in
/// parallel on `pool`. Throws InvalidArgument for bad options, IoError (ENOSPC) when the output
/// cannot fit, FormatError/IoError from the files.
PartitionReport write_partition(const std::string& source_dir, const std::string& output_dir,
                                const PartitionOptions& options, ThreadPool& pool);

// --- verification ------------------------------------------------------------------------------

/// True when `dir` holds a partition.json (a partition directory or one rank's directory).
bool is_partition_directory(const std::string& dir);

/// Reads and checks the partition.json at `path` with every check that needs no other file
/// (format, version, grid, bounds, local ranges, rank directories, the rank in [0, ranks)): a
/// FormatError names the file and the field at fault, an IoError a file that cannot be read.
/// Returns the manifest rewritten in its documented form (docs/format.md): what the Python
/// package reads, so that the fuzzed reader is the only one.
std::string read_partition_json(const std::string& path);

struct PartitionVerifyReport {
  std::string dir;
  std::optional<int64_t> rank;  // set when `dir` is one rank's directory
  int64_t datasets = 0;         // format-v1 datasets checked (checksums included)
  uint64_t bytes = 0;           // bytes checksummed
  /// "checked" (the source path recorded or given was compared), or "skipped: ..." saying why.
  std::string source;
  std::string source_path;  // the path compared, empty when skipped
};

/// Verifies a partition directory, or one rank's directory: every dataset fully (checksums,
/// with a Progress line), the manifest's consistency, each rank's datasets against the manifest
/// (sizes, block rows, the rank field against its directory, node arrays against the source's
/// recorded checksums), and that it belongs to its source: the source at `source_dir` (if given)
/// or at the recorded path (if that exists) must have the recorded manifest.json xxh3 and file
/// checksums. Throws FormatError naming the file and the mismatch.
PartitionVerifyReport verify_partition(const std::string& dir, const std::string& source_dir = "");

}  // namespace graphtier::prep
