// NumPy .npy files (format 1.0-3.0): the header that describes an array, and a writer.
//
// An .npy file is a 10-byte preamble (magic "\x93NUMPY", version, header length), a Python dict
// literal such as {'descr': '<f4', 'fortran_order': False, 'shape': (2708, 1433), } padded so the
// data starts at a multiple of 64 bytes, then the raw elements. Only little-endian (or
// byte-sized) numeric and bool element types are read; object and structured arrays are rejected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace graphtier::graph {

/// Element types an .npy array may hold, by their NumPy names.
enum class NpyType : uint8_t {
  kBool,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat16,
  kFloat32,
  kFloat64
};

int64_t npy_type_size(NpyType type);
/// The descr string numpy writes: "|b1", "<i8", "<f4", ...
std::string_view npy_descr(NpyType type);
bool npy_is_float(NpyType type);

struct NpyHeader {
  NpyType type = NpyType::kFloat32;
  bool fortran_order = false;
  std::vector<int64_t> shape;  // empty for a 0-d array
  int64_t data_offset = 0;     // bytes from the start of the file to the first element

  int64_t numel() const;
  int64_t data_bytes() const { return numel() * npy_type_size(type); }
  std::string shape_string() const;  // "(2708, 1433)"
};

/// Parses the preamble and dict of an .npy file whose first bytes are `prefix` (at least the
/// whole header; 10 + header length bytes). Throws FormatError naming `name` if it is not an
/// .npy header or uses an unsupported element type.
NpyHeader parse_npy_header(std::span<const std::byte> prefix, const std::string& name);

/// Reads the header of the .npy file at `path`. Throws IoError or FormatError.
NpyHeader read_npy_header(const std::string& path);

/// True when the file starts with the .npy magic "\x93NUMPY" (raw header-less arrays do not).
bool has_npy_magic(const std::string& path);

/// Converts `count` little-endian elements of `type` at `in` to float64 (bool as 0/1, float16
/// widened), as numpy's astype(float64) does.
void npy_to_float64(NpyType type, const std::byte* in, double* out, int64_t count);

/// Serialises a format-1.0 header (2.0 if the dict does not fit 64 KiB) for a C-order array.
std::string make_npy_header(NpyType type, std::span<const int64_t> shape);

/// Writes a C-order array of `type` with `shape` from `data` (numel * size bytes) to `path`.
void write_npy(const std::string& path, NpyType type, std::span<const int64_t> shape, const void* data);

}  // namespace graphtier::graph
