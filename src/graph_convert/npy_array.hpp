// .npy arrays read as streams from any byte source (a file or an .npz member), converting elements
// to the type the converter needs on the way, in bounded memory.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "byte_source.hpp"
#include "graphtier/graph_convert/npy.hpp"

namespace graphtier::graph::detail {

class NpyReader;

class NpyArray {
 public:
  /// Reads and checks the header; FormatError if the source holds fewer bytes than it promises.
  static NpyArray open(SourcePtr source);
  /// A header-less array of little-endian `type` values (np.memmap / np.fromfile layout). The
  /// source may be longer than the shape needs (a prefix is read), never shorter.
  static NpyArray raw(SourcePtr source, NpyType type, std::vector<int64_t> shape);

  const NpyHeader& header() const noexcept { return header_; }
  const std::string& name() const noexcept { return source_->name(); }
  const ByteSource& source() const noexcept { return *source_; }
  int ndim() const noexcept { return static_cast<int>(header_.shape.size()); }
  /// The size of axis `axis`; FormatError naming the array when it has no such axis (a 0-d array
  /// where a column was expected).
  int64_t dim(int axis) const;

  /// A stream of the elements in storage order, starting at element `first`.
  NpyReader reader(int64_t first = 0) const;

 private:
  NpyArray(SourcePtr source, NpyHeader header) : source_(std::move(source)), header_(std::move(header)) {}
  SourcePtr source_;
  NpyHeader header_;
};

class NpyReader {
 public:
  NpyReader(std::unique_ptr<ByteStream> stream, NpyType type, int64_t remaining);
  NpyReader(NpyReader&&) noexcept;
  NpyReader& operator=(NpyReader&&) noexcept;
  ~NpyReader();

  /// Reads the next `count` elements into `out`, converted to T (int64_t, int32_t, uint8_t, float
  /// or double). Reading integers from a floating-point array throws FormatError (node ids stored
  /// as floats are refused rather than rounded); reading past the end throws FormatError.
  template <typename T>
  void read(T* out, int64_t count);

  /// Raw little-endian bytes of the next `count` elements, unconverted.
  void read_raw(void* out, int64_t count);

  NpyType type() const noexcept { return type_; }
  int64_t remaining() const noexcept { return remaining_; }
  uint64_t input_position() const { return stream_->input_position(); }

 private:
  std::unique_ptr<ByteStream> stream_;
  NpyType type_;
  int64_t remaining_;
  std::vector<std::byte> scratch_;
};

}  // namespace graphtier::graph::detail
