// Helpers of the sample module's CUDA backends: launch geometry, grid-stride loops, CUB's two-call
// protocol, over the shared checked calls and stream-ordered scratch of
// src/cuda_common. Only included by .cu files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cuda_check.cuh"
#include "cuda_stream.cuh"
#include "device_scratch.cuh"

/// for (i = this thread's first item; i < n; i += all threads of the grid)
#define GRAPHTIER_GRID_STRIDE(i, n)                                                          \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

namespace graphtier::sample::cuda {

using ::graphtier::cuda::allocate_async;
using ::graphtier::cuda::DeviceScratch;
using ::graphtier::cuda::native;

inline constexpr int kThreads = 256;

/// Blocks of kThreads for n items, one item per thread, capped (grid-stride loops cover the rest).
inline unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, int64_t{1} << 20));
}

/// Blocks for `work_items` at `items_per_block` each (a warp per item: kThreads / 32).
inline unsigned grid_for(int64_t work_items, int items_per_block) {
  // Grid-stride loops cover the rest; 65535 * 8 blocks keeps every SM of any current GPU busy.
  const int64_t blocks = (work_items + items_per_block - 1) / items_per_block;
  return static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8);
}

/// Runs a CUB device algorithm: the size query, then the call with its temporary storage.
template <typename Fn>
void run_cub(cudaStream_t stream, Fn&& fn) {
  std::size_t bytes = 0;
  GRAPHTIER_CUDA_CHECK(fn(nullptr, bytes));
  DeviceScratch<unsigned char> temp(bytes, stream);
  GRAPHTIER_CUDA_CHECK(fn(temp.get(), bytes));
}

/// The fewest low bits that hold every value in [0, max_value]: radix sorts skip the rest.
inline int bits_for(int64_t max_value) {
  int bits = 1;
  while (bits < 63 && (int64_t{1} << bits) <= max_value) ++bits;
  return bits;
}

}  // namespace graphtier::sample::cuda
