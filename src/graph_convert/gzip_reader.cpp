// Gzip byte sources through zlib's gz* interface, which also reads concatenated gzip members
// (as `cat a.gz b.gz` or pigz produce) as one stream.
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "byte_source.hpp"
#include "graphtier/core/error.hpp"

namespace graphtier::graph::detail {

using ::graphtier::detail::concat;

namespace {

class GzipStream final : public ByteStream {
 public:
  explicit GzipStream(const std::string& path) : ByteStream(path) {
    errno = 0;
    file_ = ::gzopen(path.c_str(), "rb");
    if (file_ == nullptr) {
      if (errno != 0) GRAPHTIER_THROW_ERRNO(path, ": cannot open: ", std::strerror(errno));
      throw IoError(ENOMEM, path + ": cannot open: zlib could not allocate its state");
    }
    // 1 MiB of compressed input per read call: fewer system calls than zlib's 8 KiB default.
    ::gzbuffer(file_, 1u << 20);
  }
  ~GzipStream() override { ::gzclose(file_); }

  std::size_t read(void* buffer, std::size_t bytes) override {
    const unsigned want = static_cast<unsigned>(std::min<std::size_t>(bytes, INT_MAX / 2 + 1));
    if (want == 0) return 0;
    const int n = ::gzread(file_, buffer, want);
    if (n < 0) fail();
    if (n == 0) {
      // zlib reports a stream cut short only through gzerror once the input runs out.
      int err = Z_OK;
      ::gzerror(file_, &err);
      if (err == Z_BUF_ERROR) throw FormatError(name(), "gzip stream ends early (truncated file?)");
      if (err != Z_OK) fail();
    }
    return static_cast<std::size_t>(n);
  }

  uint64_t input_position() const override {
    const auto offset = ::gzoffset(file_);
    return offset < 0 ? 0 : static_cast<uint64_t>(offset);
  }

 private:
  [[noreturn]] void fail() {
    int err = Z_OK;
    const char* message = ::gzerror(file_, &err);
    if (err == Z_ERRNO) GRAPHTIER_THROW_ERRNO(name(), ": read failed: ", std::strerror(errno));
    throw FormatError(name(), concat("corrupt gzip data: ", message != nullptr ? message : "unknown zlib error"));
  }

  gzFile file_ = nullptr;
};

class GzipSource final : public ByteSource {
 public:
  GzipSource(std::string path, uint64_t compressed_bytes) : ByteSource(path), compressed_bytes_(compressed_bytes) {}
  std::unique_ptr<ByteStream> open() const override { return std::make_unique<GzipStream>(name()); }
  std::optional<uint64_t> size() const override { return std::nullopt; }
  uint64_t input_size() const override { return compressed_bytes_; }

 private:
  uint64_t compressed_bytes_;
};

}  // namespace

SourcePtr gzip_source(const std::string& path) { return std::make_shared<GzipSource>(path, file_size(path)); }

bool is_gzip_file(const std::string& path) {
  file_size(path);  // a missing file is reported as such, not as "not gzip"
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) GRAPHTIER_THROW_ERRNO(path, ": cannot open: ", std::strerror(errno));
  unsigned char magic[2] = {0, 0};
  ssize_t n;
  do {
    n = ::pread(fd, magic, 2, 0);
  } while (n < 0 && errno == EINTR);
  const int err = errno;
  ::close(fd);
  if (n < 0) throw IoError(err, path + ": read failed: " + std::strerror(err));
  return n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

}  // namespace graphtier::graph::detail
