#include "graphtier/core/file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <cstring>
#include <utility>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"

namespace graphtier {

struct Checksum::State {
  XXH3_state_t state;
};

Checksum::Checksum() : state_(std::make_unique<State>()) { XXH3_64bits_reset(&state_->state); }
Checksum::~Checksum() = default;
Checksum::Checksum(Checksum&&) noexcept = default;
Checksum& Checksum::operator=(Checksum&&) noexcept = default;

void Checksum::update(const void* data, std::size_t bytes) { XXH3_64bits_update(&state_->state, data, bytes); }

std::string Checksum::hex() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(XXH3_64bits_digest(&state_->state)));
  return buf;
}

namespace {

int open_or_throw(const std::string& path, int flags, mode_t mode = 0) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) GRAPHTIER_THROW_ERRNO(path, ": cannot open: ", std::strerror(errno));
  return fd;
}

}  // namespace

FileDescriptor::FileDescriptor(const std::string& path, int flags, unsigned mode)
    : path_(path), fd_(open_or_throw(path, flags, static_cast<mode_t>(mode))) {}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

int64_t FileDescriptor::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) GRAPHTIER_THROW_ERRNO(path_, ": cannot stat: ", std::strerror(errno));
  return static_cast<int64_t>(st.st_size);
}

std::string checksum_file(const std::string& path, Progress* progress) {
  const int fd = open_or_throw(path, O_RDONLY);
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  constexpr std::size_t kBlock = std::size_t{8} << 20;
  std::vector<std::byte> buf(kBlock);
  Checksum sum;
  uint64_t offset = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buf.data(), kBlock, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw IoError(err, detail::concat(path, ": read failed at offset ", offset, ": ", std::strerror(err)));
    }
    if (n == 0) break;
    sum.update(buf.data(), static_cast<std::size_t>(n));
    // Drop what was read from the page cache: checksumming a file larger than RAM must not evict
    // everything else.
    posix_fadvise(fd, static_cast<off_t>(offset), n, POSIX_FADV_DONTNEED);
    offset += static_cast<uint64_t>(n);
    if (progress != nullptr) progress->add(n);
  }
  ::close(fd);
  return sum.hex();
}

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = open_or_throw(path, O_RDONLY);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw IoError(err, detail::concat(path, ": cannot stat: ", std::strerror(err)));
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw IoError(err, detail::concat(path, ": cannot mmap ", size_, " bytes: ", std::strerror(err)));
    }
    data_ = static_cast<const std::byte*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::advise_random() const {
  if (data_ != nullptr) ::madvise(const_cast<std::byte*>(data_), size_, MADV_RANDOM);
}

DirectIoBuffer allocate_direct_io_buffer(std::size_t bytes) {
  const std::size_t rounded = std::max(kDirectIoAlignment, (bytes + kDirectIoAlignment - 1) / kDirectIoAlignment * kDirectIoAlignment);
  auto* p = static_cast<std::byte*>(std::aligned_alloc(kDirectIoAlignment, rounded));
  if (p == nullptr) throw std::bad_alloc();
  return {p, &std::free};
}

int open_maybe_direct(const std::string& path, int flags, unsigned mode, bool& direct) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC | O_DIRECT, static_cast<mode_t>(mode));
  direct = fd >= 0;
  if (direct) return fd;
  if (errno != EINVAL) GRAPHTIER_THROW_ERRNO(path, ": cannot open: ", std::strerror(errno));
  return open_or_throw(path, flags, static_cast<mode_t>(mode));
}

// Buffered writes on a virtualised disk cost the kernel a page-cache copy and writeback per byte;
// O_DIRECT writes go to the device at its sequential bandwidth (docs/benchmarks.md).
OutputFile::OutputFile(const std::string& path, std::size_t buffer_bytes)
    : path_(path),
      fd_(open_maybe_direct(path, O_WRONLY | O_CREAT | O_TRUNC, 0644, direct_)),
      capacity_(std::max(kDirectIoAlignment, buffer_bytes / kDirectIoAlignment * kDirectIoAlignment)) {
  try {
    buffer_ = allocate_direct_io_buffer(capacity_);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputFile::flush() {
  if (used_ == 0) return;
  const std::size_t offset = written_ - used_;  // a multiple of capacity_: only the last flush is partial
  if (direct_ && used_ % kDirectIoAlignment != 0) {
    // The tail is not a whole number of blocks: finish without O_DIRECT.
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0) {
      GRAPHTIER_THROW_ERRNO(path_, ": cannot clear O_DIRECT: ", std::strerror(errno));
    }
    direct_ = false;
  }
  pwrite_exact(fd_, buffer_.get(), used_, offset, path_);
  if (!direct_) {
    // Written pages need not stay cached: large outputs (features bigger than RAM) would otherwise
    // fill the page cache and push out what readers need. Flush them to disk asynchronously.
    sync_file_range(fd_, static_cast<off_t>(offset), static_cast<off_t>(used_), SYNC_FILE_RANGE_WRITE);
  }
  used_ = 0;
}

void OutputFile::write(const void* data, std::size_t bytes) {
  GRAPHTIER_EXPECTS(fd_ >= 0, InvalidArgument, path_, ": write after close");
  checksum_.update(data, bytes);
  const auto* src = static_cast<const std::byte*>(data);
  while (bytes > 0) {
    const std::size_t n = std::min(bytes, capacity_ - used_);
    std::memcpy(buffer_.get() + used_, src, n);
    used_ += n;
    written_ += n;
    src += n;
    bytes -= n;
    if (used_ == capacity_) flush();
  }
}

void OutputFile::write_zeros(std::size_t bytes) {
  static constexpr std::byte kZeros[4096] = {};
  while (bytes > 0) {
    const std::size_t n = std::min(bytes, sizeof kZeros);
    write(kZeros, n);
    bytes -= n;
  }
}

std::size_t OutputFile::close() {
  if (fd_ < 0) return written_;
  flush();
  if (::fsync(fd_) != 0) GRAPHTIER_THROW_ERRNO(path_, ": fsync failed: ", std::strerror(errno));
  if (::close(fd_) != 0) {
    fd_ = -1;
    GRAPHTIER_THROW_ERRNO(path_, ": close failed: ", std::strerror(errno));
  }
  fd_ = -1;
  return written_;
}

void pread_exact(int fd, void* buf, std::size_t bytes, uint64_t offset, const std::string& path) {
  auto* dst = static_cast<std::byte*>(buf);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd, dst, bytes, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      GRAPHTIER_THROW_ERRNO(path, ": read of ", bytes, " bytes at offset ", offset, " failed: ", std::strerror(errno));
    }
    if (n == 0) throw FormatError(path, detail::concat("unexpected end of file at offset ", offset, " (truncated?)"));
    dst += n;
    offset += static_cast<uint64_t>(n);
    bytes -= static_cast<std::size_t>(n);
  }
}

void pwrite_exact(int fd, const void* buf, std::size_t bytes, uint64_t offset, const std::string& path) {
  const auto* src = static_cast<const std::byte*>(buf);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd, src, bytes, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == ENOSPC) {
        GRAPHTIER_THROW_ERRNO(path, ": no space left on device while writing ", bytes, " bytes at offset ", offset);
      }
      GRAPHTIER_THROW_ERRNO(path, ": write of ", bytes, " bytes at offset ", offset, " failed: ", std::strerror(errno));
    }
    src += n;
    offset += static_cast<uint64_t>(n);
    bytes -= static_cast<std::size_t>(n);
  }
}

void fsync_directory(const std::string& path) {
  const int fd = open_or_throw(path, O_RDONLY | O_DIRECTORY);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw IoError(err, detail::concat(path, ": fsync of directory failed: ", std::strerror(err)));
}

std::string parent_directory(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

int64_t free_space_bytes(const std::string& path) {
  struct statvfs fs {};
  if (::statvfs(path.c_str(), &fs) != 0) return -1;
  const uint64_t bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  return bytes > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(bytes);
}

}  // namespace graphtier
