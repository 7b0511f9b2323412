// External two-pass bucket permutation of the feature table, for tables larger than the memory
// budget (the plan is in include/graphtier/prep/feature_permute.hpp).
//
// Bucket b holds new ids [b * R, (b + 1) * R) and lives in region [b * R, (b + 1) * R) rows of one
// scratch file, so no bucket needs a descriptor of its own. Rows reach a bucket in ascending old
// id, so a row's place in its region ("slot") is known before any I/O: a stable counting sort of
// the old ids by bucket.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <new>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/log.hpp"
#include "feature_rows.hpp"

namespace graphtier::prep::impl {
namespace {

/// Per-bucket write buffers are flushed in pieces of at most this size: large enough for
/// sequential disk writes, small enough that hundreds of buckets fit the budget.
constexpr int64_t kMaxBucketBufferBytes = int64_t{8} << 20;

constexpr int64_t kDirectAlignment = static_cast<int64_t>(kDirectIoAlignment);

int64_t round_up(int64_t bytes, int64_t to) { return (bytes + to - 1) / to * to; }

/// The scratch file, unlinked however the permutation ends: written through one descriptor
/// (O_DIRECT if possible, see OutputFile), read back through another (buffered, any alignment).
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& path) : reader_(path, O_RDWR | O_CREAT | O_TRUNC, 0600) {
    try {
      writer_fd_ = open_maybe_direct(path, O_WRONLY, 0, direct_);
    } catch (...) {
      ::unlink(path.c_str());
      throw;
    }
  }
  ~ScratchFile() {
    ::close(writer_fd_);
    ::unlink(reader_.path().c_str());
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  int reader() const noexcept { return reader_.get(); }
  int writer() const noexcept { return writer_fd_; }
  /// Writes through writer() must be aligned to kDirectIoAlignment.
  bool direct() const noexcept { return direct_; }
  const std::string& path() const noexcept { return reader_.path(); }

 private:
  FileDescriptor reader_;
  int writer_fd_ = -1;
  bool direct_ = false;
};

/// slot[n]: position of new id n's row within its bucket region, in order of arrival (ascending
/// old id). Per chunk of old ids: count by bucket, scan across chunks, then place.
std::vector<int64_t> bucket_slots(const Permutation& perm, int64_t rows_per_bucket, int64_t buckets,
                                  ThreadPool& pool) {
  const int64_t n = perm.size();
  // At most ~256 chunks, so the count table stays small even with many buckets.
  const int64_t grain = std::max<int64_t>(int64_t{1} << 16, (n + 255) / 256);
  const int64_t chunks = (n + grain - 1) / grain;
  std::vector<int64_t> next(static_cast<std::size_t>(chunks * buckets), 0);
  pool.parallel_for(0, n, grain, [&](int64_t lo, int64_t hi) {
    int64_t* count = next.data() + (lo / grain) * buckets;
    for (int64_t old = lo; old < hi; ++old) ++count[perm.old_to_new[old] / rows_per_bucket];
  });
  for (int64_t b = 0; b < buckets; ++b) {
    int64_t running = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t count = next[c * buckets + b];
      next[c * buckets + b] = running;
      running += count;
    }
  }
  std::vector<int64_t> slot(static_cast<std::size_t>(n));
  pool.parallel_for(0, n, grain, [&](int64_t lo, int64_t hi) {
    int64_t* cursor = next.data() + (lo / grain) * buckets;
    for (int64_t old = lo; old < hi; ++old) {
      const int64_t id = perm.old_to_new[old];
      slot[id] = cursor[id / rows_per_bucket]++;
    }
  });
  return slot;
}

/// Throws IoError (ENOSPC) saying how much is needed and how much is free when `bytes` of scratch
/// do not fit the space `dir`'s file system has free for unprivileged writers, so that a
/// permutation that cannot finish fails before writing instead of after filling the disk.
void require_scratch_space(const std::string& path, const std::string& dir, int64_t bytes) {
  const int64_t available = free_space_bytes(dir);
  if (available < 0) return;  // no answer: the writes themselves will tell
  const auto free_bytes = static_cast<uint64_t>(available);
  if (static_cast<uint64_t>(bytes) <= free_bytes) return;
  throw IoError(ENOSPC, detail::concat(path, ": the feature buckets need ", format_bytes(static_cast<double>(bytes)),
                                       " of scratch space but the file system of ", dir, " has ",
                                       format_bytes(static_cast<double>(free_bytes)), " free"));
}

struct Layout {
  int64_t num_rows;
  int64_t stride;
  int64_t rows_per_bucket;  // R
  int64_t buckets;          // K
  /// Regions start at aligned offsets, with room to pad the last write of a bucket to alignment.
  int64_t region_offset(int64_t bucket) const {
    return bucket * round_up(rows_per_bucket * stride, kDirectAlignment);
  }
};

/// Pass 1: sequential reads of the source (the next block read while this one is distributed),
/// each row appended to its bucket's buffer. A bucket's rows form one byte stream in its region:
/// a full buffer writes its longest aligned prefix and keeps the rest (under 4 KiB) for the next
/// write, and the last write of a bucket is padded to alignment inside the region's slack.
void distribute(int source_fd, const std::string& source_path, const ScratchFile& scratch, const Layout& layout,
                const Permutation& perm, int64_t budget, ThreadPool& pool) {
  const int64_t n = layout.num_rows, stride = layout.stride, buckets = layout.buckets;
  const int64_t block_rows = io_rows(budget, stride);
  const int64_t buffer_rows = std::clamp<int64_t>(std::min(budget / 2 / buckets, kMaxBucketBufferBytes) / stride, 1,
                                                  layout.rows_per_bucket);
  // Room for buffer_rows rows after a carried remainder of less than one alignment unit.
  const int64_t capacity = round_up(buffer_rows * stride, kDirectAlignment) + kDirectAlignment;
  const auto buffers = allocate_direct_io_buffer(static_cast<std::size_t>(buckets * capacity));
  std::vector<int64_t> filled(static_cast<std::size_t>(buckets), 0);   // bytes in the buffer
  std::vector<int64_t> written(static_cast<std::size_t>(buckets), 0);  // bytes in the region
  const auto flush = [&](int64_t b, bool last) {
    std::byte* buffer = buffers.get() + b * capacity;
    const int64_t bytes = last ? round_up(filled[b], kDirectAlignment) : filled[b] / kDirectAlignment * kDirectAlignment;
    const int64_t write_bytes = scratch.direct() ? bytes : (last ? filled[b] : bytes);
    pwrite_exact(scratch.writer(), buffer, static_cast<std::size_t>(write_bytes),
                 static_cast<uint64_t>(layout.region_offset(b) + written[b]), scratch.path());
    if (last) return;
    std::memmove(buffer, buffer + bytes, static_cast<std::size_t>(filled[b] - bytes));
    written[b] += bytes;
    filled[b] -= bytes;
  };
  std::unique_ptr<std::byte[]> blocks[2] = {allocate_bytes(block_rows * stride), allocate_bytes(block_rows * stride)};
  const auto read_block = [&](int64_t first, std::byte* dst) {
    const int64_t rows = std::min(block_rows, n - first);
    pread_exact(source_fd, dst, static_cast<std::size_t>(rows * stride), static_cast<uint64_t>(first * stride),
                source_path);
  };
  // Each group of buckets is filled by one thread, which scans the whole block but copies only its
  // rows: buckets never share a writer, and each still receives rows in ascending old id.
  const int64_t groups = std::min<int64_t>(buckets, pool.size());
  ::posix_fadvise(source_fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  Progress progress("features: pass 1/2 (to buckets)", n * stride, "B");
  std::future<void> pending = std::async(std::launch::async, read_block, 0, blocks[0].get());
  for (int64_t first = 0, block = 0; first < n; first += block_rows, ++block) {
    pending.get();
    const std::byte* rows_in = blocks[block % 2].get();
    const int64_t rows = std::min(block_rows, n - first);
    if (first + rows < n) {
      pending = std::async(std::launch::async, read_block, first + rows, blocks[(block + 1) % 2].get());
    }
    pool.parallel_for(0, groups, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t g = lo; g < hi; ++g) {
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t b = perm.old_to_new[first + r] / layout.rows_per_bucket;
          if (b % groups != g) continue;
          if (filled[b] + stride > capacity) flush(b, false);
          std::memcpy(buffers.get() + b * capacity + filled[b], rows_in + r * stride, static_cast<std::size_t>(stride));
          filled[b] += stride;
        }
      }
    });
    // The source is read once: drop its pages rather than push other data out of the page cache.
    ::posix_fadvise(source_fd, first * stride, rows * stride, POSIX_FADV_DONTNEED);
    progress.add(rows * stride);
  }
  if (pending.valid()) pending.get();
  pool.parallel_for(0, buckets, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      if (filled[b] > 0) flush(b, true);
    }
  });
  progress.finish();
}

/// Pass 2: one bucket at a time into memory, its disk blocks released, rows written in new order.
void place(const ScratchFile& scratch, const Layout& layout, std::span<const int64_t> slot, OutputFile& out,
           int64_t budget, ThreadPool& pool) {
  const int64_t n = layout.num_rows, stride = layout.stride;
  const auto bucket = allocate_bytes(layout.rows_per_bucket * stride);
  const int64_t window_rows = std::max<int64_t>(2, io_rows(budget, stride));
  const auto window = allocate_bytes(window_rows * stride);
  Progress progress("features: pass 2/2 (place)", n * stride, "B");
  for (int64_t b = 0; b < layout.buckets; ++b) {
    const int64_t first = b * layout.rows_per_bucket;
    const int64_t rows = std::min(layout.rows_per_bucket, n - first);
    parallel_read(scratch.reader(), scratch.path(), bucket.get(), rows * stride, layout.region_offset(b), pool);
    // Frees the region's disk blocks now, so scratch space shrinks as the output grows. Best
    // effort: a file system without hole punching keeps them until the file is unlinked.
    ::fallocate(scratch.reader(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, layout.region_offset(b), rows * stride);
    write_gathered(bucket.get(), slot, first, first + rows, stride, window.get(), window_rows, out, pool, progress);
  }
  progress.finish();
}

}  // namespace

FeaturePermuteReport permute_external(int fd, const std::string& source_path, int64_t row_stride,
                                      const Permutation& perm, OutputFile& out, int64_t budget,
                                      const std::string& scratch_dir, ThreadPool& pool) {
  Layout layout;
  layout.num_rows = perm.size();
  layout.stride = row_stride;
  layout.rows_per_bucket = std::max<int64_t>(1, budget / row_stride);
  layout.buckets = (layout.num_rows + layout.rows_per_bucket - 1) / layout.rows_per_bucket;
  log_info("features: ", format_bytes(static_cast<double>(layout.num_rows * row_stride)), " exceed the memory budget of ",
           format_bytes(static_cast<double>(budget)), "; permuting through ", layout.buckets, " buckets in ",
           scratch_dir);
  FeaturePermuteReport report;
  report.external = true;
  report.buckets = layout.buckets;
  report.bytes = layout.num_rows * row_stride;
  // Pass 1 fills every region before pass 2 frees any.
  const std::string scratch_path = scratch_dir + "/features.buckets";
  require_scratch_space(scratch_path, scratch_dir, layout.region_offset(layout.buckets));
  const std::vector<int64_t> slot = bucket_slots(perm, layout.rows_per_bucket, layout.buckets, pool);
  ScratchFile scratch(scratch_path);
  auto start = std::chrono::steady_clock::now();
  distribute(fd, source_path, scratch, layout, perm, budget, pool);
  report.pass1_seconds = seconds_since(start);
  start = std::chrono::steady_clock::now();
  place(scratch, layout, slot, out, budget, pool);
  report.pass2_seconds = seconds_since(start);
  return report;
}

}  // namespace graphtier::prep::impl
