// The layer loop shared by the bulk backends: stack the k frontiers, let the backend sample one
// layer for all of them, then compact each batch into its Block (cpu::compact_layer).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/sample/bulk_sampler.hpp"

namespace graphtier::sample::bulk {

/// The dst nodes of one layer for all k batches, batch-major.
struct StackedFrontier {
  std::vector<int64_t> nodes;           // [rows]
  std::vector<int64_t> offsets;         // [k + 1]: batch b owns rows offsets[b] .. offsets[b + 1]
  std::vector<uint64_t> layer_streams;  // [k]
  /// [rows] the row of the matrices (BulkMatrices) holding each node's in-neighbours, or empty:
  /// the row is the node id (matrices built from the whole graph). Host backend only.
  std::vector<int64_t> matrix_rows;

  int64_t num_batches() const noexcept { return static_cast<int64_t>(layer_streams.size()); }
  int64_t rows() const noexcept { return static_cast<int64_t>(nodes.size()); }
  int64_t matrix_row(int64_t r) const noexcept { return matrix_rows.empty() ? nodes[r] : matrix_rows[r]; }
};

/// One layer's sampled edges for every stacked dst row, before compaction.
struct StackedDraws {
  std::vector<int64_t> indptr;    // [rows + 1]
  std::vector<int64_t> nodes;     // [edges] global src ids
  std::vector<int64_t> edge_ids;  // [edges], or empty when not requested
  std::vector<float> weights;     // [edges] LADIES only, else empty
};

/// Layer `layer` of k batches stacked: batch b's dst nodes dsts[b], drawn from
/// layer_stream(streams[b], layer); InvalidArgument for a LADIES frontier above kMaxLadiesFrontier.
StackedFrontier stack_frontier(std::span<const std::span<const int64_t>> dsts, std::span<const uint64_t> streams,
                               const BulkSamplerOptions& options, int layer);

/// Step 3's compaction of every stacked batch into blocks[b] (the MiniBatch contract: dst nodes
/// first, then new nodes in order of first appearance), batches spread over the pool.
void compact_blocks(const StackedFrontier& frontier, const StackedDraws& draws, bool edge_ids,
                    std::span<Block* const> blocks, ThreadPool* pool);

using LayerSampler = std::function<StackedDraws(const StackedFrontier& frontier, int layer)>;

/// Checks the seeds of every batch, runs `sample_layer` for each layer and builds the MiniBatches;
/// batch b draws from streams[b] (one stream per batch).
std::vector<MiniBatch> run_layers(std::span<const std::span<const int64_t>> batches_of_seeds,
                                  std::span<const uint64_t> streams,
                                  const BulkSamplerOptions& options, int64_t num_nodes,
                                  const LayerSampler& sample_layer, ThreadPool* pool);

}  // namespace graphtier::sample::bulk
