#include "graphtier/io/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"

namespace graphtier::io {

ReadFile ReadFile::open(const std::string& path, bool try_direct) {
  bool direct = false;
  int fd = -1;
  if (try_direct) {
    fd = open_maybe_direct(path, O_RDONLY, 0, direct);
  } else if ((fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC)) < 0) {
    GRAPHTIER_THROW_ERRNO(path, ": cannot open: ", std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw IoError(err, detail::concat(path, ": cannot stat: ", std::strerror(err)));
  }
  return ReadFile(path, fd, static_cast<uint64_t>(st.st_size), direct);
}

ReadFile::ReadFile(std::string path, int fd, uint64_t size, bool direct)
    : path_(std::move(path)), fd_(fd), size_(size), direct_(direct) {}

ReadFile::ReadFile(ReadFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      size_(other.size_),
      direct_(other.direct_) {}

ReadFile& ReadFile::operator=(ReadFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    direct_ = other.direct_;
  }
  return *this;
}

ReadFile::~ReadFile() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace graphtier::io
