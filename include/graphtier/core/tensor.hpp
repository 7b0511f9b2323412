// A non-owning, DLPack-shaped view of a strided array (shape and strides in elements).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>

#include "graphtier/core/dtype.hpp"
#include "graphtier/core/memory.hpp"

namespace graphtier {

struct TensorView {
  static constexpr int kMaxDims = 4;

  void* data = nullptr;
  DType dtype = DType::kFloat32;
  MemoryKind memory = MemoryKind::kHost;
  int32_t device = 0;
  int32_t ndim = 0;
  std::array<int64_t, kMaxDims> shape{};
  std::array<int64_t, kMaxDims> strides{};  // in elements, as DLPack

  /// A contiguous row-major view; throws InvalidArgument for more than kMaxDims dimensions.
  static TensorView contiguous(void* data, DType dtype, std::initializer_list<int64_t> shape,
                               MemoryKind memory = MemoryKind::kHost, int32_t device = 0);

  int64_t numel() const noexcept;
  bool is_contiguous() const noexcept;
};

}  // namespace graphtier
