#include "host_tier.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"

namespace graphtier::feature {

HostTier::HostTier(const std::string& path, const graph::FeatureLayout& layout, int64_t begin, int64_t end,
                   bool pinned)
    : begin_(begin), end_(end), row_stride_(layout.row_stride) {
  GRAPHTIER_EXPECTS(0 <= begin && begin <= end, InvalidArgument, "host tier range [", begin, ", ", end, ") is empty");
  const auto bytes = static_cast<std::size_t>((end - begin) * row_stride_);
  if (bytes == 0) return;
  rows_ = Buffer(pinned ? MemoryKind::kPinned : MemoryKind::kHost, bytes);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) GRAPHTIER_THROW_ERRNO(path, ": cannot open for the host tier");
  // The last row of an unpadded table ends before its stride does.
  const uint64_t offset = static_cast<uint64_t>(begin) * static_cast<uint64_t>(row_stride_);
  const std::size_t file_bytes =
      bytes - static_cast<std::size_t>(row_stride_ - layout.row_bytes());
  try {
    // Sequential reads through the page cache once at start-up; the tier is then never reread.
    constexpr std::size_t kChunk = std::size_t{64} << 20;
    auto* dst = static_cast<std::byte*>(rows_.data());
    for (std::size_t done = 0; done < file_bytes; done += kChunk) {
      pread_exact(fd, dst + done, std::min(kChunk, file_bytes - done), offset + done, path);
    }
    posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(file_bytes), POSIX_FADV_DONTNEED);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

}  // namespace graphtier::feature
