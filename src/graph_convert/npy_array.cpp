// Streaming .npy element reader: raw bytes in blocks of the caller's size, converted per element.
#include "npy_array.hpp"

#include <cstring>
#include <type_traits>

#include "graphtier/core/dtype.hpp"
#include "graphtier/core/error.hpp"

namespace graphtier::graph::detail {

using ::graphtier::detail::concat;

namespace {

/// Reads the preamble and the header dict from the start of `stream`.
NpyHeader read_header(ByteStream& stream) {
  std::vector<std::byte> prefix(12);
  stream.read_exact(prefix.data(), 10);
  const auto* b = reinterpret_cast<const unsigned char*>(prefix.data());
  if (std::memcmp(b, "\x93NUMPY", 6) != 0) throw FormatError(stream.name(), "is not an .npy file (no \\x93NUMPY magic)");
  std::size_t preamble = 10;
  std::size_t header_len = b[8] | (b[9] << 8);
  if (b[6] >= 2) {
    stream.read_exact(prefix.data() + 10, 2);
    b = reinterpret_cast<const unsigned char*>(prefix.data());
    preamble = 12;
    header_len |= (static_cast<std::size_t>(b[10]) << 16) | (static_cast<std::size_t>(b[11]) << 24);
  }
  // A corrupt length must not make us allocate gigabytes: numpy headers are a few hundred bytes.
  if (header_len > (std::size_t{1} << 24)) {
    throw FormatError(stream.name(), concat("implausible .npy header length ", header_len));
  }
  prefix.resize(preamble + header_len);
  stream.read_exact(prefix.data() + preamble, header_len);
  return parse_npy_header(prefix, stream.name());
}

template <typename T, typename S>
void convert(const std::byte* in, T* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    S value;
    std::memcpy(&value, in + i * static_cast<int64_t>(sizeof(S)), sizeof(S));
    out[i] = static_cast<T>(value);
  }
}

template <typename T>
void convert_any(NpyType type, const std::byte* in, T* out, int64_t count) {
  switch (type) {
    case NpyType::kBool:
    case NpyType::kUInt8: return convert<T, uint8_t>(in, out, count);
    case NpyType::kInt8: return convert<T, int8_t>(in, out, count);
    case NpyType::kInt16: return convert<T, int16_t>(in, out, count);
    case NpyType::kUInt16: return convert<T, uint16_t>(in, out, count);
    case NpyType::kInt32: return convert<T, int32_t>(in, out, count);
    case NpyType::kUInt32: return convert<T, uint32_t>(in, out, count);
    case NpyType::kInt64: return convert<T, int64_t>(in, out, count);
    case NpyType::kUInt64: return convert<T, uint64_t>(in, out, count);
    case NpyType::kFloat32: return convert<T, float>(in, out, count);
    case NpyType::kFloat64: return convert<T, double>(in, out, count);
    case NpyType::kFloat16:
      for (int64_t i = 0; i < count; ++i) {
        uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        out[i] = static_cast<T>(half_to_float(h));
      }
      return;
  }
}

template <typename T>
bool same_representation(NpyType type) {
  if constexpr (std::is_same_v<T, int64_t>) return type == NpyType::kInt64;
  if constexpr (std::is_same_v<T, int32_t>) return type == NpyType::kInt32;
  if constexpr (std::is_same_v<T, uint8_t>) return type == NpyType::kUInt8 || type == NpyType::kBool;
  if constexpr (std::is_same_v<T, float>) return type == NpyType::kFloat32;
  if constexpr (std::is_same_v<T, double>) return type == NpyType::kFloat64;
  return false;
}

}  // namespace

NpyArray NpyArray::open(SourcePtr source) {
  NpyHeader header = read_header(*source->open());
  if (const auto size = source->size()) {
    const uint64_t needed = static_cast<uint64_t>(header.data_offset + header.data_bytes());
    if (*size < needed) {
      throw FormatError(source->name(), concat("is truncated: shape ", header.shape_string(), " of ",
                                               npy_descr(header.type), " needs ", needed, " bytes, the file has ", *size));
    }
  }
  return NpyArray(std::move(source), std::move(header));
}

int64_t NpyArray::dim(int axis) const {
  if (axis < 0 || axis >= ndim()) {
    throw FormatError(name(), concat("has shape ", header_.shape_string(), ", which has no axis ", axis));
  }
  return header_.shape[static_cast<std::size_t>(axis)];
}

NpyArray NpyArray::raw(SourcePtr source, NpyType type, std::vector<int64_t> shape) {
  NpyHeader header;
  header.type = type;
  header.shape = std::move(shape);
  header.data_offset = 0;
  const uint64_t needed = static_cast<uint64_t>(header.data_bytes());
  const uint64_t size = source->size().value_or(needed);
  if (size < needed) {
    throw FormatError(source->name(), concat("has ", size, " bytes, but ", header.shape_string(), " values of ",
                                             npy_descr(type), " need ", needed));
  }
  return NpyArray(std::move(source), std::move(header));
}

NpyReader NpyArray::reader(int64_t first) const {
  GRAPHTIER_EXPECTS(first >= 0 && first <= header_.numel(), OutOfRange, "element ", first, " of ", name(),
                    " is out of range [0, ", header_.numel(), "]");
  auto stream = source_->open();
  stream->skip(static_cast<uint64_t>(header_.data_offset + first * npy_type_size(header_.type)));
  return NpyReader(std::move(stream), header_.type, header_.numel() - first);
}

NpyReader::NpyReader(std::unique_ptr<ByteStream> stream, NpyType type, int64_t remaining)
    : stream_(std::move(stream)), type_(type), remaining_(remaining) {}
NpyReader::NpyReader(NpyReader&&) noexcept = default;
NpyReader& NpyReader::operator=(NpyReader&&) noexcept = default;
NpyReader::~NpyReader() = default;

void NpyReader::read_raw(void* out, int64_t count) {
  if (count > remaining_) {
    throw FormatError(stream_->name(), concat("has ", remaining_, " elements left, ", count, " were needed"));
  }
  stream_->read_exact(out, static_cast<std::size_t>(count * npy_type_size(type_)));
  remaining_ -= count;
}

template <typename T>
void NpyReader::read(T* out, int64_t count) {
  if constexpr (std::is_integral_v<T>) {
    if (npy_is_float(type_)) {
      throw FormatError(stream_->name(), concat("holds ", npy_descr(type_), " values where integers are expected"));
    }
  }
  const int64_t size = npy_type_size(type_);
  if (same_representation<T>(type_)) {
    read_raw(out, count);  // no conversion pass
    return;
  }
  // Converting in blocks keeps the scratch buffer small whatever `count` is.
  constexpr int64_t kBlockElements = int64_t{1} << 16;
  scratch_.resize(static_cast<std::size_t>(kBlockElements * size));
  for (int64_t done = 0; done < count;) {
    const int64_t n = std::min(kBlockElements, count - done);
    read_raw(scratch_.data(), n);
    convert_any<T>(type_, scratch_.data(), out + done, n);
    done += n;
  }
}

template void NpyReader::read<int64_t>(int64_t*, int64_t);
template void NpyReader::read<int32_t>(int32_t*, int64_t);
template void NpyReader::read<uint8_t>(uint8_t*, int64_t);
template void NpyReader::read<float>(float*, int64_t);
template void NpyReader::read<double>(double*, int64_t);

}  // namespace graphtier::graph::detail

namespace graphtier::graph {

void npy_to_float64(NpyType type, const std::byte* in, double* out, int64_t count) {
  detail::convert_any<double>(type, in, out, count);
}

}  // namespace graphtier::graph
