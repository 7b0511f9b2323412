// Checked CUDA calls and stream-ordered device arrays for the sampler kernels.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <utility>

#include "memory_cuda.hpp"
#include "graphtier/sample/cuda_neighbor_sampler.hpp"

#define GRAPHTIER_SAMPLE_CUDA_CHECK(call) \
  ::graphtier::cuda::check(static_cast<int>(call), #call, __FILE__, __LINE__)

/// After a kernel launch: a bad configuration is reported here, not at the next unrelated call.
#define GRAPHTIER_SAMPLE_CHECK_LAUNCH(name) \
  ::graphtier::cuda::check(static_cast<int>(cudaGetLastError()), name " launch", __FILE__, __LINE__)

namespace graphtier::sample::cuda {

inline cudaStream_t as_cuda(CudaStream s) { return static_cast<cudaStream_t>(s.handle); }

/// Device memory from the stream-ordered allocator (cudaMallocAsync), freed in order on the same
/// stream when the last owner lets go: cheap enough to allocate per minibatch.
inline std::shared_ptr<void> allocate_async(std::size_t bytes, cudaStream_t stream) {
  void* ptr = nullptr;
  if (bytes == 0) return {};
  GRAPHTIER_SAMPLE_CUDA_CHECK(cudaMallocAsync(&ptr, bytes, stream));
  return std::shared_ptr<void>(ptr, [stream](void* p) { cudaFreeAsync(p, stream); });
}

/// A grow-only typed scratch array, reused across the layers of one call.
template <typename T>
class Scratch {
 public:
  explicit Scratch(cudaStream_t stream) : stream_(stream) {}
  T* get(int64_t count) {
    if (count > capacity_) {
      // Some headroom so that the next layer (usually larger) does not reallocate at once.
      capacity_ = count + count / 2;
      memory_ = allocate_async(static_cast<std::size_t>(capacity_) * sizeof(T), stream_);
    }
    return static_cast<T*>(memory_.get());
  }

 private:
  cudaStream_t stream_;
  std::shared_ptr<void> memory_;
  int64_t capacity_ = 0;
};

inline unsigned grid_for(int64_t work_items, int items_per_block) {
  // Grid-stride loops cover the rest; 65535 * 8 blocks keeps every SM of any current GPU busy.
  const int64_t blocks = (work_items + items_per_block - 1) / items_per_block;
  return static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8);
}

}  // namespace graphtier::sample::cuda
