#include "cuda/stream_cuda.hpp"

#include "cuda/cuda_util.cuh"

namespace graphtier::sample::cuda {

CudaStream create_stream(int device) {
  GRAPHTIER_SAMPLE_CUDA_CHECK(cudaSetDevice(device));
  cudaStream_t s = nullptr;
  GRAPHTIER_SAMPLE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return CudaStream{s};
}

void destroy_stream(CudaStream stream, int device) noexcept {
  if (stream.handle == nullptr) return;
  cudaSetDevice(device);
  cudaStreamDestroy(as_cuda(stream));
}

}  // namespace graphtier::sample::cuda
