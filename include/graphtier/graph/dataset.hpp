// Dataset format v1: one self-describing directory of raw little-endian arrays (docs/format.md).
//
//   manifest.json     version, counts, dtypes, row stride, and per file its byte size and XXH3-64
//   indptr.bin        int64 [num_nodes + 1]   CSC offsets, 0 .. num_edges, non-decreasing
//   indices.bin       int32|int64 [num_edges] in-neighbours (message sources) of each node
//   features.bin      [num_nodes, row_stride bytes], row-major, `dim` values of `dtype` per row
//   labels.bin        int32 [num_nodes], -1 = unlabeled, else 0 .. num_classes - 1
//   train.bin, valid.bin, test.bin   int64 node ids
//   permutation.bin   int64 [num_nodes], new id -> original id (present after `prepare`)
//   hotness.bin       float64 [num_nodes], the score used to order nodes (non-increasing)
//   type_per_edge.bin uint8 [num_edges], relation of each edge (typed datasets only)
//   features.<type>.bin  [nodes of <type>, row_stride bytes] (typed datasets: a table per type)
//   link_train.bin, link_valid.bin, link_test.bin   int64 [K, 2] (src, dst) seed edges of a
//                     link-prediction split (`graphtier split-links`; manifest "links")
//   node_time.bin     int64 [num_nodes], each node's timestamp (temporal sampling; optional)
//   edge_time.bin     int64 [num_edges], each CSC entry's timestamp (temporal sampling; optional)
//
// A typed (heterogeneous) dataset adds the manifest's "hetero" section (HeteroSchema): node types
// as contiguous id ranges, relations `src:rel:dst` with their reverses, the labelled type, and a
// feature table per type; Dataset::hetero() hands the layout to the samplers (hetero_view.hpp).
// Only indptr and indices are required. Readers memory-map the arrays; open() validates sizes,
// ranges and monotonicity and names the file and the problem; verify() also checks checksums.
// Writers build the directory under a temporary name beside the target and rename it into place
// only after it validates, so an interrupted or failed write leaves the previous dataset or none.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "graphtier/core/dtype.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/graph/hetero_view.hpp"
#include "graphtier/graph/staged_directory.hpp"

namespace graphtier {
class Progress;
}

namespace graphtier::graph {

inline constexpr int kFormatVersion = 1;
inline constexpr const char* kManifestName = "manifest.json";

enum class Split : uint8_t { kTrain, kValid, kTest };
std::string_view split_name(Split s);

/// Row layout of the feature table. `alignment` is 0 (packed), 512 or 4096 bytes: with an
/// alignment a row never straddles an alignment block, so the storage tier can read any row with
/// O_DIRECT: rows up to `alignment` bytes get a power-of-two stride that divides it, larger rows
/// a stride that is a multiple of it.
struct FeatureLayout {
  int64_t dim = 0;  // 0: no features
  DType dtype = DType::kFloat32;
  int64_t alignment = 0;
  int64_t row_stride = 0;  // bytes from one row to the next

  int64_t row_bytes() const { return dim * dtype_size(dtype); }
  /// Computes row_stride from dim, dtype and alignment; throws InvalidArgument on a bad alignment.
  static FeatureLayout make(int64_t dim, DType dtype, int64_t alignment);
};

struct FileEntry {
  std::string path;  // relative to the dataset directory
  uint64_t bytes = 0;
  std::string xxh3;  // 16 hex digits
};

/// One node type of a typed dataset. Its name is a safe file-name part (1 to 64 of [A-Za-z0-9_]):
/// it names the type's feature table, `features.<name>.bin`.
struct NodeTypeEntry {
  std::string name;
  FeatureLayout features;  // dim 0: the type has no feature table
};

/// One relation: edges from nodes of `types.src_type` to nodes of `types.dst_type`, written
/// `src:name:dst` in the manifest (name is 1 to 64 of [A-Za-z0-9_]).
struct RelationEntry {
  std::string name;
  RelationTypes types;
  int32_t reverse = -1;  // the relation with the same edges reversed, or -1
};

/// The manifest's "hetero" section; empty for a homogeneous dataset (no section in the file).
/// Invariants checked by Manifest::from_json: node_type_offset has one entry more than
/// node_types, starts at 0, never decreases and ends at num_nodes; names are unique and safe;
/// at most kMaxRelations relations; reverse is symmetric (r's reverse's reverse is r) and swaps
/// the types; labelled_type is -1 or a type; typed datasets keep no global feature table.
struct HeteroSchema {
  std::vector<NodeTypeEntry> node_types;
  std::vector<int64_t> node_type_offset;  // [T + 1]
  std::vector<RelationEntry> relations;
  int32_t labelled_type = -1;  // the type labels.bin and the splits refer to, -1 when none

  bool empty() const noexcept { return node_types.empty(); }
  int32_t num_node_types() const noexcept { return static_cast<int32_t>(node_types.size()); }
  int32_t num_relations() const noexcept { return static_cast<int32_t>(relations.size()); }
  int64_t num_nodes_of(int32_t type) const { return node_type_offset.at(type + 1) - node_type_offset.at(type); }
  /// The node type holding global id `v` (which must be in [0, num_nodes)).
  int32_t type_of(int64_t v) const;
  /// "src:rel:dst".
  std::string relation_name(int32_t r) const;
  /// The index of the type or relation (written "src:rel:dst") with that name, or -1.
  int32_t find_node_type(std::string_view name) const;
  int32_t find_relation(std::string_view name) const;
  /// The array name ("features.<type>") of the type's feature table, stored as `<array>.bin`.
  static std::string feature_array(std::string_view type_name);
};

/// The seed edges of a link-prediction split (docs/format.md, Link splits), written by
/// `graphtier split-links` (prep/link_split.hpp) as PyG's RandomLinkSplit draws them: the
/// undirected edges (an unordered pair {u, v} with all its CSC entries: both directions and
/// duplicates) are split at random into validation, test and training edges, and a `disjoint`
/// share of the training edges is kept for supervision only. The CSC holds the message-passing
/// edges alone: validation, test and disjoint supervision edges never reach message passing.
/// Each split's edges are `link_<split>.bin`, int64 [num_<split>, 2], one (src, dst) row per
/// undirected edge, sorted; src <= dst unless the graph holds the edge only as src > dst.
struct LinkSplit {
  uint64_t seed = 0;
  double val = 0;       // fraction of the undirected edges drawn for validation
  double test = 0;      // fraction drawn for testing
  double disjoint = 0;  // fraction of the training edges kept out of message passing
  bool by_time = false;  // validation and test are the latest edges (split-links --by-time)
  int64_t num_train = 0;
  int64_t num_valid = 0;
  int64_t num_test = 0;

  int64_t count(Split s) const { return s == Split::kTrain ? num_train : s == Split::kValid ? num_valid : num_test; }
  /// The array holding split `s`'s edges: "link_train", "link_valid" or "link_test".
  static std::string array(Split s);
  /// The array of split `s`'s edge times, "link_<split>_time": int64 [num_<split>], one per row of
  /// array(s) (the edge's earliest time), present for all three splits or none (a dataset with
  /// edge times, split by split-links).
  static std::string time_array(Split s);
};

/// Whether `name` may name a node type or relation: 1 to 64 of [A-Za-z0-9_], so that it is a
/// safe file-name part and cannot be confused with the separators of `src:rel:dst` or `A-B`.
bool is_valid_type_name(std::string_view name);

struct Manifest {
  int version = kFormatVersion;
  std::string name;
  int64_t num_nodes = 0;
  int64_t num_edges = 0;
  DType indices_dtype = DType::kInt32;
  FeatureLayout features;
  int64_t num_classes = 0;    // 0 when there are no labels
  std::string hotness;        // score that ordered the ids ("" if not prepared)
  std::string source;         // provenance, free text
  std::map<std::string, FileEntry> files;  // by array name ("indptr", "features", ...)
  HeteroSchema hetero;                     // empty: homogeneous (written only when not empty)
  std::optional<LinkSplit> links;          // seed edges (written only when present)

  bool has(const std::string& array) const { return files.count(array) != 0; }
  std::string to_json() const;
  /// Parses and checks the manifest; throws FormatError naming `path`.
  static Manifest from_json(const std::string& text, const std::string& path);
};

/// Typed view of the indices array, whichever width it has on disk.
using IndexSpan = std::variant<std::span<const int32_t>, std::span<const int64_t>>;

/// The smallest index dtype that can hold ids below num_nodes.
DType index_dtype_for(int64_t num_nodes);

/// The most nodes a dataset can hold: indptr.bin holds num_nodes + 1 int64 offsets, and its size
/// in bytes must fit an int64 (a file size): 2^60 - 2, about 1.15e18.
inline constexpr int64_t kMaxNodes = INT64_MAX / 8 - 1;

/// Why `num_nodes` nodes cannot be held, or "" when they can: more than kMaxNodes, or
/// `bytes_per_node` bytes per node (`what`, held in memory) more than the installed physical
/// memory. For refusing a count read from input before allocating for it; the caller's error
/// names where the count came from. Example: "1000000000000000 nodes need 7.1 PiB in memory for
/// the in-degree counters (8 B per node) but the machine has 31.2 GiB".
std::string node_count_problem(int64_t num_nodes, int64_t bytes_per_node, std::string_view what = "their arrays");

/// The most nodes node_count_problem accepts with `bytes_per_node`.
int64_t max_nodes_for(int64_t bytes_per_node);

/// The two numberings of a dataset's nodes. `prepare` renumbers them (hot nodes first) and
/// records permutation.bin; every array of the dataset (topology, features, labels, splits, the
/// ids a sampler returns) is in the dataset's own numbering, kPrepared, and the ids of the input
/// it was converted from are kOriginal. A dataset never prepared has one numbering: both are it.
enum class Numbering : uint8_t { kPrepared, kOriginal };
/// "prepared" or "original".
std::string_view numbering_name(Numbering n);
/// Parses numbering_name's output; throws InvalidArgument naming the choices otherwise.
Numbering parse_numbering(std::string_view text);

/// A dataset opened read-only through memory maps. Move-only; views stay valid while it lives.
class Dataset {
 public:
  /// Opens and validates `dir`. Throws FormatError (naming the file and problem) or IoError.
  static Dataset open(const std::string& dir);

  Dataset(Dataset&&) noexcept;
  Dataset& operator=(Dataset&&) noexcept;
  ~Dataset();

  const std::string& dir() const noexcept;
  const Manifest& manifest() const noexcept;
  int64_t num_nodes() const noexcept { return manifest().num_nodes; }
  int64_t num_edges() const noexcept { return manifest().num_edges; }

  std::span<const int64_t> indptr() const;
  IndexSpan indices() const;
  /// Neighbour ids of node v as int64 (copying through the variant; for tests and tools).
  int64_t in_degree(int64_t v) const { return indptr()[v + 1] - indptr()[v]; }

  bool has_features() const noexcept { return manifest().features.dim > 0; }
  /// num_nodes * row_stride bytes; row v starts at v * row_stride.
  std::span<const std::byte> feature_bytes() const;
  bool has_labels() const noexcept { return manifest().num_classes > 0; }
  std::span<const int32_t> labels() const;
  std::span<const int64_t> split(Split s) const;
  bool has_permutation() const noexcept { return manifest().has("permutation"); }
  std::span<const int64_t> permutation() const;

  /// The id maps of a prepared dataset: `out[i]` is the original id of prepared id `ids[i]`
  /// (to_original: permutation.bin), or the prepared id of original id `ids[i]` (from_original:
  /// its inverse, built on the first call, 8 bytes per node, thread-safe). `out` has ids.size()
  /// entries and may be `ids` itself. Without permutation.bin both are the identity (the dataset
  /// was never renumbered), the ids still checked. Throws OutOfRange naming the first id outside
  /// [0, num_nodes), its position and the numbering it was read in, before writing anything.
  void to_original(std::span<const int64_t> ids, std::span<int64_t> out) const;
  void from_original(std::span<const int64_t> ids, std::span<int64_t> out) const;
  /// `ids`, given in `numbering`, in the dataset's own numbering, in place: the one place ids that
  /// enter (a loader's seeds, a link loader's edges, PyG's sampler's inputs) change numbering. A
  /// renumbered dataset refuses them without a numbering said (InvalidArgument naming `what` and
  /// both choices): read in the other one they would pick other nodes, silently. Ids read in the
  /// original numbering are mapped (from_original: checked, named in it) and, where that changes
  /// them, said in one info line naming `what`.
  void to_own_numbering(std::span<int64_t> ids, std::optional<Numbering> numbering, std::string_view what) const;
  /// A link-prediction split's seed edges (LinkSplit): split `s`'s (src, dst) pairs, flattened
  /// (2 * count entries: src0, dst0, src1, ...); empty without a split.
  bool has_link_split() const noexcept { return manifest().links.has_value(); }
  std::span<const int64_t> link_edges(Split s) const;
  /// Split `s`'s edge times (LinkSplit::time_array), one per pair; empty without them.
  bool has_link_time() const noexcept { return manifest().has(LinkSplit::time_array(Split::kTrain)); }
  std::span<const int64_t> link_time(Split s) const;
  bool has_hotness() const noexcept { return manifest().has("hotness"); }
  std::span<const double> hotness() const;
  /// Timestamps for temporal sampling (docs/format.md, Timestamps): node v's time, and the time of
  /// the edge at CSC position p; any int64 (years, unix seconds, ...). Empty when absent.
  bool has_node_time() const noexcept { return manifest().has("node_time"); }
  std::span<const int64_t> node_time() const;
  bool has_edge_time() const noexcept { return manifest().has("edge_time"); }
  std::span<const int64_t> edge_time() const;

  /// Typed datasets (docs/format.md, Heterogeneous datasets). For a homogeneous dataset
  /// is_hetero() is false, hetero() is the empty view and schema() is empty.
  bool is_hetero() const noexcept { return !manifest().hetero.empty(); }
  const HeteroSchema& schema() const noexcept { return manifest().hetero; }
  /// The layout the samplers read: node_type_offset, relation types, type_per_edge.bin. The
  /// spans point into this dataset.
  HeteroView hetero() const;
  /// Type `type`'s feature rows: nodes_of(type) * its row_stride bytes, row i (global id
  /// node_type_offset[type] + i) at i * row_stride; empty when the type has no features.
  std::span<const std::byte> type_feature_bytes(int32_t type) const;

  /// Full check: recomputes every file's checksum against the manifest (reads every byte).
  void verify_checksums(Progress* progress = nullptr) const;

 struct Impl;  // opaque: the maps and the parsed manifest

 private:
  explicit Dataset(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Builds a dataset in a StagedDirectory (`<parent>/.<name>.tmp-<pid>-<n>`) and renames it to
/// `dir` on commit(). Destroying an uncommitted writer closes its arrays and removes the temporary
/// directory. Stale temporary directories of dead processes beside `dir` are removed when a
/// writer starts.
class DatasetWriter {
 public:
  /// Throws InvalidArgument if `dir` exists and `overwrite` is false, or if it exists and is
  /// neither empty nor a dataset (StagedDirectory's checks, with manifest.json the marker).
  DatasetWriter(std::string dir, bool overwrite);
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  const std::string& temp_dir() const noexcept { return staged_.temp_dir(); }

  /// Opens `<array>.bin` for sequential writing; the writer closes it on commit().
  OutputFile& open_array(const std::string& array);

  /// Throws IoError (ENOSPC) saying how much is needed and how much is free when `rows` x
  /// `row_bytes` more bytes (`what`) do not fit in the space the output's file system has free
  /// for unprivileged writers. Writers call it when they know a large array's size, before
  /// writing it, so a job that cannot finish fails at once instead of after filling the disk.
  void require_free_space(std::string_view what, int64_t rows, int64_t row_bytes) const;

  template <typename T>
  void write_array(const std::string& array, std::span<const T> values) {
    open_array(array).write_span(values);
  }

  /// Closes array `array` (opened and fully written) and maps it for reading, so that a later
  /// stage can derive an array from an earlier one; no more may be written to it.
  MappedFile map_array(const std::string& array);

  /// Closes all arrays, records their sizes and checksums in `manifest`, writes manifest.json,
  /// validates the directory with Dataset::open, and renames it into place (replacing an old
  /// dataset atomically with renameat2(RENAME_EXCHANGE) when overwriting).
  void commit(Manifest manifest);

 private:
  StagedDirectory staged_;
  // Declared after staged_: destroyed first, so the files are closed before an uncommitted
  // temporary is removed.
  std::map<std::string, std::unique_ptr<OutputFile>> arrays_;
};

}  // namespace graphtier::graph
