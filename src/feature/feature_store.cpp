#include "graphtier/feature/feature_store.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>

#include "feature_store_impl.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/memory.hpp"

#if GRAPHTIER_WITH_CUDA
#include "cuda/gpu_tiers.hpp"
#endif

namespace graphtier::feature {

FeatureStore::Impl::Impl(const graph::Dataset& dataset, const FeatureStoreOptions& options, ThreadPool& pool) {
  // The dataset was validated when it was opened; only its manifest is read here (no second pass
  // over the topology), and nothing of it is kept beyond the values copied out.
  GRAPHTIER_EXPECTS(dataset.has_features(), InvalidArgument, dataset.dir(), ": the dataset has no features");
  const graph::Manifest& manifest = dataset.manifest();
  const graph::FeatureLayout& layout = manifest.features;
  const int64_t num_nodes = manifest.num_nodes;
  tiers.ranges = tier_ranges(manifest, options.budgets.gpu_hot, options.budgets.cpu_buffer);
  const int64_t table = num_nodes * layout.row_stride;
  const int64_t row_bytes = layout.row_bytes();
  // Cache lines hold packed rows (row_bytes, not the on-disk stride).
  tiers.gpu_cache_rows = std::min(options.budgets.gpu_cache.resolve(table) / row_bytes, num_nodes - tiers.ranges.gpu_end);
  tiers.host_cache_rows = std::min(options.budgets.host_cache.resolve(table) / row_bytes, num_nodes - tiers.ranges.cpu_end);
  const bool wants_gpu = tiers.ranges.gpu_end > 0 || tiers.gpu_cache_rows > 0;
  GRAPHTIER_EXPECTS(!wants_gpu || cuda_available(), Unsupported,
                    "the GPU hot tier and GPU cache need a CUDA build and a GPU (budgets ",
                    options.budgets.gpu_hot.to_string(), " and ", options.budgets.gpu_cache.to_string(),
                    "); give them 0 in CPU-only mode");
  tiers.host_pinned = cuda_available();
  host = std::make_unique<HostTiers>(dataset.dir() + "/" + manifest.files.at("features").path, layout, tiers, options,
                                     pool);
#if GRAPHTIER_WITH_CUDA
  // Also without GPU budgets: device outputs go through the tiers' stream and staging.
  if (cuda_available()) {
    gpu = cuda::make_gpu_tiers(*host, tiers, options);
    tiers.pinned_paths = cuda::pinned_paths(*gpu);
  }
#endif
}

FeatureStore::Impl::~Impl() = default;

#if !GRAPHTIER_WITH_CUDA
void cuda::GpuTiersDeleter::operator()(GpuTiers*) const noexcept {}
#endif

FeatureStore::FeatureStore(const graph::Dataset& dataset, const FeatureStoreOptions& options, ThreadPool& pool)
    : impl_(std::make_unique<Impl>(dataset, options, pool)) {}

FeatureStore::~FeatureStore() = default;

const graph::FeatureLayout& FeatureStore::layout() const noexcept { return impl_->host->layout(); }
int64_t FeatureStore::num_nodes() const noexcept { return impl_->host->num_nodes(); }
const TierLayout& FeatureStore::tiers() const noexcept { return impl_->tiers; }
int FeatureStore::io_depth() const noexcept { return impl_->host->io_depth(); }
GatherStats FeatureStore::last_gather() const {
  const std::lock_guard lock(impl_->stats_mutex);
  return impl_->last;
}

GatherStats FeatureStore::total() const {
  const std::lock_guard lock(impl_->stats_mutex);
  return impl_->total;
}

double FeatureStore::window(std::span<const int64_t> ids, int delta) {
  GRAPHTIER_EXPECTS(delta == kAnnounce || delta == kConsume, InvalidArgument, "FeatureStore::window: delta is ", delta,
                    ", expected +1 (announce) or -1 (consume)");
  Impl& s = *impl_;
  const auto start = std::chrono::steady_clock::now();
  const std::lock_guard lock(s.window_mutex);  // never held across a gather's I/O
  double waited = seconds_since(start);
  waited += s.host->window(ids, delta);
#if GRAPHTIER_WITH_CUDA
  // The GPU cache's window upload (cuda::window): the ids it covers, [gpu_end, num_nodes).
  if (s.gpu) {
    const int64_t gpu_end = s.tiers.ranges.gpu_end;
    const int64_t num_nodes = s.host->num_nodes();
    s.window_ids.clear();
    for (const int64_t id : ids) {
      if (id >= gpu_end && id < num_nodes) s.window_ids.push_back(id);
    }
    waited += cuda::window(*s.gpu, s.window_ids, delta);
  }
#endif
  return waited;
}

}  // namespace graphtier::feature
