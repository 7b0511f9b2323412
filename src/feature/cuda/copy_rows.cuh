// One kernel for every row movement of the GPU tiers: dst[dst_rows[r]] = src[src_rows[r]] for
// r < count, rows of row_bytes at their own pitches. src may be device memory (hot tier, cache
// lines, staging, the output) or mapped pinned host memory (zero-copy reads of the host tier).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace graphtier::feature::cuda {

struct RowCopy {
  const std::byte* src = nullptr;
  int64_t src_pitch = 0;
  const int64_t* src_rows = nullptr;  // device array; null: row r
  std::byte* dst = nullptr;
  int64_t dst_pitch = 0;
  const int64_t* dst_rows = nullptr;  // device array; null: row r
  int64_t row_bytes = 0;
  int64_t count = 0;
};

/// Queues the copy on `stream` (nothing when count is 0); the launch is checked.
void launch_copy_rows(const RowCopy& copy, cudaStream_t stream);

}  // namespace graphtier::feature::cuda
