// Front door of the feature permutation: checks the source, picks the in-memory path when the
// table fits the budget, else the external bucket path (feature_permute_external.cpp).
#include "graphtier/prep/feature_permute.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/memory.hpp"
#include "feature_rows.hpp"

namespace graphtier::prep {
namespace impl {

int64_t io_rows(int64_t budget, int64_t row_stride) {
  const int64_t bytes = std::min(budget / 8, kMaxIoBytes);
  return std::max<int64_t>(1, bytes / row_stride);
}

void parallel_read(int fd, const std::string& path, std::byte* dst, int64_t bytes, int64_t offset, ThreadPool& pool) {
  pool.parallel_for(0, bytes, kMaxIoBytes, [&](int64_t lo, int64_t hi) {
    pread_exact(fd, dst + lo, static_cast<std::size_t>(hi - lo), static_cast<uint64_t>(offset + lo), path);
  });
}

void write_gathered(const std::byte* table, std::span<const int64_t> slot, int64_t first, int64_t last,
                    int64_t row_stride, std::byte* window, int64_t window_rows, OutputFile& out, ThreadPool& pool,
                    Progress& progress) {
  const auto stride = static_cast<std::size_t>(row_stride);
  // The window's two halves take turns: the pool gathers into one while the other is written.
  GRAPHTIER_EXPECTS(window_rows >= 2, InvalidArgument, "the gather window needs two rows, got ", window_rows);
  const int64_t half_rows = window_rows / 2;
  std::byte* const halves[2] = {window, window + half_rows * row_stride};
  std::future<void> pending;  // the write in flight; waited for before its half is reused
  int turn = 0;
  for (int64_t w = first; w < last; w += half_rows, turn ^= 1) {
    const int64_t rows = std::min(half_rows, last - w);
    std::byte* const half = halves[turn];
    pool.parallel_for(0, rows, 4096, [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) std::memcpy(half + r * row_stride, table + slot[w + r] * row_stride, stride);
    });
    // Writes stay in order: the previous one finishes before this one starts.
    if (pending.valid()) pending.get();
    pending = std::async(std::launch::async, [&out, &progress, half, rows, row_stride] {
      out.write(half, static_cast<std::size_t>(rows * row_stride));
      progress.add(rows * row_stride);
    });
  }
  if (pending.valid()) pending.get();
}

}  // namespace impl

namespace {

FeaturePermuteReport permute_in_memory(int fd, const std::string& path, int64_t row_stride, const Permutation& perm,
                                       OutputFile& out, int64_t budget, ThreadPool& pool) {
  const int64_t n = perm.size();
  const int64_t bytes = n * row_stride;
  FeaturePermuteReport report;
  report.bytes = bytes;
  auto start = std::chrono::steady_clock::now();
  const auto table = impl::allocate_bytes(bytes);
  {
    Progress progress("features: read", bytes, "B");
    // Blocks of kMaxIoBytes in parallel: page-cache copies use every core, a disk sees large reads.
    for (int64_t at = 0; at < bytes; at += impl::kMaxIoBytes * pool.size()) {
      const int64_t len = std::min(impl::kMaxIoBytes * pool.size(), bytes - at);
      impl::parallel_read(fd, path, table.get() + at, len, at, pool);
      progress.add(len);
    }
    progress.finish();
  }
  report.pass1_seconds = seconds_since(start);
  start = std::chrono::steady_clock::now();
  const int64_t window_rows = std::max<int64_t>(2, impl::io_rows(budget, row_stride));
  const auto window = impl::allocate_bytes(window_rows * row_stride);
  Progress progress("features: permute", bytes, "B");
  impl::write_gathered(table.get(), perm.new_to_old, 0, n, row_stride, window.get(), window_rows, out, pool, progress);
  progress.finish();
  report.pass2_seconds = seconds_since(start);
  return report;
}

}  // namespace

int64_t default_memory_budget() {
  return std::min(physical_memory_bytes() / 4, int64_t{1} << 30);
}

FeaturePermuteReport permute_feature_rows(const std::string& source_path, int64_t row_stride, const Permutation& perm,
                                          OutputFile& out, const FeaturePermuteOptions& options, ThreadPool& pool) {
  GRAPHTIER_EXPECTS(row_stride > 0, InvalidArgument, "feature row stride must be positive, got ", row_stride);
  GRAPHTIER_EXPECTS(options.memory_budget >= 0, InvalidArgument, "memory budget cannot be negative, got ",
                    options.memory_budget);
  const int64_t budget = options.memory_budget > 0 ? options.memory_budget : default_memory_budget();
  const FileDescriptor source(source_path, O_RDONLY);
  const int64_t bytes = perm.size() * row_stride;
  if (source.size() < bytes) {
    throw FormatError(source_path, detail::concat("holds ", source.size(), " bytes, expected ", bytes, " (",
                                                  perm.size(), " rows of ", row_stride, " bytes)"));
  }
  if (bytes <= budget) return permute_in_memory(source.get(), source_path, row_stride, perm, out, budget, pool);
  GRAPHTIER_EXPECTS(!options.scratch_dir.empty(), InvalidArgument, "the feature table (", bytes,
                    " bytes) exceeds the memory budget (", budget, " bytes) and no scratch directory was given");
  return impl::permute_external(source.get(), source_path, row_stride, perm, out, budget, options.scratch_dir, pool);
}

}  // namespace graphtier::prep
