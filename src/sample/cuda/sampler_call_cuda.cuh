// What the GPU neighbour samplers' calls share (neighbor_sampler_cuda.cu, temporal_sampler_cuda.cu):
// the lease of a pinned staging buffer, the hub list's append, the scan of row counts. Only
// included by .cu files.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <exception>
#include <utility>
#include <vector>

#include "cuda/cuda_util.cuh"

#include "cuda/neighbor_sampler_cuda.hpp"

namespace graphtier::sample::cuda {

/// A pinned buffer of the pool for one call, given back when the call ends (after its last
/// synchronisation, so no copy still reads or writes it).
class StagingLease {
 public:
  StagingLease(PinnedStagingPool& pool, std::size_t bytes, cudaStream_t stream)
      : pool_(pool), buffer_(pool.take(bytes)), stream_(stream) {}
  ~StagingLease() {
    // Thrown out of the call: a copy queued on the stream may still use the buffer.
    if (std::uncaught_exceptions() > 0) cudaStreamSynchronize(stream_);
    pool_.give_back(buffer_);
  }
  StagingLease(const StagingLease&) = delete;
  StagingLease& operator=(const StagingLease&) = delete;
  std::byte* data() const { return static_cast<std::byte*>(buffer_.first); }

 private:
  PinnedStagingPool& pool_;
  std::pair<void*, std::size_t> buffer_;
  cudaStream_t stream_;
};

constexpr std::size_t align16(std::size_t n) { return (n + 15) / 16 * 16; }

/// Blocks of the hub kernels (grid-stride over the hub list, whose length only the device knows).
inline constexpr int64_t kHubBlocks = 1024;

/// Appends to a device list: the slot it takes.
__device__ __forceinline__ int64_t append(int64_t* counter) {
  return static_cast<int64_t>(atomicAdd(reinterpret_cast<unsigned long long*>(counter), 1ull));
}

/// Inclusive prefix sum of `in` into `out` (n > 0) on `stream`, CUB's temporary storage in `temp`.
void inclusive_sum(const int64_t* in, int64_t* out, int64_t n, DeviceScratch<unsigned char>& temp,
                   cudaStream_t stream);

struct LayerCounts;  // compact_cuda.cuh

/// The minibatch's one synchronisation on `s`: every layer's sizes in one copy (device_counts[0 ..
/// layers] into the pinned host_counts, layers = edge_positions.size()), then each block's sizes
/// and, with `edge_ids`, its edges' positions (edge_positions[l]); counted in batch.host_syncs.
void read_layer_sizes(DeviceMiniBatch& batch, const LayerCounts* device_counts, LayerCounts* host_counts,
                      const std::vector<int64_t*>& edge_positions, bool edge_ids, cudaStream_t s);

}  // namespace graphtier::sample::cuda
