#include "cuda/cuda_stream_cuda.hpp"

#include "cuda_check.cuh"
#include "cuda_stream.cuh"

namespace graphtier::cuda {

CudaStream create_stream(int device) {
  GRAPHTIER_CUDA_CHECK(cudaSetDevice(device));
  cudaStream_t s = nullptr;
  GRAPHTIER_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return CudaStream{s};
}

void destroy_stream(CudaStream stream, int device) noexcept {
  if (stream.handle == nullptr) return;
  cudaSetDevice(device);
  cudaStreamDestroy(native(stream));
}

}  // namespace graphtier::cuda
