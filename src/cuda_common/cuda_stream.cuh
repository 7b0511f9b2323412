// The cudaStream_t behind the opaque CudaStream (graphtier/core/cuda_stream.hpp). Only included
// by .cu files.
#pragma once

#include <cuda_runtime.h>

#include "graphtier/core/cuda_stream.hpp"

namespace graphtier::cuda {

inline cudaStream_t native(CudaStream stream) noexcept { return static_cast<cudaStream_t>(stream.handle); }

}  // namespace graphtier::cuda
