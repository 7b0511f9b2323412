#include <cuda_runtime.h>

#include "cuda_check.cuh"
#include "memory_cuda.hpp"

namespace graphtier::cuda {

void* allocate_pinned(std::size_t bytes) {
  void* ptr = nullptr;
  GRAPHTIER_CUDA_CHECK(cudaHostAlloc(&ptr, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  return ptr;
}

void free_pinned(void* ptr) noexcept { cudaFreeHost(ptr); }

void* allocate_device(std::size_t bytes, int device) {
  GRAPHTIER_CUDA_CHECK(cudaSetDevice(device));
  void* ptr = nullptr;
  GRAPHTIER_CUDA_CHECK(cudaMalloc(&ptr, bytes));
  return ptr;
}

void free_device(void* ptr, int device) noexcept {
  cudaSetDevice(device);
  cudaFree(ptr);
}

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

void synchronize(int device) {
  GRAPHTIER_CUDA_CHECK(cudaSetDevice(device));
  GRAPHTIER_CUDA_CHECK(cudaDeviceSynchronize());
}

void copy(void* dst, const void* src, std::size_t bytes) {
  GRAPHTIER_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
  // cudaMemcpy returns before a device-to-device copy has run (and a pageable host-to-device one
  // may return before its DMA has landed); the caller, or another stream, may use dst at once.
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

}  // namespace graphtier::cuda
