#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "memory_cuda.hpp"
#include "graphtier/core/error.hpp"

namespace graphtier::cuda {

void check(int status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw std::runtime_error(detail::concat(file, ":", line, ": ", call, " failed: ",
                                          cudaGetErrorString(static_cast<cudaError_t>(status))));
}

#define GRAPHTIER_CUDA_CHECK(call) ::graphtier::cuda::check(static_cast<int>(call), #call, __FILE__, __LINE__)

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
