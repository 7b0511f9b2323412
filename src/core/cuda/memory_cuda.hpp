// CUDA allocators behind graphtier::Buffer; only compiled into CUDA builds.
#pragma once

#include <cstddef>

namespace graphtier::cuda {

void* allocate_pinned(std::size_t bytes);
void free_pinned(void* ptr) noexcept;
void* allocate_device(std::size_t bytes, int device);
void free_device(void* ptr, int device) noexcept;
int device_count() noexcept;

/// Throws graphtier::IoError-free CudaError (a std::runtime_error) naming the call on failure.
void check(int status, const char* call, const char* file, int line);

}  // namespace graphtier::cuda
