#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>

#include "cuda_check.cuh"
#include "current_device.cuh"
#include "device_scratch.cuh"
#include "graphtier/core/device_memory.hpp"
#include "memory_cuda.hpp"

namespace graphtier::cuda {

void keep_pool_memory() {
  constexpr int kDevices = 64;
  static std::atomic<bool> kept[kDevices];
  int device = 0;
  GRAPHTIER_CUDA_CHECK(cudaGetDevice(&device));
  if (device >= kDevices || kept[device].load(std::memory_order_acquire)) return;
  cudaMemPool_t pool = nullptr;
  GRAPHTIER_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  const char* setting = std::getenv(kPoolKeepVariable);
  const auto keep = static_cast<uint64_t>(
      pool_release_threshold(device_memory(device).total_bytes, setting == nullptr ? "" : setting));
  GRAPHTIER_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, const_cast<uint64_t*>(&keep)));
  kept[device].store(true, std::memory_order_release);
}

void poison_if_asked(void* p, std::size_t bytes, cudaStream_t stream) {
  static const bool poison = std::getenv("GRAPHTIER_POISON_DEVICE_SCRATCH") != nullptr;
  if (poison && bytes > 0) GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(p, 0xA5, bytes, stream));
}

DeviceMemory device_memory(int device) {
  const CurrentDevice on_device(device);
  std::size_t free = 0, total = 0;
  GRAPHTIER_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return {static_cast<int64_t>(free), static_cast<int64_t>(total)};
}

void trim_pool(int device) {
  cudaMemPool_t pool = nullptr;
  GRAPHTIER_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  GRAPHTIER_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
}

void* allocate_pinned(std::size_t bytes) {
  void* ptr = nullptr;
  GRAPHTIER_CUDA_CHECK(cudaHostAlloc(&ptr, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  return ptr;
}

void free_pinned(void* ptr) noexcept { cudaFreeHost(ptr); }

void* allocate_device(std::size_t bytes, int device) {
  const CurrentDevice on_device(device);
  void* ptr = nullptr;
  GRAPHTIER_CUDA_CHECK(cudaMalloc(&ptr, bytes));
  return ptr;
}

void free_device(void* ptr, int device) noexcept {
  const CurrentDevice on_device(device, std::nothrow);
  cudaFree(ptr);
}

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

void synchronize(int device) {
  const CurrentDevice on_device(device);
  GRAPHTIER_CUDA_CHECK(cudaDeviceSynchronize());
}

void copy(void* dst, const void* src, std::size_t bytes) {
  GRAPHTIER_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
  // cudaMemcpy returns before a device-to-device copy has run (and a pageable host-to-device one
  // may return before its DMA has landed); the caller, or another stream, may use dst at once.
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

}  // namespace graphtier::cuda
