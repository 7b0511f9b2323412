// A file opened for random reads by the read engine: O_DIRECT where the file system allows it.
#pragma once

#include <cstdint>
#include <string>

namespace graphtier::io {

/// Read-only file handle for the engine. Move-only; closes its descriptor on destruction.
///
/// O_DIRECT is used where the file system supports it: reads then bypass the page
/// cache, so a feature table larger than RAM costs no eviction of anything else, and every read
/// needs its offset, length and buffer aligned (the engine's row reads see to that). Where it is
/// not supported the file is read through the page cache with the same results.
class ReadFile {
 public:
  /// With `try_direct`, opens with O_DIRECT where the file system supports it (tmpfs before Linux
  /// 6.6 does not); without, reads go through the page cache (small or hot files). Throws IoError
  /// naming `path` if it cannot be opened or stat'ed.
  static ReadFile open(const std::string& path, bool try_direct = true);

  ReadFile(ReadFile&& other) noexcept;
  ReadFile& operator=(ReadFile&& other) noexcept;
  ReadFile(const ReadFile&) = delete;
  ReadFile& operator=(const ReadFile&) = delete;
  ~ReadFile();

  int fd() const noexcept { return fd_; }
  const std::string& path() const noexcept { return path_; }
  /// Size when opened; a file truncated later surfaces as IoError from the read that reaches past
  /// its end.
  uint64_t size() const noexcept { return size_; }
  bool direct() const noexcept { return direct_; }

 private:
  ReadFile(std::string path, int fd, uint64_t size, bool direct);

  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  bool direct_ = false;
};

}  // namespace graphtier::io
