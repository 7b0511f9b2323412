// CUDA backend of bulk sampling (bulk_sampler.hpp): the matrices live on one GPU; each layer runs
// P = Q * M with cuSPARSE SpGEMM, rows sorted by CUB, then the shared row ops (bulk_row_ops.hpp)
// one thread per row for the draws and the extraction. Plain C++ header; CUDA builds only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graphtier/core/cuda_stream.hpp"
#include "bulk_layers.hpp"
#include "bulk_matrices.hpp"

namespace graphtier::sample::cuda {

/// Host waits of every layer call of every BulkDevice in this process so far (not the constructor's
/// one): the tests check the budget below against it.
uint64_t bulk_synchronisations() noexcept;

/// Not thread-safe: one cuSPARSE handle, re-bound to the caller's stream on each call, and one
/// pinned staging arena. Synchronisation budget per layer: one (the copy of the results, or in the
/// device form of the counts and the next frontier; the LADIES kept sets are built on the device),
/// plus cuSPARSE's own wait for the product's size; no
/// cudaMalloc or cudaFree (stream-ordered temporaries), no pageable copies.
class BulkDevice {
 public:
  /// Copies A (and the LADIES squares) to `device`. Throws Unsupported when they need 64-bit
  /// indices (cuSPARSE SpGEMM takes 32-bit ones).
  BulkDevice(const BulkMatrices& m, BulkAlgorithm algorithm, int device);
  ~BulkDevice();
  BulkDevice(const BulkDevice&) = delete;
  BulkDevice& operator=(const BulkDevice&) = delete;

  /// Layer `layer` of every stacked batch, downloaded for the host's compaction.
  bulk::StackedDraws host_layer(const bulk::StackedFrontier& frontier, const BulkSamplerOptions& options, int layer,
                                CudaStream stream) const;
  /// CudaBulkSampler::sample_device: every layer's draws compacted on the device
  /// (bulk_compact.hpp); the layer's one wait reads each batch's sequence start and src count and
  /// (but for the last layer) the stacked src nodes, the next layer's frontier on the host; in the
  /// last layer's wait the sinks also receive the input node ids.
  std::vector<DeviceMiniBatch> sample_device(std::span<const std::span<const int64_t>> batches_of_seeds,
                                             std::span<const uint64_t> streams, const BulkSamplerOptions& options,
                                             int64_t num_nodes, CudaStream stream,
                                             const BulkInputNodesSink& input_nodes) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace graphtier::sample::cuda
