// Arrays handed to Python without copies: every array is a DLPack view whose owner keeps the C++
// memory alive (a capsule holding a shared_ptr, or the Python object that owns the memory).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graphtier/core/dtype.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/tensor.hpp"

namespace graphtier::python {

namespace nb = nanobind;

using TorchArray = nb::ndarray<nb::pytorch>;
using NumpyArray = nb::ndarray<nb::numpy>;

inline nb::dlpack::dtype dlpack_dtype(DType t) {
  switch (t) {
    case DType::kFloat32: return nb::dtype<float>();
    case DType::kFloat16: return {static_cast<uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
    case DType::kBFloat16: return {static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat), 16, 1};
    case DType::kInt32: return nb::dtype<int32_t>();
    case DType::kInt64: return nb::dtype<int64_t>();
    case DType::kUInt8: return nb::dtype<uint8_t>();
    default: break;
  }
  throw Unsupported("no DLPack dtype for " + std::string(dtype_name(t)));
}

/// A capsule that owns a copy of `owner`: the base of views into memory `owner` keeps alive.
template <typename T>
nb::capsule owner_capsule(std::shared_ptr<T> owner) {
  return nb::capsule(new std::shared_ptr<T>(std::move(owner)),
                     [](void* p) noexcept { delete static_cast<std::shared_ptr<T>*>(p); });
}

/// A 1-D torch tensor viewing `count` values at `data`, in host memory or (cuda) in device memory
/// of `device`, kept alive by `owner` (DLPack: kDLCPU or kDLCUDA, contiguous).
/// An empty view has no owner: the DLPack deleter of a tensor without elements is never run (seen
/// with PyTorch 1.13), so its owner, the whole minibatch, would never be released.
template <typename T>
TorchArray torch_view(const T* data, std::size_t count, nb::handle owner, bool cuda, int device) {
  const std::size_t shape[1] = {count};
  if (count == 0) owner = nb::handle();
  return TorchArray(const_cast<T*>(data), 1, shape, owner, nullptr, nb::dtype<T>(),
                    cuda ? nb::device::cuda::value : nb::device::cpu::value, cuda ? device : 0);
}

/// A 1-D torch tensor viewing `values` (host memory), kept alive by `owner`.
template <typename T>
TorchArray torch_view(std::span<const T> values, nb::handle owner) {
  return torch_view(values.data(), values.size(), owner, false, 0);
}

/// A torch tensor viewing `view` (host, pinned or device memory), kept alive by `owner`.
inline TorchArray torch_view(const TensorView& view, nb::handle owner) {
  std::size_t shape[TensorView::kMaxDims];
  bool empty = false;
  for (int d = 0; d < view.ndim; ++d) {
    shape[d] = static_cast<std::size_t>(view.shape[d]);
    empty = empty || shape[d] == 0;
  }
  if (empty) owner = nb::handle();  // as above
  const bool device = view.memory == MemoryKind::kDevice;
  return TorchArray(view.data, static_cast<std::size_t>(view.ndim), shape, owner, view.strides.data(),
                    dlpack_dtype(view.dtype), device ? nb::device::cuda::value : nb::device::cpu::value,
                    device ? view.device : 0);
}

/// A 1-D int64 argument as a contiguous host span (ids, seeds). Bound with `.noconvert()`: a cast
/// would truncate float ids, so the Python layer checks and converts them (python/graphtier/_ids.py).
using IdArray = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

/// A 1-D byte argument (a packed message, graphtier/sample/row_wire.hpp).
using ByteArray = nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

inline std::vector<int64_t> to_vector(const IdArray& ids) {
  return {ids.data(), ids.data() + ids.shape(0)};
}

}  // namespace graphtier::python
