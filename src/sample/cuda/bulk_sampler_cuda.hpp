// CUDA backend of bulk sampling (bulk_sampler.hpp): the matrices live on one GPU; each layer reads
// GraphSAGE's rows of P in place (they are A's rows) or builds LADIES' P by a sorted gather of the
// squares' rows, draws each row with a thread block (bulk_rows_cuda.cuh over the shared row ops,
// bulk_row_ops.hpp) and extracts LADIES' blocks one thread per entry. Plain C++ header; CUDA
// builds only.
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

/// Thread-safe: each call (each layer of a call) stages its copies in a pinned arena of its own,
/// taken from a pool and given back after its last copy. Synchronisation budget per layer:
/// exactly one (the copy of the results, or in the device form of the counts and the next
/// frontier; P, the LADIES kept sets and the output sizes stay on the device); no cudaMalloc or
/// cudaFree (stream-ordered temporaries), no pageable copies.
class BulkDevice {
 public:
  /// Copies A (and the LADIES squares) to `device`. Throws Unsupported for 2^31 nodes or more
  /// (32-bit column ids).
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
