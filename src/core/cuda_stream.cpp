// Front door of OwnedCudaStream: the Unsupported answer of a build or machine without CUDA; the
// CUDA calls are in cuda/cuda_stream_cuda.cu.
#include "graphtier/core/cuda_stream.hpp"

#include <utility>

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#if GRAPHTIER_WITH_CUDA
#include "cuda/cuda_stream_cuda.hpp"
#endif

namespace graphtier {

OwnedCudaStream::OwnedCudaStream(int device) : device_(device) {
#if GRAPHTIER_WITH_CUDA
  GRAPHTIER_EXPECTS(cuda_available(), Unsupported, "OwnedCudaStream: no CUDA device is visible");
  stream_ = cuda::create_stream(device);
#else
  throw Unsupported("OwnedCudaStream: graphtier was built without CUDA (configure with the 'cuda' preset)");
#endif
}

OwnedCudaStream::~OwnedCudaStream() { release(); }

OwnedCudaStream::OwnedCudaStream(OwnedCudaStream&& other) noexcept
    : stream_(std::exchange(other.stream_, CudaStream{})), device_(other.device_) {}

OwnedCudaStream& OwnedCudaStream::operator=(OwnedCudaStream&& other) noexcept {
  if (this != &other) {
    release();
    stream_ = std::exchange(other.stream_, CudaStream{});
    device_ = other.device_;
  }
  return *this;
}

void OwnedCudaStream::release() noexcept {
#if GRAPHTIER_WITH_CUDA
  cuda::destroy_stream(stream_, device_);
#endif
  stream_ = CudaStream{};
}

}  // namespace graphtier
