#include "graphtier/io/read_engine.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "graphtier/core/error.hpp"
#include "io_loop.hpp"

namespace graphtier::io {

namespace {

// One read transfers at most this much: a Linux read returns at most 0x7ffff000 bytes, and the
// device interface carries lengths as 32-bit counts.
constexpr std::size_t kMaxRequestBytes = std::size_t{1} << 30;
constexpr uint64_t kDirectAlignment = 512;

bool aligned(uint64_t value, uint64_t alignment) { return value % alignment == 0; }

}  // namespace

// A row to copy: its byte offset in the file and its position in the output.
struct ReadEngine::RowRef {
  uint64_t offset;
  int64_t out_index;
};

// One read of whole blocks serving row_refs_[first_ref, end_ref).
struct ReadEngine::Extent {
  uint64_t offset;
  uint32_t length;
  uint32_t needed;  // bytes up to the end of the last row in it
  std::size_t first_ref;
  std::size_t end_ref;
};

ReadEngine::ReadEngine(ReadDevice& device, int depth, std::size_t max_read_bytes)
    : device_(device), depth_(depth <= 0 ? device.max_in_flight() : depth), max_read_bytes_(max_read_bytes) {
  set_depth(depth_);
  GRAPHTIER_EXPECTS(max_read_bytes >= kBlockBytes && max_read_bytes % kBlockBytes == 0 &&
                        max_read_bytes <= kMaxRequestBytes,
                    InvalidArgument, "max_read_bytes must be a multiple of ", kBlockBytes, " in [", kBlockBytes,
                    ", ", kMaxRequestBytes, "], got ", max_read_bytes);
}

ReadEngine::~ReadEngine() = default;

void ReadEngine::set_depth(int depth) {
  GRAPHTIER_EXPECTS(depth >= 1 && depth <= device_.max_in_flight(), InvalidArgument, "queue depth must be in [1, ",
                    device_.max_in_flight(), "] (the device's limit), got ", depth);
  depth_ = depth;
}

void ReadEngine::read(std::span<const ReadRequest> requests) {
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const ReadRequest& r = requests[i];
    GRAPHTIER_EXPECTS(r.file != nullptr && r.dst != nullptr, InvalidArgument, "read request ", i,
                      " has no file or no destination");
    GRAPHTIER_EXPECTS(r.length > 0 && r.length <= kMaxRequestBytes, InvalidArgument, r.file->path(), ": read request ",
                      i, " of ", r.length, " bytes; lengths must be in [1, ", kMaxRequestBytes, "]");
    GRAPHTIER_EXPECTS(!r.file->direct() || (aligned(r.offset, kDirectAlignment) && aligned(r.length, kDirectAlignment) &&
                                            aligned(reinterpret_cast<uintptr_t>(r.dst), kDirectAlignment)),
                      InvalidArgument, r.file->path(), ": O_DIRECT read request ", i, " (offset ", r.offset,
                      ", length ", r.length, ") needs offset, length and buffer aligned to ", kDirectAlignment,
                      " bytes");
  }
  last_batch_ = IoStats{};
  const auto start = [&](std::size_t i, int) {
    const ReadRequest& r = requests[i];
    return LoopRead{r.file, r.offset, static_cast<uint32_t>(r.length), static_cast<uint32_t>(r.length), r.dst};
  };
  try {
    run_reads(device_, depth_, requests.size(), start, [](std::size_t, int) {}, last_batch_);
  } catch (...) {
    total_ += last_batch_;
    throw;
  }
  total_ += last_batch_;
}

namespace {

/// The checks of a row layout, which come before any of the output's.
void check_row_layout(const ReadFile& file, const RowLayout& layout) {
  const int64_t row_bytes = layout.row_bytes;
  GRAPHTIER_EXPECTS(row_bytes >= 1 && static_cast<uint64_t>(row_bytes) <= kMaxRequestBytes / 2, InvalidArgument,
                    file.path(), ": row size must be in [1, ", kMaxRequestBytes / 2, "] bytes, got ", row_bytes);
  GRAPHTIER_EXPECTS(layout.row_stride >= row_bytes && layout.num_rows >= 0, InvalidArgument, file.path(),
                    ": row stride ", layout.row_stride, " is below the row size ", row_bytes,
                    " or the row count is negative (", layout.num_rows, ")");
}

}  // namespace

void ReadEngine::read_rows(const ReadFile& file, const RowLayout& layout, std::span<const int64_t> ids,
                           std::span<std::byte> out, std::size_t out_row_pitch) {
  check_row_layout(file, layout);
  GRAPHTIER_EXPECTS(out_row_pitch >= static_cast<std::size_t>(layout.row_bytes), InvalidArgument,
                    "output row pitch ", out_row_pitch, " is below the row size ", layout.row_bytes);
  GRAPHTIER_EXPECTS(ids.empty() || out.size() >= (ids.size() - 1) * out_row_pitch + static_cast<std::size_t>(layout.row_bytes),
                    InvalidArgument, "output of ", out.size(), " bytes cannot hold ", ids.size(), " rows of ",
                    layout.row_bytes, " bytes at a pitch of ", out_row_pitch);
  read_rows_to(file, layout, ids, [&](int64_t k) { return out.data() + static_cast<std::size_t>(k) * out_row_pitch; });
}

void ReadEngine::read_rows(const ReadFile& file, const RowLayout& layout, std::span<const int64_t> ids,
                           std::span<std::byte* const> dsts) {
  check_row_layout(file, layout);
  GRAPHTIER_EXPECTS(dsts.size() == ids.size(), InvalidArgument, dsts.size(), " destinations for ", ids.size(), " rows");
  for (std::size_t k = 0; k < dsts.size(); ++k) {
    GRAPHTIER_EXPECTS(dsts[k] != nullptr, InvalidArgument, "row ", k, " has no destination");
  }
  read_rows_to(file, layout, ids, [&](int64_t k) { return dsts[static_cast<std::size_t>(k)]; });
}

template <typename DstOf>
void ReadEngine::read_rows_to(const ReadFile& file, const RowLayout& layout, std::span<const int64_t> ids,
                              DstOf dst_of) {
  const int64_t row_bytes = layout.row_bytes;  // check_row_layout passed
  for (std::size_t k = 0; k < ids.size(); ++k) {
    GRAPHTIER_EXPECTS(ids[k] >= 0 && ids[k] < layout.num_rows, OutOfRange, file.path(), ": row id ", ids[k],
                      " at position ", k, " is outside [0, ", layout.num_rows, ")");
  }

  // Sorting by offset puts rows that share or adjoin a block next to each other, so one pass
  // builds reads that cover them once each: duplicates and neighbours cost no extra I/O.
  row_refs_.resize(ids.size());
  for (std::size_t k = 0; k < ids.size(); ++k) {
    row_refs_[k] = RowRef{static_cast<uint64_t>(ids[k]) * static_cast<uint64_t>(layout.row_stride),
                          static_cast<int64_t>(k)};
  }
  std::sort(row_refs_.begin(), row_refs_.end(), [](const RowRef& a, const RowRef& b) { return a.offset < b.offset; });
  const auto block_down = [](uint64_t x) { return x / kBlockBytes * kBlockBytes; };
  const auto block_up = [](uint64_t x) { return (x + kBlockBytes - 1) / kBlockBytes * kBlockBytes; };
  // A row that straddles blocks needs its own span even when that is more than max_read_bytes_.
  const std::size_t slot_bytes =
      std::max<std::size_t>(max_read_bytes_, block_up(static_cast<uint64_t>(row_bytes)) + kBlockBytes);
  extents_.clear();
  uint64_t extent_end = 0;  // block-aligned end of the extent being built
  for (std::size_t r = 0; r < row_refs_.size(); ++r) {
    const uint64_t row_begin = row_refs_[r].offset;
    const uint64_t row_end = row_begin + static_cast<uint64_t>(row_bytes);
    const uint64_t first_block = block_down(row_begin);
    const uint64_t last_block_end = block_up(row_end);
    if (!extents_.empty() && first_block <= extent_end && last_block_end - extents_.back().offset <= slot_bytes) {
      Extent& e = extents_.back();
      extent_end = std::max(extent_end, last_block_end);
      e.length = static_cast<uint32_t>(extent_end - e.offset);
      e.needed = std::max(e.needed, static_cast<uint32_t>(row_end - e.offset));
      e.end_ref = r + 1;
    } else {
      extent_end = last_block_end;
      extents_.push_back(Extent{first_block, static_cast<uint32_t>(last_block_end - first_block),
                                static_cast<uint32_t>(row_end - first_block), r, r + 1});
    }
  }

  const std::size_t staging_needed = slot_bytes * static_cast<std::size_t>(depth_);
  if (staging_bytes_ < staging_needed) {
    staging_ = allocate_direct_io_buffer(staging_needed);
    staging_bytes_ = staging_needed;
  }
  std::byte* const staging = staging_.get();
  // An extent of one row that fills its blocks exactly (block-aligned rows of whole blocks) is read
  // straight into its output row when that is aligned for the file: no copy on the loop's thread,
  // whose time is the read rate's bound.
  const auto in_place = [&](const Extent& e) -> std::byte* {
    if (e.end_ref - e.first_ref != 1 || e.length != static_cast<uint64_t>(row_bytes)) return nullptr;
    std::byte* dst = dst_of(row_refs_[e.first_ref].out_index);
    return !file.direct() || aligned(reinterpret_cast<uintptr_t>(dst), kDirectAlignment) ? dst : nullptr;
  };
  const auto start = [&](std::size_t i, int slot) {
    const Extent& e = extents_[i];
    std::byte* dst = in_place(e);
    return LoopRead{&file, e.offset, e.length, e.needed,
                    dst != nullptr ? dst : staging + static_cast<std::size_t>(slot) * slot_bytes};
  };
  const auto finish = [&](std::size_t i, int slot) {
    const Extent& e = extents_[i];
    if (in_place(e) != nullptr) return;
    const std::byte* block = staging + static_cast<std::size_t>(slot) * slot_bytes;
    for (std::size_t r = e.first_ref; r < e.end_ref; ++r) {
      std::memcpy(dst_of(row_refs_[r].out_index), block + (row_refs_[r].offset - e.offset),
                  static_cast<std::size_t>(row_bytes));
    }
  };
  last_batch_ = IoStats{};
  try {
    run_reads(device_, depth_, extents_.size(), start, finish, last_batch_);
  } catch (...) {
    total_ += last_batch_;
    throw;
  }
  total_ += last_batch_;
}

}  // namespace graphtier::io
