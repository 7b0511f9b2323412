// Front door of philox_fill: validates and dispatches on where the output lives.
#include "graphtier/core/random_fill.hpp"

#include "graphtier/core/error.hpp"
#include "graphtier/core/rng.hpp"
#if GRAPHTIER_WITH_CUDA
#include "cuda/random_fill_cuda.hpp"
#endif

namespace graphtier {

void philox_fill(uint64_t seed, uint64_t stream, uint64_t first_index, const TensorView& out) {
  GRAPHTIER_EXPECTS(out.dtype == DType::kInt64, InvalidArgument, "philox_fill writes int64, got ", dtype_name(out.dtype));
  GRAPHTIER_EXPECTS(out.is_contiguous(), InvalidArgument, "philox_fill needs a contiguous output");
  const int64_t n = out.numel();
  if (out.memory == MemoryKind::kDevice) {
#if GRAPHTIER_WITH_CUDA
    cuda::philox_fill(seed, stream, first_index, static_cast<uint64_t*>(out.data), n, out.device);
    return;
#else
    throw Unsupported("philox_fill on device memory needs a CUDA build");
#endif
  }
  auto* dst = static_cast<uint64_t*>(out.data);
  for (int64_t i = 0; i < n; ++i) dst[i] = philox_u64(seed, stream, first_index + static_cast<uint64_t>(i));
}

}  // namespace graphtier
