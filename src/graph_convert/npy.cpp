// .npy headers: parsing the Python dict literal numpy writes, and writing one.
#include "graphtier/graph_convert/npy.hpp"

#include <cctype>
#include <cstring>
#include <limits>

#include "npy_array.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"

namespace graphtier::graph {

using ::graphtier::detail::concat;
using ::graphtier::detail::printable;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicBytes = 6;

struct TypeInfo {
  NpyType type;
  const char* code;  // descr without the byte-order character
  int64_t size;
};

constexpr TypeInfo kTypes[] = {
    {NpyType::kBool, "b1", 1},    {NpyType::kInt8, "i1", 1},    {NpyType::kUInt8, "u1", 1},
    {NpyType::kInt16, "i2", 2},   {NpyType::kUInt16, "u2", 2},  {NpyType::kInt32, "i4", 4},
    {NpyType::kUInt32, "u4", 4},  {NpyType::kInt64, "i8", 8},   {NpyType::kUInt64, "u8", 8},
    {NpyType::kFloat16, "f2", 2}, {NpyType::kFloat32, "f4", 4}, {NpyType::kFloat64, "f8", 8},
};

const TypeInfo& info(NpyType type) {
  for (const auto& t : kTypes) {
    if (t.type == type) return t;
  }
  throw InvalidArgument("unknown NpyType");
}

/// A cursor over the header dict with just enough of Python's literal syntax for what numpy
/// writes (np.lib.format): quoted strings, True/False, and tuples of integers.
class DictParser {
 public:
  DictParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  /// Position just after `'key':`, or throws.
  std::size_t value_of(std::string_view key) {
    for (const char quote : {'\'', '"'}) {
      const std::string quoted = std::string(1, quote) + std::string(key) + quote;
      std::size_t pos = text_.find(quoted);
      if (pos == std::string_view::npos) continue;
      pos = skip_space(pos + quoted.size());
      if (pos >= text_.size() || text_[pos] != ':') fail(concat("no ':' after '", key, "'"));
      return skip_space(pos + 1);
    }
    fail(concat("no '", key, "' entry"));
  }

  std::string string_at(std::size_t pos) {
    if (pos >= text_.size() || (text_[pos] != '\'' && text_[pos] != '"')) {
      fail("'descr' is not a string: structured (record) arrays are not supported");
    }
    const std::size_t close = text_.find(text_[pos], pos + 1);
    if (close == std::string_view::npos) fail("unterminated string");
    return std::string(text_.substr(pos + 1, close - pos - 1));
  }

  bool bool_at(std::size_t pos) {
    if (text_.substr(pos, 4) == "True") return true;
    if (text_.substr(pos, 5) == "False") return false;
    fail("'fortran_order' is neither True nor False");
  }

  std::vector<int64_t> tuple_at(std::size_t pos) {
    if (pos >= text_.size() || text_[pos] != '(') fail("'shape' is not a tuple");
    std::vector<int64_t> shape;
    ++pos;
    for (;;) {
      pos = skip_space(pos);
      if (pos < text_.size() && text_[pos] == ')') return shape;
      int64_t value = 0;
      const std::size_t start = pos;
      while (pos < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos]))) {
        const int digit = text_[pos] - '0';
        if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) fail("a dimension of 'shape' overflows int64");
        value = value * 10 + digit;
        ++pos;
      }
      if (pos == start) fail("'shape' holds something other than non-negative integers");
      if (pos < text_.size() && text_[pos] == 'L') ++pos;  // Python 2 long literal
      shape.push_back(value);
      pos = skip_space(pos);
      if (pos < text_.size() && text_[pos] == ',') {
        ++pos;
      } else if (pos >= text_.size() || text_[pos] != ')') {
        fail("'shape' is not a tuple of integers");
      }
    }
  }

 private:
  std::size_t skip_space(std::size_t pos) const {
    while (pos < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos]))) ++pos;
    return pos;
  }
  [[noreturn]] void fail(const std::string& problem) const {
    constexpr std::size_t kMax = 200;
    throw FormatError(name_, concat("malformed .npy header (", problem, "): ", printable(text_.substr(0, kMax)),
                                    text_.size() > kMax ? "..." : ""));
  }

  std::string_view text_;
  const std::string& name_;
};

NpyType parse_descr(const std::string& descr, const std::string& name) {
  if (descr.size() >= 2) {
    const char order = descr[0];
    const std::string code = descr.substr(1);
    for (const auto& t : kTypes) {
      if (code != t.code) continue;
      if (order == '<' || order == '|' || order == '=') return t.type;
      if (order == '>' && t.size == 1) return t.type;
      if (order == '>') {
        throw FormatError(name, concat("holds big-endian '", printable(descr),
                                       "' values; only little-endian arrays are supported"));
      }
    }
  }
  throw FormatError(name, concat("holds '", printable(descr), "' values; supported: bool, int8-64, uint8-64, float16/32/64"));
}

}  // namespace

int64_t npy_type_size(NpyType type) { return info(type).size; }

std::string_view npy_descr(NpyType type) {
  static const std::string descrs[] = {"|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8"};
  return descrs[static_cast<int>(type)];
}

bool npy_is_float(NpyType type) {
  return type == NpyType::kFloat16 || type == NpyType::kFloat32 || type == NpyType::kFloat64;
}

int64_t NpyHeader::numel() const {
  int64_t n = 1;
  for (const int64_t d : shape) n *= d;
  return n;
}

std::string NpyHeader::shape_string() const {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

NpyHeader parse_npy_header(std::span<const std::byte> prefix, const std::string& name) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(prefix.data());
  if (prefix.size() < 10 || std::memcmp(bytes, kMagic, kMagicBytes) != 0) {
    throw FormatError(name, "is not an .npy file (no \\x93NUMPY magic)");
  }
  const int major = bytes[6];
  std::size_t preamble = 0;
  std::size_t header_len = 0;
  if (major == 1) {
    preamble = 10;
    header_len = bytes[8] | (bytes[9] << 8);
  } else if (major == 2 || major == 3) {
    preamble = 12;
    if (prefix.size() < 12) throw FormatError(name, "truncated .npy preamble");
    header_len = static_cast<std::size_t>(bytes[8]) | (static_cast<std::size_t>(bytes[9]) << 8) |
                 (static_cast<std::size_t>(bytes[10]) << 16) | (static_cast<std::size_t>(bytes[11]) << 24);
  } else {
    throw FormatError(name, concat(".npy format version ", major, ".", static_cast<int>(bytes[7]), " is not supported"));
  }
  if (prefix.size() < preamble + header_len) {
    throw FormatError(name, concat("truncated .npy header: needs ", preamble + header_len, " bytes, got ", prefix.size()));
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes + preamble), header_len);
  DictParser parser(text, name);
  NpyHeader h;
  h.type = parse_descr(parser.string_at(parser.value_of("descr")), name);
  h.fortran_order = parser.bool_at(parser.value_of("fortran_order"));
  h.shape = parser.tuple_at(parser.value_of("shape"));
  h.data_offset = static_cast<int64_t>(preamble + header_len);
  // Reject shapes whose byte size overflows before anyone multiplies them.
  int64_t n = 1;
  for (const int64_t d : h.shape) {
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / 8 / d) {
      throw FormatError(name, concat("shape ", h.shape_string(), " is too large"));
    }
    n *= d;
  }
  return h;
}

NpyHeader read_npy_header(const std::string& path) { return detail::NpyArray::open(detail::file_source(path)).header(); }

bool has_npy_magic(const std::string& path) {
  const auto stream = detail::file_source(path)->open();
  char magic[kMagicBytes] = {};
  std::size_t got = 0;
  while (got < kMagicBytes) {
    const std::size_t n = stream->read(magic + got, kMagicBytes - got);
    if (n == 0) break;
    got += n;
  }
  return got == kMagicBytes && std::memcmp(magic, kMagic, kMagicBytes) == 0;
}

std::string make_npy_header(NpyType type, std::span<const int64_t> shape) {
  std::string dict = "{'descr': '" + std::string(npy_descr(type)) + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) dict += (i ? ", " : "") + std::to_string(shape[i]);
  dict += shape.size() == 1 ? ",), }" : "), }";
  // numpy pads with spaces and a final newline so that the data starts 64-byte aligned.
  const bool v2 = dict.size() + 1 + 10 > 0xffff;
  const std::size_t preamble = v2 ? 12 : 10;
  const std::size_t total = (preamble + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - preamble - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicBytes);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  const std::size_t len = dict.size();
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>((len >> 8) & 0xff);
  if (v2) {
    out += static_cast<char>((len >> 16) & 0xff);
    out += static_cast<char>((len >> 24) & 0xff);
  }
  return out + dict;
}

void write_npy(const std::string& path, NpyType type, std::span<const int64_t> shape, const void* data) {
  int64_t n = 1;
  for (const int64_t d : shape) {
    GRAPHTIER_EXPECTS(d >= 0, InvalidArgument, "write_npy: negative dimension ", d, " for ", path);
    n *= d;
  }
  const std::string header = make_npy_header(type, shape);
  OutputFile out(path);
  out.write(header.data(), header.size());
  out.write(data, static_cast<std::size_t>(n * npy_type_size(type)));
  out.close();
}

}  // namespace graphtier::graph
