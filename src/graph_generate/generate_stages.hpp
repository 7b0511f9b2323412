// The stages of `generate`, each streaming one group of arrays into the dataset writer.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "generate_model.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph_generate/generate.hpp"

namespace graphtier::graph::detail::generate {

/// Writes indptr and indices: the CSC of the first `num_draws` edges of `edges` (both directions
/// when undirected), rows sorted, without self-loops or duplicates. Memory: one degree counter
/// per node plus the CSC of one range of destinations at a time, within `memory_budget` bytes
/// (0: one range). `labels` serve to measure the homophily of the result. Fills the topology
/// counts of `report` (all but topology_seconds) and measured_homophily.
void write_topology(DatasetWriter& writer, const EdgeModel& edges, const LabelModel& labels, int64_t num_nodes,
                    int64_t num_draws, bool undirected, DType index_dtype, int64_t memory_budget, ThreadPool& pool,
                    GenerateReport& report);

/// One relation of a typed graph as the topology stage draws it: edges k in [0, num_draws) of
/// `same_type` (both ends of one type) or `cross_type`, in ids local to the types, placed at the
/// types' offsets; each stored edge also stored reversed as relation `reverse` when >= 0.
struct TypedRelation {
  int relation = 0;
  int reverse = -1;
  int64_t src_offset = 0, dst_offset = 0;
  int64_t num_draws = 0;
  std::optional<EdgeModel> same_type;
  std::optional<CrossTypeEdgeModel> cross_type;

  Edge draw(uint64_t k) const { return same_type ? same_type->draw(k) : cross_type->draw(k); }
};

/// Writes indptr, indices and type_per_edge of the relations' edges (build_typed_csc), rows
/// sorted by relation then source, without self-loops or repeated edges of a relation. Memory
/// as write_topology. Fills the topology counts of `report` (all but topology_seconds).
void write_typed_topology(DatasetWriter& writer, std::span<const TypedRelation> relations, int64_t num_nodes,
                          DType index_dtype, int64_t memory_budget, ThreadPool& pool, GenerateReport& report);

/// generate_dataset with options.schema set (generate.hpp), after the options common to both
/// kinds were checked.
GenerateReport generate_typed_dataset(const std::string& dir, const GenerateOptions& options, ThreadPool& pool);

struct SplitCounts {
  int64_t train = 0, valid = 0, test = 0;
};

/// Node counts of each split for the fractions in `options` (rounded to nearest).
SplitCounts split_counts(const GenerateOptions& options);

/// The nodes that carry labels: ids [offset, offset + count) of `total` (all of them in a
/// homogeneous graph; the labelled type's range in a typed one, the others labelled -1).
struct LabelledRange {
  int64_t offset = 0;
  int64_t count = 0;
  int64_t total = 0;
};

/// Writes labels and the train/valid/test id lists (ascending), in bounded memory. `labels` and
/// `split_order` take ids local to the range; the lists hold global ids.
void write_node_arrays(DatasetWriter& writer, const LabelModel& labels, const NodePermutation& split_order,
                       const LabelledRange& range, const SplitCounts& counts, ThreadPool& pool);

/// Writes node_time (each node's arrival step) and edge_time (each CSC entry's: the later of its
/// endpoints' steps) of a growing graph, reading back the indptr and indices already written.
void write_times(DatasetWriter& writer, const ArrivalTimes& times, int64_t num_nodes, DType index_dtype,
                 ThreadPool& pool);

/// Writes the feature rows of all nodes to `out`, `chunk_bytes` at a time, generating the next chunk
/// while the previous one is written. Returns the bytes written.
int64_t write_features(OutputFile& out, const FeatureLayout& layout, const FeatureModel& features,
                       const LabelModel& labels, int64_t num_nodes, int64_t chunk_bytes, ThreadPool& pool);

}  // namespace graphtier::graph::detail::generate
