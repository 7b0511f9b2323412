// The front door of FeatureStore::gather: validates the output and every id (or leaves the ids to
// the GPU tiers' device), then dispatches on where the output lives and whether GPU tiers exist.
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>

#include "feature_store_impl.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"

#if GRAPHTIER_WITH_CUDA
#include "cuda/gpu_tiers.hpp"
#endif

namespace graphtier::feature {

void check_ids(std::span<const int64_t> ids, int64_t num_nodes) {
  // One branch-free pass, then the first bad position only when there is one. As unsigned, an id
  // is in [0, num_nodes) iff neither it nor num_nodes - 1 - it has the top bit set: an OR and a
  // subtraction per id, which vectorise on x86-64's baseline where a 64-bit min/max pair does not
  // (23 against 80 microseconds at 65536 ids here, as much as the hot tier's serve kernel takes).
  const auto last = static_cast<uint64_t>(num_nodes) - 1;
  uint64_t outside = 0;
  for (const int64_t id : ids) {
    const auto u = static_cast<uint64_t>(id);
    outside |= u | (last - u);
  }
  if ((outside >> 63) == 0) return;
  for (std::size_t k = 0; k < ids.size(); ++k) {
    GRAPHTIER_EXPECTS(ids[k] >= 0 && ids[k] < num_nodes, OutOfRange, "feature id ", ids[k], " at position ", k,
                      " is outside [0, ", num_nodes, ")");
  }
}

GatherStats FeatureStore::gather(std::span<const int64_t> ids, TensorView out, const DeviceIds& device_ids,
                                 const CudaStream* output_after, const std::function<void()>& after_lookup) {
  Impl& s = *impl_;
  const auto n = static_cast<int64_t>(ids.size());
  const graph::FeatureLayout& layout = s.host->layout();
  const int64_t num_nodes = s.host->num_nodes();
  GRAPHTIER_EXPECTS(out.ndim == 2 && out.shape[0] == n && out.shape[1] == layout.dim, InvalidArgument,
                    "gather of ", n, " rows needs an output of shape [", n, ", ", layout.dim, "], got ndim ",
                    out.ndim, " [", out.shape[0], ", ", out.shape[1], "]");
  GRAPHTIER_EXPECTS(out.dtype == layout.dtype, InvalidArgument, "gather output has dtype ", dtype_name(out.dtype),
                    ", the feature table ", dtype_name(layout.dtype));
  GRAPHTIER_EXPECTS(out.is_contiguous() && (n == 0 || out.data != nullptr), InvalidArgument,
                    "gather output must be contiguous and non-null");
#if GRAPHTIER_WITH_CUDA
  const bool gpu_rows = s.tiers.ranges.gpu_end > 0 || s.tiers.gpu_cache_rows > 0;
  const bool on_gpu = out.memory == MemoryKind::kDevice || gpu_rows;
  // The GPU tiers check every id on their device as they route it, whether the caller handed the
  // ids there or the tiers upload them: no pass of the host's over them (gpu_tiers.hpp).
  if (!(on_gpu && s.gpu != nullptr)) check_ids(ids, num_nodes);
#else
  (void)device_ids;
  (void)output_after;
  check_ids(ids, num_nodes);
#endif
  const std::lock_guard lock(s.gather_mutex);
  const auto start = std::chrono::steady_clock::now();
  GatherStats stats;
  bool host_only = false;  // the host tiers call after_lookup themselves
  if (n > 0) {
#if GRAPHTIER_WITH_CUDA
    if (on_gpu) {
      GRAPHTIER_EXPECTS(s.gpu != nullptr, Unsupported, "gather into device memory needs a GPU (none is visible)");
      cuda::gather(*s.gpu, *s.host, ids, out, stats, device_ids, output_after);
    } else {
      host_only = true;
      s.host->gather(ids, static_cast<std::byte*>(out.data), stats, after_lookup);
    }
#else
    GRAPHTIER_EXPECTS(out.memory != MemoryKind::kDevice, Unsupported,
                      "gather into device memory needs a CUDA build (this one is CPU-only)");
    host_only = true;
    s.host->gather(ids, static_cast<std::byte*>(out.data), stats, after_lookup);
#endif
  }
  if (!host_only && after_lookup) after_lookup();
  stats.rows = n;
  stats.seconds = seconds_since(start);
  const std::lock_guard stats_lock(s.stats_mutex);
  s.last = stats;
  s.total += stats;
  return stats;
}

}  // namespace graphtier::feature
