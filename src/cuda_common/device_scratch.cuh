// Stream-ordered device memory for the kernels' temporaries. Only included by .cu files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "cuda_check.cuh"

namespace graphtier::cuda {

/// Sets the release threshold of the current device's default memory pool, once per device and
/// process, to pool_release_threshold (graphtier/core/device_memory.hpp: a quarter of the
/// device's memory unless GRAPHTIER_POOL_KEEP says otherwise): by default the pool hands all its
/// memory back to the driver at every synchronisation, and re-mapping it then costs each
/// minibatch; kept without a bound (as before), a peak stays mapped for the process's life. Every
/// stream-ordered allocation below calls it.
void keep_pool_memory();

/// With GRAPHTIER_POISON_DEVICE_SCRATCH set (read once; gpu-check's test phase sets it), fills
/// fresh stream-ordered memory with the byte 0xA5 on `stream`: a kernel that reads scratch it never
/// wrote then sees the same wrong values whatever the pool recycled (a huge negative int64, a NaN
/// double), so such a bug fails every run instead of the runs after some other test.
void poison_if_asked(void* p, std::size_t bytes, cudaStream_t stream);

/// Device memory from the stream-ordered allocator (cudaMallocAsync), freed in order on the same
/// stream when the last owner lets go: cheap enough to allocate per minibatch, and safe to release
/// while kernels that use it are still queued. Empty (null) for 0 bytes.
inline std::shared_ptr<void> allocate_async(std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return {};
  keep_pool_memory();
  void* ptr = nullptr;
  GRAPHTIER_CUDA_CHECK(cudaMallocAsync(&ptr, bytes, stream));
  poison_if_asked(ptr, bytes, stream);
  return std::shared_ptr<void>(ptr, [stream](void* p) { cudaFreeAsync(p, stream); });
}

/// A typed scratch array in stream-ordered device memory, freed on its stream. Either sized once
/// (`DeviceScratch(n, stream)`: at least one element, so get() is never null) or grown on demand
/// and reused across the layers of one call (`DeviceScratch(stream)`, then `grow`). Move-only.
/// DeviceScratch::grow's headroom above a request: half of it, at most this many bytes.
inline constexpr std::size_t kMaxHeadroomBytes = std::size_t{64} << 20;

template <typename T>
class DeviceScratch {
 public:
  DeviceScratch() = default;
  explicit DeviceScratch(cudaStream_t stream) : stream_(stream) {}
  DeviceScratch(std::size_t n, cudaStream_t stream) : stream_(stream) { reallocate(std::max<std::size_t>(n, 1)); }
  ~DeviceScratch() { release(); }
  DeviceScratch(DeviceScratch&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)),
        capacity_(std::exchange(other.capacity_, 0)),
        stream_(other.stream_) {}
  DeviceScratch& operator=(DeviceScratch&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(capacity_, other.capacity_);
    std::swap(stream_, other.stream_);
    return *this;
  }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;

  T* get() const noexcept { return ptr_; }
  std::size_t capacity() const noexcept { return capacity_; }

  /// At least `count` elements (their contents are not kept when it grows); null while nothing
  /// was ever asked for.
  T* grow(int64_t count) {
    const auto n = static_cast<std::size_t>(count);
    // Some headroom, so that the next layer (usually larger) does not reallocate at once; capped,
    // so that a scratch of gigabytes (a fanout -1 layer) does not hold half as much again unused.
    if (n > capacity_) reallocate(n + std::min(n / 2, kMaxHeadroomBytes / sizeof(T)));
    return ptr_;
  }

 private:
  void reallocate(std::size_t n) {
    keep_pool_memory();
    void* p = nullptr;
    GRAPHTIER_CUDA_CHECK(cudaMallocAsync(&p, n * sizeof(T), stream_));
    poison_if_asked(p, n * sizeof(T), stream_);
    release();
    ptr_ = static_cast<T*>(p);
    capacity_ = n;
  }
  void release() noexcept {
    if (ptr_ != nullptr) cudaFreeAsync(ptr_, stream_);
    ptr_ = nullptr;
    capacity_ = 0;
  }

  T* ptr_ = nullptr;
  std::size_t capacity_ = 0;
  cudaStream_t stream_ = nullptr;
};

}  // namespace graphtier::cuda
