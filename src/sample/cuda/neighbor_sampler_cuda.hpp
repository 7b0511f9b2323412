// The CUDA entry points behind the front door of GPU neighbour sampling
// (src/sample/cuda_neighbor_sampler.cpp). Plain C++; CUDA builds only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/sample/cuda_neighbor_sampler.hpp"

namespace graphtier::sample::cuda {

/// Pinned host buffers reused across minibatches (the seeds' upload and the sizes' read-back): a
/// call takes one for its duration, so there are as many as calls ever ran at once (one per
/// thread and stream), and none is allocated in steady state. Thread-safe.
class PinnedStagingPool {
 public:
  PinnedStagingPool() = default;
  ~PinnedStagingPool();
  PinnedStagingPool(const PinnedStagingPool&) = delete;
  PinnedStagingPool& operator=(const PinnedStagingPool&) = delete;

  /// A buffer of at least `bytes`, the caller's until it gives it back.
  std::pair<void*, std::size_t> take(std::size_t bytes);
  void give_back(std::pair<void*, std::size_t> buffer) noexcept;
  /// Buffers allocated so far (for tests).
  int64_t allocations() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<void*, std::size_t>> free_;
  int64_t allocations_ = 0;
};

std::shared_ptr<PinnedStagingPool> make_staging_pool();

/// CudaNeighborSampler::device_bytes_bound: nbr::call_device_bytes for these options, each layer
/// bounded by `layer_fanouts` (typed::layer_fanout_bound of a typed graph's `relations` relations).
int64_t device_bytes_bound(const NeighborSamplerOptions& options, std::span<const int64_t> layer_fanouts,
                           int relations, int64_t num_seeds, int64_t num_nodes, int64_t num_edges);

/// The layer loop on the GPU; inputs already validated. `fanout_table`: relation_fanout_table's
/// [layers * max(1, relations)] for the topology's relations.
DeviceMiniBatch sample_device(const DeviceTopology::State& topology, const NeighborSamplerOptions& options,
                              std::span<const int64_t> fanout_table, std::span<const int64_t> seeds, uint64_t stream,
                              CudaStream cuda_stream, PinnedStagingPool& staging, const InputNodesSink& input_nodes);

/// Temporal sampling (temporal.hpp) on the GPU: the layer loop of temporal_sampler_cuda.cu over an
/// untyped topology with State::temporal; inputs already validated. `fanouts`: one per layer.
DeviceMiniBatch sample_temporal_device(const DeviceTopology::State& topology, const NeighborSamplerOptions& options,
                                       std::span<const int64_t> fanouts, std::span<const int64_t> seeds,
                                       std::span<const int64_t> seed_times, uint64_t stream, CudaStream cuda_stream,
                                       PinnedStagingPool& staging, const InputNodesSink& input_nodes);

/// CudaNeighborSampler::device_bytes_bound of a temporal topology: temporal::call_device_bytes.
int64_t temporal_device_bytes_bound(const NeighborSamplerOptions& options, std::span<const int64_t> fanouts,
                                    int64_t num_seeds, int64_t num_nodes, int64_t num_edges);

/// Queues a copy of `bytes` from device memory to the host after the work queued on `stream` (no
/// wait).
void copy_to_host(void* dst, const void* src, std::size_t bytes, CudaStream stream, int device);

/// The same for `count` elements of T.
template <typename T>
void copy_to_host(T* dst, const T* src, int64_t count, CudaStream stream, int device) {
  copy_to_host(static_cast<void*>(dst), static_cast<const void*>(src), static_cast<std::size_t>(count) * sizeof(T),
               stream, device);
}

/// Waits for `stream`.
void synchronize(CudaStream stream, int device);

/// For the GPU tests: portable_log(x[i]) and es_key(seed, layer_stream, edges[i], w[i]) computed
/// by a kernel on `device` (the host compares them bit for bit with its own). Synchronous.
void device_log_and_keys(std::span<const double> x, uint64_t seed, uint64_t layer_stream,
                         std::span<const int64_t> edges, std::span<const float> w, int device, std::vector<double>& logs,
                         std::vector<double>& keys);

}  // namespace graphtier::sample::cuda
