// CUDA allocators behind graphtier::Buffer; only compiled into CUDA builds.
#pragma once

#include <cstddef>

#include "graphtier/core/device_memory.hpp"

namespace graphtier::cuda {

void* allocate_pinned(std::size_t bytes);
void free_pinned(void* ptr) noexcept;
void* allocate_device(std::size_t bytes, int device);
void free_device(void* ptr, int device) noexcept;
int device_count() noexcept;
/// cudaMemGetInfo of `device`.
DeviceMemory device_memory(int device);
/// cudaMemPoolTrimTo(the default pool of `device`, 0).
void trim_pool(int device);
/// Waits for all work on `device` (cudaDeviceSynchronize).
void synchronize(int device);
/// cudaMemcpy with cudaMemcpyDefault (unified addressing picks the direction); the bytes are in
/// dst when it returns, whatever the direction.
void copy(void* dst, const void* src, std::size_t bytes);

}  // namespace graphtier::cuda
