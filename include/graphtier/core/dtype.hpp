// Element types of arrays on disk and in memory, with their DLPack encoding.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace graphtier {

enum class DType : uint8_t { kInt32, kInt64, kFloat32, kFloat16, kBFloat16, kUInt8 };

/// Size of one element in bytes.
constexpr int64_t dtype_size(DType t) {
  switch (t) {
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kFloat32: return 4;
    case DType::kFloat16: return 2;
    case DType::kBFloat16: return 2;
    case DType::kUInt8: return 1;
  }
  return 0;
}

/// Canonical name as written in manifests: "int32", "int64", "float32", "float16", "bfloat16", "uint8".
std::string_view dtype_name(DType t);

/// Parses a canonical name; throws InvalidArgument naming the accepted values otherwise.
DType parse_dtype(std::string_view name);

/// DLPack type code (kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4) and bit width.
struct DLTypeCode {
  uint8_t code;
  uint8_t bits;
};
constexpr DLTypeCode dlpack_type(DType t) {
  switch (t) {
    case DType::kInt32: return {0, 32};
    case DType::kInt64: return {0, 64};
    case DType::kFloat32: return {2, 32};
    case DType::kFloat16: return {2, 16};
    case DType::kBFloat16: return {4, 16};
    case DType::kUInt8: return {1, 8};
  }
  return {0, 0};
}

/// Round-to-nearest-even conversions used by writers of half-precision features.
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
uint16_t float_to_bfloat16(float f);
float bfloat16_to_float(uint16_t b);

}  // namespace graphtier
