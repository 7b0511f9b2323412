// Batched positional reads with a fixed number in flight, and feature-row reads on top of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "graphtier/core/file.hpp"
#include "graphtier/io/io_stats.hpp"
#include "graphtier/io/read_device.hpp"
#include "graphtier/io/read_file.hpp"

namespace graphtier::io {

/// Read `length` bytes at `offset` of `file` into `dst`. For a file opened with O_DIRECT
/// (file->direct()), offset, length and dst must be multiples of 512 bytes.
struct ReadRequest {
  const ReadFile* file = nullptr;
  uint64_t offset = 0;
  std::size_t length = 0;
  std::byte* dst = nullptr;
};

/// Rows of a row-major table on disk: row i occupies bytes [i * row_stride, i * row_stride +
/// row_bytes). Matches graph::FeatureLayout (row_stride, row_bytes()) with num_rows = num_nodes.
struct RowLayout {
  int64_t num_rows = 0;
  int64_t row_stride = 0;
  int64_t row_bytes = 0;
};

/// The I/O loop of one thread: keeps depth() reads in flight on a device handed in, resubmits
/// the remainder of short reads, retries EAGAIN and EINTR a bounded number of times, and turns
/// every other failure into IoError naming the file and the offset. Not thread-safe: one engine
/// (and one device) per thread.
class ReadEngine {
 public:
  /// Rows are read as whole blocks of this size (the O_DIRECT alignment that covers every
  /// device in use); a read covers one or more adjacent blocks, at most max_read_bytes().
  static constexpr std::size_t kBlockBytes = kDirectIoAlignment;
  static constexpr std::size_t kDefaultMaxReadBytes = std::size_t{64} << 10;

  /// `device` must outlive the engine. `depth` <= 0 uses device.max_in_flight().
  explicit ReadEngine(ReadDevice& device, int depth = 0, std::size_t max_read_bytes = kDefaultMaxReadBytes);
  ~ReadEngine();
  ReadEngine(const ReadEngine&) = delete;
  ReadEngine& operator=(const ReadEngine&) = delete;

  ReadDevice& device() noexcept { return device_; }
  int depth() const noexcept { return depth_; }
  /// 1 <= depth <= device().max_in_flight(), else InvalidArgument.
  void set_depth(int depth);
  std::size_t max_read_bytes() const noexcept { return max_read_bytes_; }

  /// Performs every request; returns when all have completed. On a failure the reads already in
  /// flight are waited for (their buffers stay the caller's) and the first error is thrown:
  /// IoError naming the file and offset (the errno, or end of file before `length` bytes).
  void read(std::span<const ReadRequest> requests);

  /// Copies rows ids[k] of `file` (laid out as `layout`) to out[k * out_row_pitch, +row_bytes),
  /// for every k; ids may repeat and come in any order. Rows sharing or adjoining a block are
  /// served by one read (up to max_read_bytes()), and each block is read once per call. Every id
  /// is checked before any read: an id outside [0, num_rows) throws OutOfRange. `out` is host
  /// memory of at least (ids.size() - 1) * out_row_pitch + row_bytes bytes.
  void read_rows(const ReadFile& file, const RowLayout& layout, std::span<const int64_t> ids,
                 std::span<std::byte> out, std::size_t out_row_pitch);
  /// The same with row ids[k] copied to dsts[k] (row_bytes bytes each, none null, none
  /// overlapping): a destination aligned for the file that a row of whole blocks fills is read
  /// into in place.
  void read_rows(const ReadFile& file, const RowLayout& layout, std::span<const int64_t> ids,
                 std::span<std::byte* const> dsts);

  /// The last read()/read_rows() call, and all calls since construction or reset_stats().
  const IoStats& last_batch() const noexcept { return last_batch_; }
  const IoStats& total() const noexcept { return total_; }
  /// Clears last_batch() and sets total() to `total` (calibrate restores the caller's totals).
  void reset_stats(const IoStats& total = {}) {
    last_batch_ = IoStats{};
    total_ = total;
  }

 private:
  struct RowRef;
  struct Extent;
  template <typename DstOf>
  void read_rows_to(const ReadFile& file, const RowLayout& layout, std::span<const int64_t> ids, DstOf dst_of);

  ReadDevice& device_;
  int depth_;
  std::size_t max_read_bytes_;
  IoStats last_batch_;
  IoStats total_;
  // Reused between calls so that a batch allocates nothing once the sizes have been seen.
  std::vector<RowRef> row_refs_;
  std::vector<Extent> extents_;
  DirectIoBuffer staging_{nullptr, &std::free};
  std::size_t staging_bytes_ = 0;
};

}  // namespace graphtier::io
