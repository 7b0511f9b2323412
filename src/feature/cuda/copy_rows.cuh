// One kernel for every row movement of the GPU tiers: dst[dst_rows[r]] = src[src_rows[r]] for
// r < count, rows of row_bytes at their own pitches. src may be device memory (hot tier, cache
// lines, staging, the output) or mapped pinned host memory (zero-copy reads of the host tier).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace graphtier::feature::cuda {

// One warp moves one row: lane `lane` (0-31) of the warp calls it with the same arguments. Rows
// whose source, destination and size are 16-byte aligned move as int4: the warp's loads start at
// the 128-byte segment holding the row start (PyTorch-Direct's aligned access shift, §V-B of the
// mini-batch training survey: docs/references.md, Mini-batch training survey), so each warp-wide
// load covers whole segments and no PCIe or HBM transaction is split between two loads; lanes
// before the row start load nothing. Other rows (packed layouts with odd sizes) move as 4-byte
// words where all three allow it, else bytes. Offsets are 64-bit: rows beyond 2^31 bytes of a
// table are addressed exactly.
__device__ __forceinline__ void warp_copy_row(const std::byte* src, std::byte* dst, int64_t row_bytes, int lane) {
  constexpr int kWarp = 32;
  constexpr int64_t kVector = 16;    // bytes per lane per load: one int4
  constexpr int64_t kSegment = 128;  // the transaction size coalesced loads should fill
  const auto s = reinterpret_cast<uintptr_t>(src);
  const auto d = reinterpret_cast<uintptr_t>(dst);
  const auto n = static_cast<uintptr_t>(row_bytes);
  if (((s | d | n) % kVector) == 0) {
    const uintptr_t base = s / kSegment * kSegment;
    const auto head = static_cast<int64_t>(s - base);  // a multiple of 16 below 128
    const int64_t span = head + row_bytes;
    // kUnroll loads per lane in flight before the first store (a 2 KiB row and its head in one
    // round): the stores could alias the loads as far as the compiler knows, so a load-store loop
    // would wait out one memory round trip per 512 bytes of the row.
    constexpr int kUnroll = 4;
    constexpr int64_t kRound = kWarp * kVector * kUnroll;
    for (int64_t first = static_cast<int64_t>(lane) * kVector; first < span; first += kRound) {
      int4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t off = first + u * kWarp * kVector;
        v[u] = off >= head && off < span ? *reinterpret_cast<const int4*>(base + static_cast<uintptr_t>(off))
                                         : make_int4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t off = first + u * kWarp * kVector;
        if (off >= head && off < span) *reinterpret_cast<int4*>(d + static_cast<uintptr_t>(off - head)) = v[u];
      }
    }
  } else if (((s | d | n) % 4) == 0) {
    const auto* src_words = reinterpret_cast<const uint32_t*>(src);
    auto* dst_words = reinterpret_cast<uint32_t*>(dst);
    for (int64_t w = lane; w < row_bytes / 4; w += kWarp) dst_words[w] = src_words[w];
  } else {
    for (int64_t b = lane; b < row_bytes; b += kWarp) dst[b] = src[b];
  }
}

// A warp moves rows a..a+count-1 whose sources lane j holds in `src` (lane j: row j; null: a row
// the warp leaves alone) to dst + j * row_bytes, several rows a round: rows that are whole 512-byte
// chunks (a warp-wide int4 load each) of at most 2 KiB, sources on 128-byte segments, dst on 16
// bytes, move kRowUnroll chunks per lane in flight, so 512 B rows four at a time and 1 KiB rows two
// (warp_copy_row keeps one row in flight). Returns false, having moved nothing, for other rows.
// Every lane of the warp calls it with the same dst, row_bytes and count.
__device__ __forceinline__ bool warp_copy_rows_packed(const std::byte* src, std::byte* dst, int64_t row_bytes,
                                                      int count, int lane) {
  constexpr int kWarp = 32;
  constexpr int64_t kVector = 16;
  constexpr int64_t kChunk = kWarp * kVector;  // 512 bytes: one warp-wide int4 load
  constexpr int kRowUnroll = 4;
  constexpr unsigned kAll = 0xffffffffu;
  const bool aligned = reinterpret_cast<uintptr_t>(src) % 128 == 0;
  if (row_bytes % kChunk != 0 || row_bytes > kRowUnroll * kChunk || reinterpret_cast<uintptr_t>(dst) % kVector != 0 ||
      !__all_sync(kAll, aligned)) {
    return false;
  }
  const int chunks = static_cast<int>(row_bytes / kChunk);  // 1..4
  const int per_round = kRowUnroll / chunks;                // rows a round: 4, 2, 1, 1
  for (int first = 0; first < count; first += per_round) {
    int4 v[kRowUnroll];
    const std::byte* from[kRowUnroll];
#pragma unroll
    for (int u = 0; u < kRowUnroll; ++u) {
      const int row = first + u / chunks;
      const auto s = reinterpret_cast<const std::byte*>(
          __shfl_sync(kAll, reinterpret_cast<unsigned long long>(src), row % kWarp));
      from[u] = u < per_round * chunks && row < count ? s : nullptr;
      v[u] = from[u] != nullptr ? *reinterpret_cast<const int4*>(from[u] + (u % chunks) * kChunk + lane * kVector)
                                : make_int4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kRowUnroll; ++u) {
      if (from[u] == nullptr) continue;
      const int row = first + u / chunks;
      *reinterpret_cast<int4*>(dst + row * row_bytes + (u % chunks) * kChunk + lane * kVector) = v[u];
    }
  }
  return true;
}

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
