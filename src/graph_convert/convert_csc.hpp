// Topology of a converted dataset: edge inputs as re-scannable streams of (src, dst) pairs, and
// the CSC builder that turns one into indptr.bin / indices.bin in O(E) time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "byte_source.hpp"
#include "npy_array.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph/topology_report.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::graph::detail {

/// `count` edges src[i] -> dst[i]; the arrays stay valid for the duration of the callback.
struct EdgeChunk {
  const int64_t* src = nullptr;
  const int64_t* dst = nullptr;
  int64_t count = 0;
};

/// An edge input that can be streamed more than once, yielding the same edges in the same order.
class EdgeSource {
 public:
  virtual ~EdgeSource() = default;
  /// Calls consume(chunks) for successive blocks of edges in input order; advances `progress`
  /// in the unit of progress_total().
  virtual void scan(ThreadPool& pool, Progress& progress,
                    const std::function<void(std::span<const EdgeChunk>)>& consume) const = 0;
  virtual int64_t progress_total() const = 0;
  virtual std::string progress_unit() const = 0;
  /// For messages (a path).
  virtual const std::string& name() const = 0;
};

/// Lines of `src dst` in a text source (see convert.hpp). Ids are checked against `num_nodes`
/// while parsing when it is known, so that an out-of-range id is reported as "path:line".
std::unique_ptr<EdgeSource> text_edge_source(SourcePtr source, bool allow_extra_columns,
                                             std::optional<int64_t> num_nodes);

/// An integer edge_index array of shape [2, E] or [E, 2] (Fortran order is understood too).
std::unique_ptr<EdgeSource> npy_edge_source(NpyArray edge_index, EdgeLayout layout);

/// Number of edges an npy_edge_source would yield (E), after checking the shape.
int64_t npy_edge_count(const NpyArray& edge_index, EdgeLayout layout);

/// Bytes of memory per node that building the CSC holds (the in-degree counters).
inline constexpr int64_t kCscBytesPerNode = 8;

/// Why an edge list whose largest id is `id` cannot be converted (its node count exceeds the
/// format or the memory for kCscBytesPerNode a node), or "" when it can.
std::string node_id_problem(int64_t id);

struct CscOptions {
  bool symmetrize = false;
  bool keep_self_loops = false;
  std::optional<int64_t> num_nodes;  // unset: max id + 1
  std::string num_nodes_from;        // the input that set num_nodes, for messages; empty: given
  int64_t memory_budget = 0;         // 0: no limit
};

/// The report's topology counts (self-loops in input edges), and what the dataset needs besides.
struct CscResult : TopologyReport {
  DType index_dtype = DType::kInt32;
  int64_t input_edges = 0;
};

/// Builds the CSC of `edges` and writes indptr and indices into `writer`: the row of node v
/// lists the sources of the edges into v (and, symmetrized, the destinations of the edges out
/// of v), ascending, without duplicates. One pass counts in-degrees (and checks ids), then the
/// shared builder (csc_builder.hpp) places, sorts and deduplicates the rows. Throws FormatError naming the source for a
/// negative or out-of-range id.
CscResult write_csc(DatasetWriter& writer, const EdgeSource& edges, const CscOptions& options, ThreadPool& pool);

/// One relation of a typed input, for write_typed_csc.
struct TypedEdgeInput {
  const EdgeSource* edges = nullptr;  // ids local to the relation's source and destination types
  int relation = 0;
  int reverse = -1;  // also stores every edge reversed as this relation; -1: no
  std::string src_type, dst_type;  // for messages
  int64_t src_offset = 0, src_count = 0;
  int64_t dst_offset = 0, dst_count = 0;
};

/// Builds the typed CSC of the relations' edges (docs/format.md, Heterogeneous datasets) and
/// writes indptr, indices and type_per_edge into `writer`: each row lists its entries by
/// relation, then source, without repeats of an edge within a relation, and without self-loops
/// unless kept. One pass counts in-degrees and checks every id against its type's count
/// (FormatError naming the input, the edge and the type), then build_typed_csc places, sorts
/// and deduplicates the rows. Memory: 8 bytes a node plus the CSC of one range of rows within
/// `memory_budget` (0: no limit).
CscResult write_typed_csc(DatasetWriter& writer, std::span<const TypedEdgeInput> inputs, int64_t num_nodes,
                          bool keep_self_loops, int64_t memory_budget, ThreadPool& pool);

}  // namespace graphtier::graph::detail
