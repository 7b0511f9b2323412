// Plain-file byte sources: a file range read with pread in the caller's block size, with the
// kernel told to read ahead (converters stream each input front to back).
#include "byte_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "graphtier/core/error.hpp"

namespace graphtier::graph::detail {

using ::graphtier::detail::concat;

void ByteStream::skip(uint64_t bytes) {
  std::vector<std::byte> scratch(static_cast<std::size_t>(std::min<uint64_t>(bytes, uint64_t{1} << 20)));
  while (bytes > 0) {
    const std::size_t want = static_cast<std::size_t>(std::min<uint64_t>(bytes, scratch.size()));
    const std::size_t got = read(scratch.data(), want);
    if (got == 0) throw FormatError(name(), concat("ends ", bytes, " bytes early (truncated file?)"));
    bytes -= got;
  }
}

void ByteStream::read_exact(void* buffer, std::size_t bytes) {
  auto* out = static_cast<std::byte*>(buffer);
  std::size_t done = 0;
  while (done < bytes) {
    const std::size_t got = read(out + done, bytes - done);
    if (got == 0) {
      throw FormatError(name(), concat("ends ", bytes - done, " bytes early (truncated file?)"));
    }
    done += got;
  }
}

uint64_t file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) GRAPHTIER_THROW_ERRNO(path, ": cannot open: ", std::strerror(errno));
  GRAPHTIER_EXPECTS(!S_ISDIR(st.st_mode), InvalidArgument, path, " is a directory, expected a file");
  return static_cast<uint64_t>(st.st_size);
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

namespace {

class FileStream final : public ByteStream {
 public:
  FileStream(const std::string& path, std::string name, uint64_t offset, uint64_t length)
      : ByteStream(std::move(name)), path_(path), begin_(offset), position_(offset), end_(offset + length) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) GRAPHTIER_THROW_ERRNO(path, ": cannot open: ", std::strerror(errno));
    ::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(length), POSIX_FADV_SEQUENTIAL);
  }
  ~FileStream() override { ::close(fd_); }

  std::size_t read(void* buffer, std::size_t bytes) override {
    const std::size_t want = static_cast<std::size_t>(std::min<uint64_t>(bytes, end_ - position_));
    if (want == 0) return 0;
    for (;;) {
      const ssize_t n = ::pread(fd_, buffer, want, static_cast<off_t>(position_));
      if (n < 0) {
        if (errno == EINTR) continue;
        GRAPHTIER_THROW_ERRNO(path_, ": read failed at offset ", position_, ": ", std::strerror(errno));
      }
      if (n == 0) {
        throw FormatError(name(), concat("ends at byte ", position_ - begin_, ", expected ", end_ - begin_,
                                                 " (file shrank while being read?)"));
      }
      position_ += static_cast<uint64_t>(n);
      return static_cast<std::size_t>(n);
    }
  }

  void skip(uint64_t bytes) override {
    if (bytes > end_ - position_) {
      throw FormatError(name(), concat("ends ", bytes - (end_ - position_), " bytes early (truncated file?)"));
    }
    position_ += bytes;
  }

  uint64_t input_position() const override { return position_ - begin_; }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t begin_;
  uint64_t position_;
  uint64_t end_;
};

class FileSource final : public ByteSource {
 public:
  FileSource(std::string path, std::string name, uint64_t offset, uint64_t length)
      : ByteSource(std::move(name)), path_(std::move(path)), offset_(offset), length_(length) {}

  std::unique_ptr<ByteStream> open() const override {
    return std::make_unique<FileStream>(path_, name(), offset_, length_);
  }
  std::optional<uint64_t> size() const override { return length_; }
  uint64_t input_size() const override { return length_; }

 private:
  std::string path_;
  uint64_t offset_;
  uint64_t length_;
};

}  // namespace

SourcePtr file_source(const std::string& path, uint64_t offset, std::optional<uint64_t> length, std::string name) {
  const uint64_t total = file_size(path);
  if (name.empty()) name = path;
  if (offset > total) throw FormatError(name, concat("offset ", offset, " is past the end (", total, " bytes)"));
  const uint64_t len = length.value_or(total - offset);
  if (len > total - offset) {
    throw FormatError(name, concat("needs ", len, " bytes at offset ", offset, " but the file has ", total,
                                           " (truncated file?)"));
  }
  return std::make_shared<FileSource>(path, std::move(name), offset, len);
}

SourcePtr text_source(const std::string& path) {
  return is_gzip_file(path) ? gzip_source(path) : file_source(path);
}

}  // namespace graphtier::graph::detail
