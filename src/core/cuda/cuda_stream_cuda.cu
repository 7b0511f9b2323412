#include "cuda/cuda_stream_cuda.hpp"

#include "cuda_check.cuh"
#include "current_device.cuh"
#include "cuda_stream.cuh"

namespace graphtier::cuda {

CudaStream create_stream(int device) {
  const CurrentDevice on_device(device);
  cudaStream_t s = nullptr;
  GRAPHTIER_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return CudaStream{s};
}

void destroy_stream(CudaStream stream, int device) noexcept {
  if (stream.handle == nullptr) return;
  const CurrentDevice on_device(device, std::nothrow);
  cudaStreamDestroy(native(stream));
}

}  // namespace graphtier::cuda
