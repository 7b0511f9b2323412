// Helpers of the sample module's CUDA backends: checked calls and launches, stream-ordered
// scratch memory, CUB's two-call protocol, grid-stride loops. Only included by .cu files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "memory_cuda.hpp"

#define GRAPHTIER_CUDA_CHECK(call) ::graphtier::cuda::check(static_cast<int>(call), #call, __FILE__, __LINE__)

/// for (i = this thread's first item; i < n; i += all threads of the grid)
#define GRAPHTIER_GRID_STRIDE(i, n)                                                          \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

namespace graphtier::sample::cuda {

inline constexpr int kThreads = 256;

inline unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, int64_t{1} << 20));
}

/// Checks the launch just made (bad configuration, missing kernel image).
inline void check_launch(const char* kernel) {
  ::graphtier::cuda::check(static_cast<int>(cudaGetLastError()), kernel, __FILE__, __LINE__);
}

/// Stream-ordered scratch memory: freed on the stream, so it may be released while kernels that
/// use it are still queued.
template <typename T>
class Scratch {
 public:
  Scratch() = default;
  Scratch(std::size_t n, cudaStream_t stream) : stream_(stream) {
    void* p = nullptr;
    GRAPHTIER_CUDA_CHECK(cudaMallocAsync(&p, std::max<std::size_t>(n, 1) * sizeof(T), stream));
    ptr_ = static_cast<T*>(p);
  }
  ~Scratch() {
    if (ptr_ != nullptr) cudaFreeAsync(ptr_, stream_);
  }
  Scratch(Scratch&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)), stream_(other.stream_) {}
  Scratch& operator=(Scratch&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(stream_, other.stream_);
    return *this;
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  T* get() const noexcept { return ptr_; }

 private:
  T* ptr_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

/// Runs a CUB device algorithm: the size query, then the call with its temporary storage.
template <typename Fn>
void run_cub(cudaStream_t stream, Fn&& fn) {
  std::size_t bytes = 0;
  GRAPHTIER_CUDA_CHECK(fn(nullptr, bytes));
  Scratch<unsigned char> temp(bytes, stream);
  GRAPHTIER_CUDA_CHECK(fn(temp.get(), bytes));
}

template <typename T>
T read_one(const T* device_value, cudaStream_t stream) {
  T value{};
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(&value, device_value, sizeof(T), cudaMemcpyDeviceToHost, stream));
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(stream));
  return value;
}

/// The fewest low bits that hold every value in [0, max_value]: radix sorts skip the rest.
inline int bits_for(int64_t max_value) {
  int bits = 1;
  while (bits < 63 && (int64_t{1} << bits) <= max_value) ++bits;
  return bits;
}

}  // namespace graphtier::sample::cuda
