// The CUDA calls behind OwnedCudaStream (graphtier/core/cuda_stream.hpp). Plain C++; CUDA builds
// only.
#pragma once

#include "graphtier/core/cuda_stream.hpp"

namespace graphtier::cuda {

/// A new cudaStreamNonBlocking stream on `device`.
CudaStream create_stream(int device);

/// Destroys a stream from create_stream (nothing for the default stream); work queued on it still
/// completes.
void destroy_stream(CudaStream stream, int device) noexcept;

}  // namespace graphtier::cuda
