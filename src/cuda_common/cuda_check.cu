#include "cuda_check.cuh"

#include "graphtier/core/error.hpp"

namespace graphtier::cuda {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  // A sticky error (a kernel fault) stays set for every later call; the others are cleared so that
  // the next unrelated call does not report this one again.
  cudaGetLastError();
  const std::string message = detail::concat(file, ":", line, ": ", call, " failed: ", cudaGetErrorString(status),
                                             " (", cudaGetErrorName(status), ")");
  switch (status) {
    case cudaErrorMemoryAllocation: throw OutOfMemory(message);
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorDevicesUnavailable:
    case cudaErrorNotSupported:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion: throw Unsupported(message);
    default: throw DeviceError(message);
  }
}

}  // namespace graphtier::cuda
