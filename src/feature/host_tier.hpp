// The static host tier: rows [begin, end) of features.bin held in host memory, page-locked when
// a GPU is present so that GPU threads can read it directly and DMA copies need no bounce.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "graphtier/core/memory.hpp"
#include "graphtier/graph/dataset.hpp"

namespace graphtier::feature {

class HostTier {
 public:
  HostTier() = default;
  /// Loads rows [begin, end) (their full row_stride, as on disk) from `path`. Throws IoError.
  HostTier(const std::string& path, const graph::FeatureLayout& layout, int64_t begin, int64_t end, bool pinned);

  int64_t begin() const noexcept { return begin_; }
  int64_t end() const noexcept { return end_; }
  bool contains(int64_t id) const noexcept { return id >= begin_ && id < end_; }
  int64_t row_stride() const noexcept { return row_stride_; }
  const std::byte* row(int64_t id) const noexcept {
    return static_cast<const std::byte*>(rows_.data()) + static_cast<std::size_t>((id - begin_) * row_stride_);
  }
  const Buffer& buffer() const noexcept { return rows_; }

 private:
  int64_t begin_ = 0;
  int64_t end_ = 0;
  int64_t row_stride_ = 0;
  Buffer rows_;
};

}  // namespace graphtier::feature
