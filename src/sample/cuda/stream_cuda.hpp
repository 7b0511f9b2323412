// Streams the sampler owns (OwnedCudaStream, cuda_neighbor_sampler.hpp). Plain C++.
#pragma once

#include "graphtier/sample/cuda_neighbor_sampler.hpp"

namespace graphtier::sample::cuda {

/// A new cudaStreamNonBlocking stream on `device`.
CudaStream create_stream(int device);

/// Destroys a stream from create_stream; work queued on it still completes.
void destroy_stream(CudaStream stream, int device) noexcept;

}  // namespace graphtier::sample::cuda
