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

  int64_t num_batches() const noexcept { return static_cast<int64_t>(layer_streams.size()); }
  int64_t rows() const noexcept { return static_cast<int64_t>(nodes.size()); }
};

/// One layer's sampled edges for every stacked dst row, before compaction.
struct StackedDraws {
  std::vector<int64_t> indptr;    // [rows + 1]
  std::vector<int64_t> nodes;     // [edges] global src ids
  std::vector<int64_t> edge_ids;  // [edges], or empty when not requested
  std::vector<float> weights;     // [edges] LADIES only, else empty
};

using LayerSampler = std::function<StackedDraws(const StackedFrontier& frontier, int layer)>;

/// Checks the seeds of every batch, runs `sample_layer` for each layer and builds the MiniBatches;
/// batch b draws from streams[b] (one stream per batch).
std::vector<MiniBatch> run_layers(std::span<const std::span<const int64_t>> batches_of_seeds,
                                  std::span<const uint64_t> streams,
                                  const BulkSamplerOptions& options, int64_t num_nodes,
                                  const LayerSampler& sample_layer, ThreadPool* pool);

}  // namespace graphtier::sample::bulk
