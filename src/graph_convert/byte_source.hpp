// Sequential byte streams over converter inputs: a range of a plain file, a gzip file, or a member
// of a zip archive (stored or deflated, see zip_reader.hpp).
//
// A source is a recipe that can be opened any number of times, each stream independent: the CSC
// builder streams its edges twice (count, then place), and an edge_index of shape [2, E] is read
// by two streams side by side (sources at element 0, destinations at element E).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace graphtier::graph::detail {

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  /// Reads up to `bytes` into `buffer`; returns 0 only at the end of the stream.
  virtual std::size_t read(void* buffer, std::size_t bytes) = 0;
  /// Skips `bytes`: a seek where the stream can, else reads and discards. FormatError past the end.
  virtual void skip(uint64_t bytes);
  /// Bytes of the underlying file consumed so far (compressed bytes for gzip and deflate), for
  /// progress displays.
  virtual uint64_t input_position() const = 0;

  /// Reads exactly `bytes` or throws FormatError naming the stream (truncated input).
  void read_exact(void* buffer, std::size_t bytes);
  const std::string& name() const noexcept { return name_; }

 protected:
  explicit ByteStream(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual std::unique_ptr<ByteStream> open() const = 0;
  /// Length of the stream in bytes, when known without reading it (not for gzip).
  virtual std::optional<uint64_t> size() const = 0;
  /// Bytes of the underlying file that a full read consumes (the unit of input_position()).
  virtual uint64_t input_size() const = 0;
  /// For messages: a path, or "archive.npz:member.npy".
  const std::string& name() const noexcept { return name_; }

 protected:
  explicit ByteSource(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

using SourcePtr = std::shared_ptr<const ByteSource>;

/// Bytes [offset, offset + length) of a plain file (length default: to the end). Throws IoError
/// if the file cannot be opened, FormatError if the range runs past its end.
SourcePtr file_source(const std::string& path, uint64_t offset = 0, std::optional<uint64_t> length = std::nullopt,
                      std::string name = {});

/// The decompressed content of a gzip file (concatenated members are read as one stream).
SourcePtr gzip_source(const std::string& path);

/// True when the file begins with the gzip magic bytes 1f 8b.
bool is_gzip_file(const std::string& path);

/// A text input: gzip_source when the file has the gzip magic, whatever its name, else
/// file_source.
SourcePtr text_source(const std::string& path);

/// Size of a regular file in bytes; IoError naming it if it cannot be stat'ed.
uint64_t file_size(const std::string& path);
bool file_exists(const std::string& path);

}  // namespace graphtier::graph::detail
