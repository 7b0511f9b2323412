// Feature rows of a generated dataset, streamed: the pool fills one chunk while the previous chunk
// is written, so memory stays at two chunks whatever the table size (it may exceed RAM).
#include <algorithm>
#include <cstring>
#include <future>
#include <memory>
#include <vector>

#include "generate_stages.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"

namespace graphtier::graph::detail::generate {
namespace {

/// Encodes `dim` floats as `dtype` at `out`, followed by zero padding up to `stride` bytes.
void encode_row(const float* values, int64_t dim, DType dtype, int64_t stride, std::byte* out,
                std::vector<uint16_t>& half_scratch) {
  int64_t bytes = 0;
  switch (dtype) {
    case DType::kFloat32:
      bytes = dim * 4;
      std::memcpy(out, values, static_cast<std::size_t>(bytes));
      break;
    case DType::kFloat16:
    case DType::kBFloat16: {
      half_scratch.resize(static_cast<std::size_t>(dim));
      if (dtype == DType::kFloat16) {
        for (int64_t j = 0; j < dim; ++j) half_scratch[j] = float_to_half(values[j]);
      } else {
        for (int64_t j = 0; j < dim; ++j) half_scratch[j] = float_to_bfloat16(values[j]);
      }
      bytes = dim * 2;
      std::memcpy(out, half_scratch.data(), static_cast<std::size_t>(bytes));
      break;
    }
    default:
      throw InvalidArgument(::graphtier::detail::concat("generated features must be float32, float16 or bfloat16, not ",
                                                        dtype_name(dtype)));
  }
  std::memset(out + bytes, 0, static_cast<std::size_t>(stride - bytes));
}

}  // namespace

int64_t write_features(OutputFile& out, const FeatureLayout& layout, const FeatureModel& features,
                       const LabelModel& labels, int64_t num_nodes, int64_t chunk_bytes, ThreadPool& pool) {
  const int64_t stride = layout.row_stride;
  const int64_t chunk_rows = std::clamp<int64_t>(chunk_bytes / stride, 1, std::max<int64_t>(num_nodes, 1));
  // Tasks of about 256 KiB: large enough to amortise scheduling, small enough to balance threads.
  const int64_t task_rows = std::max<int64_t>(1, (int64_t{256} << 10) / stride);
  std::unique_ptr<std::byte[]> buffers[2];
  for (auto& b : buffers) b = std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(chunk_rows * stride));

  Progress progress("features", num_nodes * stride, "B");
  // Declared after the buffers: if anything throws, its destructor waits for the write in flight
  // before the buffer it reads is freed.
  std::future<void> pending;
  int64_t chunk = 0;
  for (int64_t begin = 0; begin < num_nodes; begin += chunk_rows, ++chunk) {
    const int64_t end = std::min(num_nodes, begin + chunk_rows);
    std::byte* buffer = buffers[chunk & 1].get();
    pool.parallel_for(begin, end, task_rows, [&](int64_t lo, int64_t hi) {
      std::vector<float> values(static_cast<std::size_t>(layout.dim));
      std::vector<uint16_t> half_scratch;
      for (int64_t v = lo; v < hi; ++v) {
        features.row(v, labels.label(v), values.data());
        encode_row(values.data(), layout.dim, layout.dtype, stride, buffer + (v - begin) * stride, half_scratch);
      }
    });
    // The other buffer's write must be done before this one starts: writes stay in file order.
    if (pending.valid()) pending.get();
    const std::size_t bytes = static_cast<std::size_t>((end - begin) * stride);
    pending = std::async(std::launch::async, [&out, &progress, buffer, bytes] {
      out.write(buffer, bytes);
      progress.add(static_cast<int64_t>(bytes));
    });
  }
  if (pending.valid()) pending.get();
  progress.finish();
  return num_nodes * stride;
}

}  // namespace graphtier::graph::detail::generate
