#include <cuda_runtime.h>

#include <algorithm>

#include "cuda_check.cuh"
#include "cuda/copy_rows.cuh"

namespace graphtier::feature::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kWarp = 32;
constexpr int64_t kVector = 16;   // bytes per lane per load: one int4
constexpr int64_t kSegment = 128;  // the transaction size coalesced loads should fill

// One warp per row. Rows whose source, destination and size are 16-byte aligned move as int4:
// the warp's loads start at the 128-byte segment holding the row start (PyTorch-Direct's aligned
// access shift, §V-B of the mini-batch training survey: docs/references.md, Mini-batch training
// survey), so each warp-wide load covers whole segments and no PCIe or HBM transaction is split
// between two loads; lanes before the row start load nothing. Other rows (packed layouts with odd
// sizes) move as 4-byte words where all three allow it, else bytes.
__global__ void copy_rows_kernel(RowCopy c) {
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t first_warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int64_t num_warps = static_cast<int64_t>(gridDim.x) * blockDim.x / kWarp;
  for (int64_t r = first_warp; r < c.count; r += num_warps) {
    const int64_t src_row = c.src_rows != nullptr ? c.src_rows[r] : r;
    const int64_t dst_row = c.dst_rows != nullptr ? c.dst_rows[r] : r;
    const std::byte* src = c.src + src_row * c.src_pitch;
    std::byte* dst = c.dst + dst_row * c.dst_pitch;
    const auto s = reinterpret_cast<uintptr_t>(src);
    const auto d = reinterpret_cast<uintptr_t>(dst);
    const auto n = static_cast<uintptr_t>(c.row_bytes);
    if (((s | d | n) % kVector) == 0) {
      const uintptr_t base = s / kSegment * kSegment;
      const auto head = static_cast<int64_t>(s - base);  // a multiple of 16 below 128
      const int64_t span = head + c.row_bytes;
      for (int64_t off = static_cast<int64_t>(lane) * kVector; off < span; off += kWarp * kVector) {
        if (off < head) continue;
        const int4 v = *reinterpret_cast<const int4*>(base + static_cast<uintptr_t>(off));
        *reinterpret_cast<int4*>(d + static_cast<uintptr_t>(off - head)) = v;
      }
    } else if (((s | d | n) % 4) == 0) {
      const auto* src_words = reinterpret_cast<const uint32_t*>(src);
      auto* dst_words = reinterpret_cast<uint32_t*>(dst);
      for (int64_t w = lane; w < c.row_bytes / 4; w += kWarp) dst_words[w] = src_words[w];
    } else {
      for (int64_t b = lane; b < c.row_bytes; b += kWarp) dst[b] = src[b];
    }
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
