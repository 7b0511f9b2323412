#include <cuda_runtime.h>

#include <algorithm>

#include "cuda_check.cuh"
#include "cuda/copy_rows.cuh"

namespace graphtier::feature::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kWarp = 32;

__global__ void copy_rows_kernel(RowCopy c) {
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t first_warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int64_t num_warps = static_cast<int64_t>(gridDim.x) * blockDim.x / kWarp;
  for (int64_t r = first_warp; r < c.count; r += num_warps) {
    const int64_t src_row = c.src_rows != nullptr ? c.src_rows[r] : r;
    const int64_t dst_row = c.dst_rows != nullptr ? c.dst_rows[r] : r;
    warp_copy_row(c.src + src_row * c.src_pitch, c.dst + dst_row * c.dst_pitch, c.row_bytes, lane);
  }
}

}  // namespace

void launch_copy_rows(const RowCopy& copy, cudaStream_t stream) {
  if (copy.count == 0) return;
  constexpr int64_t kWarpsPerBlock = kThreads / kWarp;
  // Enough blocks to cover the rows, capped: the grid-stride loop takes the rest.
  const int64_t blocks = std::min<int64_t>((copy.count + kWarpsPerBlock - 1) / kWarpsPerBlock, 65535);
  copy_rows_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(copy);
  GRAPHTIER_CUDA_CHECK_LAUNCH("copy_rows_kernel");
}

}  // namespace graphtier::feature::cuda
