// Making a device current for a scope. Only included by .cu files.
#pragma once

#include <cuda_runtime.h>

#include "cuda_check.cuh"

namespace graphtier::cuda {

/// Makes `device` current for the guard's life, then restores the calling thread's device: the
/// library's calls also run on threads that drive another GPU (a user's thread through Python, a
/// tensor's deleter, a loader's sampler), whose current device PyTorch reads from CUDA.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device) {
    GRAPHTIER_CUDA_CHECK(cudaGetDevice(&caller_));
    if (caller_ != device) GRAPHTIER_CUDA_CHECK(cudaSetDevice(device));
  }
  ~CurrentDevice() { cudaSetDevice(caller_); }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int caller_ = 0;
};

}  // namespace graphtier::cuda
