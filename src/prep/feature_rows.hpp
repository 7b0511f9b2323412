// Shared pieces of the two feature permutation paths (feature_permute.cpp, feature_permute_external.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "graphtier/core/file.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/prep/feature_permute.hpp"

namespace graphtier::prep::impl {

/// Largest I/O block: big enough for sequential disk speed, small next to any budget that matters.
inline constexpr int64_t kMaxIoBytes = int64_t{64} << 20;

/// Rows per I/O block: about budget / 8, capped at kMaxIoBytes, at least one row.
int64_t io_rows(int64_t budget, int64_t row_stride);

/// Uninitialised bytes (the buffers are always overwritten before being read).
inline std::unique_ptr<std::byte[]> allocate_bytes(int64_t bytes) {
  return std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(bytes));
}

/// Reads bytes [offset, offset + bytes) of `fd` into `dst` with parallel preads of up to
/// kMaxIoBytes each.
void parallel_read(int fd, const std::string& path, std::byte* dst, int64_t bytes, int64_t offset, ThreadPool& pool);

/// Appends output rows [first, last) to `out`, row n being table row slot[n] (table holds rows of
/// `row_stride` bytes), gathered in parallel into one half of `window` (window_rows >= 2 rows)
/// while the other half is being written.
void write_gathered(const std::byte* table, std::span<const int64_t> slot, int64_t first, int64_t last,
                    int64_t row_stride, std::byte* window, int64_t window_rows, OutputFile& out, ThreadPool& pool,
                    Progress& progress);

FeaturePermuteReport permute_external(int fd, const std::string& source_path, int64_t row_stride,
                                      const Permutation& perm, OutputFile& out, int64_t budget,
                                      const std::string& scratch_dir, ThreadPool& pool);

}  // namespace graphtier::prep::impl
