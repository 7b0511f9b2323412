// Making a device current for a scope. Only included by .cu files.
#pragma once

#include <cuda_runtime.h>

#include <new>

#include "cuda_check.cuh"

namespace graphtier::cuda {

/// Makes `device` current for the guard's life, then restores the calling thread's device: the
/// library's calls also run on threads that drive another GPU (a user's thread through Python, a
/// tensor's deleter, a loader's sampler), whose current device PyTorch reads from CUDA. Every
/// function of the library that needs a device current takes one of these, never a bare
/// cudaSetDevice.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device) {
    GRAPHTIER_CUDA_CHECK(cudaGetDevice(&caller_));
    if (caller_ != device) GRAPHTIER_CUDA_CHECK(cudaSetDevice(device));
  }
  /// For the release paths (noexcept): a failed query or switch is ignored, and the release then
  /// runs on whatever device is current (CUDA frees memory on its own device anyway).
  CurrentDevice(int device, std::nothrow_t) noexcept {
    if (cudaGetDevice(&caller_) != cudaSuccess) {
      (void)cudaGetLastError();
      caller_ = device;
    }
    if (caller_ != device && cudaSetDevice(device) != cudaSuccess) (void)cudaGetLastError();
  }
  ~CurrentDevice() { cudaSetDevice(caller_); }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int caller_ = 0;
};

}  // namespace graphtier::cuda
