// The one check of CUDA runtime calls and kernel launches: a failed call throws the typed error
// (graphtier/core/error.hpp) that says what the caller can do about it. Only included by .cu files.
#pragma once

#include <cuda_runtime.h>

namespace graphtier::cuda {

/// Throws for `status` (not cudaSuccess): OutOfMemory for cudaErrorMemoryAllocation, Unsupported
/// when the machine lacks what the call needs (no device or driver, an ordinal beyond the devices,
/// no kernel image for this GPU), DeviceError otherwise. The message carries `call`, `file`,
/// `line` and cudaGetErrorString.
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, call, file, line);
}

}  // namespace graphtier::cuda

/// Checks a CUDA runtime call (or a CUB algorithm, which returns cudaError_t).
#define GRAPHTIER_CUDA_CHECK(call) ::graphtier::cuda::check((call), #call, __FILE__, __LINE__)

/// After every <<<>>>: a bad configuration or a missing kernel image is reported at the launch,
/// not at the next unrelated call. `kernel` is a string literal naming it.
#define GRAPHTIER_CUDA_CHECK_LAUNCH(kernel) \
  ::graphtier::cuda::check(cudaGetLastError(), kernel " launch", __FILE__, __LINE__)
