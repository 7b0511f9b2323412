// The stages of `generate`, each streaming one group of arrays into the dataset writer.
#pragma once

#include <cstdint>

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

struct SplitCounts {
  int64_t train = 0, valid = 0, test = 0;
};

/// Node counts of each split for the fractions in `options` (rounded to nearest).
SplitCounts split_counts(const GenerateOptions& options);

/// Writes labels and the train/valid/test id lists (ascending), in bounded memory.
void write_node_arrays(DatasetWriter& writer, const LabelModel& labels, const NodePermutation& split_order,
                       int64_t num_nodes, const SplitCounts& counts, ThreadPool& pool);

/// Writes the feature rows of all nodes to `out`, `chunk_bytes` at a time, generating the next chunk
/// while the previous one is written. Returns the bytes written.
int64_t write_features(OutputFile& out, const FeatureLayout& layout, const FeatureModel& features,
                       const LabelModel& labels, int64_t num_nodes, int64_t chunk_bytes, ThreadPool& pool);

}  // namespace graphtier::graph::detail::generate
