// The check of cuSPARSE calls, raising the same typed errors as GRAPHTIER_CUDA_CHECK. Only
// included by .cu files of targets that link cuSPARSE.
#pragma once

#include <cusparse.h>

#include "graphtier/core/error.hpp"

namespace graphtier::cuda {

/// OutOfMemory for CUSPARSE_STATUS_ALLOC_FAILED, Unsupported when this GPU or build cannot run the
/// operation, DeviceError otherwise; the message carries the call, file, line and cuSPARSE's text.
inline void check_cusparse(cusparseStatus_t status, const char* call, const char* file, int line) {
  if (status == CUSPARSE_STATUS_SUCCESS) return;
  const std::string message =
      detail::concat(file, ":", line, ": ", call, " failed: ", cusparseGetErrorString(status), " (cuSPARSE status ",
                     static_cast<int>(status), ")");
  switch (status) {
    case CUSPARSE_STATUS_ALLOC_FAILED: throw OutOfMemory(message);
    case CUSPARSE_STATUS_ARCH_MISMATCH:
    case CUSPARSE_STATUS_NOT_SUPPORTED: throw Unsupported(message);
    default: throw DeviceError(message);
  }
}

}  // namespace graphtier::cuda

#define GRAPHTIER_CUSPARSE_CHECK(call) ::graphtier::cuda::check_cusparse((call), #call, __FILE__, __LINE__)
