// Feature tables: .npy (any numeric element type) and CSV text, encoded as float32, float16 or
// bfloat16 rows padded to the layout's stride.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <future>
#include <limits>
#include <memory>

#include "convert_nodes.hpp"
#include "text_lines.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"

namespace graphtier::graph::detail {

using ::graphtier::detail::concat;

namespace {

/// Encodes `dim` floats as layout.dtype at `out`, then zero padding up to the row stride.
void encode_row(const float* values, const FeatureLayout& layout, std::byte* out) {
  const int64_t dim = layout.dim;
  switch (layout.dtype) {
    case DType::kFloat32:
      std::memcpy(out, values, static_cast<std::size_t>(dim) * 4);
      break;
    case DType::kFloat16:
      for (int64_t j = 0; j < dim; ++j) {
        const uint16_t h = float_to_half(values[j]);
        std::memcpy(out + 2 * j, &h, 2);
      }
      break;
    case DType::kBFloat16:
      for (int64_t j = 0; j < dim; ++j) {
        const uint16_t b = float_to_bfloat16(values[j]);
        std::memcpy(out + 2 * j, &b, 2);
      }
      break;
    default:
      throw InvalidArgument(concat("feature dtype must be float32, float16 or bfloat16, not ", dtype_name(layout.dtype)));
  }
  const int64_t bytes = layout.row_bytes();
  std::memset(out + bytes, 0, static_cast<std::size_t>(layout.row_stride - bytes));
}

/// `v` as a float rounded to odd: truncated toward zero, with the lowest significand bit set when
/// that lost anything. Rounding such a float to nearest in a format at least two bits narrower
/// (float16, bfloat16) gives the correctly rounded value of `v` itself, as numpy's astype does;
/// rounding to nearest twice would round a value just past a half-way point of the narrow format
/// to the half-way point, and then to even, the wrong way.
float round_to_odd(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) == v || std::isnan(v)) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);  // also inf -> max
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

/// Converts one row of any numeric .npy element type to float. With `round_odd` (for a 16-bit
/// output type) values that float cannot hold exactly are rounded to odd, so that the second
/// rounding is the only one that counts (64-bit integers beyond 2^53 still round once on the way
/// to double).
void decode_row(NpyType type, const std::byte* in, int64_t dim, bool round_odd, float* out) {
  const auto load = [&](auto tag) {
    using S = decltype(tag);
    for (int64_t j = 0; j < dim; ++j) {
      S v;
      std::memcpy(&v, in + j * static_cast<int64_t>(sizeof(S)), sizeof(S));
      out[j] = round_odd ? round_to_odd(static_cast<double>(v)) : static_cast<float>(v);
    }
  };
  switch (type) {
    case NpyType::kBool:
    case NpyType::kUInt8: return load(uint8_t{});
    case NpyType::kInt8: return load(int8_t{});
    case NpyType::kInt16: return load(int16_t{});
    case NpyType::kUInt16: return load(uint16_t{});
    case NpyType::kInt32: return load(int32_t{});
    case NpyType::kUInt32: return load(uint32_t{});
    case NpyType::kInt64: return load(int64_t{});
    case NpyType::kUInt64: return load(uint64_t{});
    case NpyType::kFloat32: return load(float{});
    case NpyType::kFloat64: return load(double{});
    case NpyType::kFloat16:
      for (int64_t j = 0; j < dim; ++j) {
        uint16_t h;
        std::memcpy(&h, in + 2 * j, 2);
        out[j] = half_to_float(h);
      }
      return;
  }
}

/// A float field of a CSV line: [p, end) up to the next comma. Empty is NaN (pandas).
bool parse_float_field(const char*& p, const char* end, float& value) {
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  if (p == end || *p == ',' || *p == '\r') {
    value = std::numeric_limits<float>::quiet_NaN();
  } else {
    const char* start = p + (*p == '+' ? 1 : 0);  // from_chars does not take a leading '+'
    const auto [next, ec] = std::from_chars(start, end, value);
    if (ec == std::errc::invalid_argument) return false;
    if (ec == std::errc::result_out_of_range) {
      // Beyond float range: saturate to inf or 0 as numpy's astype(float32) does, rather than fail.
      value = static_cast<float>(std::strtod(std::string(start, next).c_str(), nullptr));
    }
    p = next;
  }
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
  return true;
}

struct FeatureRows {
  std::vector<std::byte> bytes;
  int64_t rows = 0;
};

}  // namespace

int64_t write_features_npy(OutputFile& out, const NpyArray& array, int64_t num_rows, const FeatureLayout& layout,
                           int64_t chunk_bytes, ThreadPool& pool) {
  const NpyHeader& h = array.header();
  if (array.ndim() != 2) {
    throw FormatError(array.name(), concat("features have shape ", h.shape_string(), ", expected [num_nodes, dim]"));
  }
  if (h.fortran_order && array.dim(0) > 1 && array.dim(1) > 1) {
    throw FormatError(array.name(), "features are stored in Fortran (column-major) order; save them with "
                                    "np.ascontiguousarray first");
  }
  GRAPHTIER_EXPECTS(array.dim(1) == layout.dim, InvalidArgument, array.name(), " has ", array.dim(1),
                    " features per row, the layout says ", layout.dim);
  if (array.dim(0) < num_rows) {
    throw FormatError(array.name(), concat("has ", array.dim(0), " rows, expected ", num_rows));
  }
  const int64_t dim = layout.dim;
  const int64_t in_row = dim * npy_type_size(h.type);
  const int64_t stride = layout.row_stride;
  const int64_t chunk_rows = std::clamp<int64_t>(chunk_bytes / std::max<int64_t>({in_row, stride, 1}), 1,
                                                 std::max<int64_t>(num_rows, 1));
  const int64_t task_rows = std::max<int64_t>(1, (int64_t{256} << 10) / std::max<int64_t>(stride, 1));
  std::unique_ptr<std::byte[]> raw[2], encoded[2];
  for (int i = 0; i < 2; ++i) {
    raw[i] = std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(chunk_rows * in_row));
    encoded[i] = std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(chunk_rows * stride));
  }
  NpyReader reader = array.reader(0);
  Progress progress("features", num_rows * stride, "B");
  const bool copy_rows = h.type == NpyType::kFloat32 && layout.dtype == DType::kFloat32;
  const bool round_odd = layout.dtype != DType::kFloat32;

  // Three stages overlap: reading chunk k+1, encoding chunk k on the pool, writing chunk k-1.
  // The futures are declared after the buffers, so an exception waits for them before the
  // buffers they use are freed.
  std::future<void> reading, writing;
  const auto read_chunk = [&](int64_t begin, int slot) {
    const int64_t rows = std::min(chunk_rows, num_rows - begin);
    reader.read_raw(raw[slot].get(), rows * dim);
  };
  if (num_rows > 0) reading = std::async(std::launch::async, read_chunk, int64_t{0}, 0);
  try {
    for (int64_t begin = 0, k = 0; begin < num_rows; begin += chunk_rows, ++k) {
      const int slot = static_cast<int>(k & 1);
      const int64_t rows = std::min(chunk_rows, num_rows - begin);
      reading.get();
      if (begin + chunk_rows < num_rows) {
        reading = std::async(std::launch::async, read_chunk, begin + chunk_rows, slot ^ 1);
      }
      const std::byte* in = raw[slot].get();
      std::byte* enc = encoded[slot].get();
      pool.parallel_for(0, rows, task_rows, [&](int64_t lo, int64_t hi) {
        std::vector<float> values(static_cast<std::size_t>(copy_rows ? 0 : dim));
        for (int64_t r = lo; r < hi; ++r) {
          std::byte* dst = enc + r * stride;
          if (copy_rows) {
            std::memcpy(dst, in + r * in_row, static_cast<std::size_t>(in_row));
            std::memset(dst + in_row, 0, static_cast<std::size_t>(stride - in_row));
          } else {
            decode_row(h.type, in + r * in_row, dim, round_odd, values.data());
            encode_row(values.data(), layout, dst);
          }
        }
      });
      if (writing.valid()) writing.get();
      const std::size_t bytes = static_cast<std::size_t>(rows * stride);
      writing = std::async(std::launch::async, [&out, &progress, enc, bytes] {
        out.write(enc, bytes);
        progress.add(static_cast<int64_t>(bytes));
      });
    }
    if (writing.valid()) writing.get();
  } catch (...) {
    if (reading.valid()) reading.wait();
    if (writing.valid()) writing.wait();
    throw;
  }
  progress.finish();
  return num_rows * stride;
}

FeatureLayout write_features_csv(OutputFile& out, const ByteSource& source, int64_t num_rows, DType dtype,
                                 int64_t alignment, ThreadPool& pool,
                                 const std::function<void(const FeatureLayout&)>& before_writing) {
  // The dimension is the field count of the first non-empty line.
  int64_t dim = 0;
  {
    LineBlockReader first(source, std::size_t{1} << 20);
    TextBlock block;
    while (dim == 0 && first.next(block)) {
      std::size_t pos = 0;
      while (pos < block.text.size()) {
        std::size_t eol = block.text.find('\n', pos);
        if (eol == std::string_view::npos) eol = block.text.size();
        std::string_view line = block.text.substr(pos, eol - pos);
        if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
          dim = 1 + static_cast<int64_t>(std::count(line.begin(), line.end(), ','));
          break;
        }
        pos = eol + 1;
      }
    }
  }
  if (dim == 0) throw FormatError(source.name(), "has no feature rows");
  const FeatureLayout layout = FeatureLayout::make(dim, dtype, alignment);
  if (before_writing) before_writing(layout);

  Progress progress("features", static_cast<int64_t>(source.input_size()), "B");
  int64_t rows_written = 0;
  parse_lines<FeatureRows>(
      source, pool, &progress,
      [&](std::string_view text, FeatureRows& result) -> std::optional<ParseError> {
        std::vector<float> values(static_cast<std::size_t>(dim));
        const char* const begin = text.data();
        return for_each_line(text, [&](const char* line, const char* eol) -> std::optional<std::string> {
          const std::string_view view(line, static_cast<std::size_t>(eol - line));
          if (view.find_first_not_of(" \t\r") == std::string_view::npos) return std::nullopt;
          const char* p = line;
          int64_t j = 0;
          for (;; ++j) {
            if (j == dim) return concat("has more than ", dim, " fields (the first row has ", dim, ")");
            if (!parse_float_field(p, eol, values[static_cast<std::size_t>(j)])) {
              return concat("field ", j + 1, " is not a number in ", quote_line(text, line - begin));
            }
            if (p == eol) break;
            if (*p != ',') return concat("expected ',' after field ", j + 1, " in ", quote_line(text, line - begin));
            ++p;
          }
          if (j + 1 != dim) return concat("has ", j + 1, " fields, the first row has ", dim);
          result.bytes.resize(static_cast<std::size_t>((result.rows + 1) * layout.row_stride));
          encode_row(values.data(), layout, result.bytes.data() + result.rows * layout.row_stride);
          ++result.rows;
          return std::nullopt;
        });
      },
      [&](std::vector<FeatureRows>& parts, const TextBlock&) {
        for (const auto& part : parts) {
          if (rows_written + part.rows > num_rows) {
            throw FormatError(source.name(), concat("has more than ", num_rows, " feature rows (one per node expected)"));
          }
          out.write(part.bytes.data(), part.bytes.size());
          rows_written += part.rows;
        }
      });
  progress.finish();
  if (rows_written != num_rows) {
    throw FormatError(source.name(), concat("has ", rows_written, " feature rows, expected ", num_rows, " (one per node)"));
  }
  return layout;
}

}  // namespace graphtier::graph::detail
