#include "graphtier/core/tensor.hpp"

#include "graphtier/core/error.hpp"

namespace graphtier {

TensorView TensorView::contiguous(void* data, DType dtype, std::initializer_list<int64_t> shape,
                                  MemoryKind memory, int32_t device) {
  GRAPHTIER_EXPECTS(shape.size() <= static_cast<std::size_t>(kMaxDims), InvalidArgument,
                    "TensorView supports at most ", kMaxDims, " dimensions, got ", shape.size());
  TensorView v;
  v.data = data;
  v.dtype = dtype;
  v.memory = memory;
  v.device = device;
  v.ndim = static_cast<int32_t>(shape.size());
  int i = 0;
  for (int64_t extent : shape) {
    GRAPHTIER_EXPECTS(extent >= 0, InvalidArgument, "negative extent ", extent, " in dimension ", i);
    v.shape[i++] = extent;
  }
  int64_t stride = 1;
  for (int d = v.ndim - 1; d >= 0; --d) {
    v.strides[d] = stride;
    stride *= v.shape[d];
  }
  return v;
}

int64_t TensorView::numel() const noexcept {
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= shape[d];
  return n;
}

bool TensorView::is_contiguous() const noexcept {
  int64_t stride = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != stride) return false;
    stride *= shape[d];
  }
  return true;
}

}  // namespace graphtier
