// The storage tier: rows read from features.bin through the io module's read engine (O_DIRECT,
// a fixed number of reads in flight, short reads and EAGAIN retried, EIO named).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "graphtier/graph/dataset.hpp"
#include "graphtier/io/read_engine.hpp"
#include "graphtier/io/read_file.hpp"

namespace graphtier::feature {

class StorageTier {
 public:
  /// `device` must outlive the tier. depth 0: calibrated on the file when it is large enough to
  /// measure (>= 64 MiB), else the device's limit.
  StorageTier(const std::string& path, const graph::FeatureLayout& layout, int64_t num_nodes,
              io::ReadDevice& device, int depth);

  /// Row ids[k] to dsts[k] (row_bytes each); ids already validated. Returns the engine's stats.
  const io::IoStats& read(std::span<const int64_t> ids, std::span<std::byte* const> dsts);

  int depth() const noexcept { return engine_.depth(); }
  const io::ReadFile& file() const noexcept { return file_; }

 private:
  io::ReadFile file_;
  io::RowLayout layout_;
  io::ReadEngine engine_;
};

}  // namespace graphtier::feature
