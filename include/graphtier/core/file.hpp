// Files: read-only memory maps, checksummed sequential writers, and positional I/O that
// retries short transfers and EINTR. Every error names the file (and offset where relevant).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>

namespace graphtier {

/// XXH3-64 over a byte stream, printed as 16 lowercase hex digits.
class Checksum {
 public:
  Checksum();
  ~Checksum();
  Checksum(Checksum&&) noexcept;
  Checksum& operator=(Checksum&&) noexcept;
  void update(const void* data, std::size_t bytes);
  std::string hex() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Checksum of a whole file, read sequentially in large blocks (no mmap, so RSS stays flat).
class Progress;

/// `progress`, if given, is advanced by the bytes read.
std::string checksum_file(const std::string& path, Progress* progress = nullptr);

/// A read-only, private memory map of a whole file. An empty file maps to an empty span.
class MappedFile {
 public:
  MappedFile() = default;
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  const std::string& path() const noexcept { return path_; }

  /// Typed view; the caller has checked that size() is a multiple of sizeof(T).
  template <typename T>
  std::span<const T> as() const {
    return {reinterpret_cast<const T*>(data_), size_ / sizeof(T)};
  }

  /// Hints the kernel that pages will be read at random (skips read-ahead).
  void advise_random() const;

 private:
  std::string path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

/// O_DIRECT transfers need buffer, offset and size aligned to the logical block size; 4 KiB
/// covers every device in use.
inline constexpr std::size_t kDirectIoAlignment = 4096;

/// Uninitialised bytes aligned to kDirectIoAlignment (the size rounded up to it), for O_DIRECT.
using DirectIoBuffer = std::unique_ptr<std::byte, decltype(&std::free)>;
DirectIoBuffer allocate_direct_io_buffer(std::size_t bytes);

/// Opens `path` with `flags | O_DIRECT` where the file system supports it (tmpfs does not), else
/// with `flags`; `direct` tells which. Throws IoError naming the path.
int open_maybe_direct(const std::string& path, int flags, unsigned mode, bool& direct);

/// An owned file descriptor, opened with O_CLOEXEC and closed on destruction, that keeps its path
/// for error messages. Throws IoError naming the path when the file cannot be opened. For the
/// positional I/O below (pread_exact, pwrite_exact), which takes the raw descriptor from get().
class FileDescriptor {
 public:
  FileDescriptor(const std::string& path, int flags, unsigned mode = 0644);
  ~FileDescriptor();
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int get() const noexcept { return fd_; }
  const std::string& path() const noexcept { return path_; }
  /// Current size in bytes (fstat). Throws IoError.
  int64_t size() const;

 private:
  std::string path_;
  int fd_ = -1;
};

/// Sequential writer with a large buffer, a running checksum and errors that name the file.
/// Writes bypass the page cache (O_DIRECT) where the file system allows it; the unaligned tail is
/// written through the cache at close. A full disk surfaces as IoError(ENOSPC, "<path>: no space
/// left on device ...").
class OutputFile {
 public:
  explicit OutputFile(const std::string& path, std::size_t buffer_bytes = std::size_t{4} << 20);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const void* data, std::size_t bytes);
  template <typename T>
  void write_span(std::span<const T> values) {
    write(values.data(), values.size_bytes());
  }
  /// Writes `bytes` zero bytes (row padding).
  void write_zeros(std::size_t bytes);
  /// Flushes, fsyncs and closes; returns the byte count. Must be called for the file to count.
  std::size_t close();

  std::size_t bytes_written() const noexcept { return written_; }
  std::string checksum_hex() const { return checksum_.hex(); }
  const std::string& path() const noexcept { return path_; }

 private:
  void flush();

  std::string path_;
  bool direct_ = false;  // set by the constructor, before fd_, which opens the file
  int fd_ = -1;
  std::size_t capacity_;
  DirectIoBuffer buffer_{nullptr, &std::free};
  std::size_t used_ = 0;
  std::size_t written_ = 0;
  Checksum checksum_;
};

/// pread/pwrite of exactly `bytes` at `offset`, retrying EINTR and short transfers. A read that
/// reaches end of file throws FormatError (truncated file); other failures throw IoError naming
/// the path and offset.
void pread_exact(int fd, void* buf, std::size_t bytes, uint64_t offset, const std::string& path);
void pwrite_exact(int fd, const void* buf, std::size_t bytes, uint64_t offset, const std::string& path);

/// fsync of a directory, so that a rename inside it is durable.
void fsync_directory(const std::string& path);

/// The directory holding `path` ("." for a bare name, "/" for a child of the root) and its last
/// component, split at the last '/'; whether anything (a dangling link too) is at `path`.
std::string parent_directory(const std::string& path);
std::string base_name(const std::string& path);
bool path_exists(const std::string& path);

/// Bytes the file system holding `path` has free for unprivileged writers (statvfs: f_bavail x
/// f_frsize, at most INT64_MAX), or -1 when it does not say; the callers then let the writes tell.
int64_t free_space_bytes(const std::string& path);

}  // namespace graphtier
