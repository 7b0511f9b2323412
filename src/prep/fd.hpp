// An owned file descriptor for the prep module's positional I/O (core/file.hpp's pread_exact and
// pwrite_exact take raw descriptors).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "graphtier/core/error.hpp"

namespace graphtier::prep::impl {

class Fd {
 public:
  Fd(const std::string& path, int flags, mode_t mode = 0644) : path_(path) {
    fd_ = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    if (fd_ < 0) GRAPHTIER_THROW_ERRNO(path, ": cannot open: ", std::strerror(errno));
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const noexcept { return fd_; }
  const std::string& path() const noexcept { return path_; }

  int64_t size() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) GRAPHTIER_THROW_ERRNO(path_, ": cannot stat: ", std::strerror(errno));
    return static_cast<int64_t>(st.st_size);
  }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace graphtier::prep::impl
