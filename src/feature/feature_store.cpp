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

FeatureStore::Impl::Impl(const graph::Dataset& dataset, const FeatureStoreOptions& options, ThreadPool& pool_in)
    : pool(pool_in) {
  // The dataset was validated when it was opened; only its manifest is read here (no second pass
  // over the topology), and nothing of it is kept beyond the values copied out.
  GRAPHTIER_EXPECTS(dataset.has_features(), InvalidArgument, dataset.dir(), ": the dataset has no features");
  const graph::Manifest& manifest = dataset.manifest();
  features_path = dataset.dir() + "/" + manifest.files.at("features").path;
  layout = manifest.features;
  num_nodes = manifest.num_nodes;
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
  GRAPHTIER_EXPECTS(options.max_io_depth >= 1, InvalidArgument, "max_io_depth must be >= 1, got ", options.max_io_depth);
  tiers.host_pinned = cuda_available();

  io::ReadDevice* device = options.read_device;
  if (device == nullptr) {
    own_device = io::make_read_device(options.io_backend, options.max_io_depth);
    device = own_device.get();
  }
  const bool has_storage_rows = tiers.ranges.cpu_end < num_nodes;
  int depth = options.io_depth > 0 ? options.io_depth : (has_storage_rows ? 0 : device->max_in_flight());
  // A depth the device was asked for may exceed what it runs: the pread workers are capped.
  if (options.io_depth > 0 && options.io_depth <= options.max_io_depth) depth = std::min(depth, device->max_in_flight());
  storage = std::make_unique<StorageTier>(features_path, layout, num_nodes, *device, depth);
  host = HostTier(features_path, layout, tiers.ranges.gpu_end, tiers.ranges.cpu_end, tiers.host_pinned);
  host_cache = std::make_unique<HostCache>(tiers.host_cache_rows, row_bytes, options.eviction, options.seed);
#if GRAPHTIER_WITH_CUDA
  // Also without GPU budgets: device outputs go through the tiers' stream and staging.
  if (cuda_available()) gpu = cuda::make_gpu_tiers(*this, options);
#endif
}

FeatureStore::Impl::~Impl() = default;

#if !GRAPHTIER_WITH_CUDA
void cuda::GpuTiersDeleter::operator()(GpuTiers*) const noexcept {}
#endif

FeatureStore::FeatureStore(const graph::Dataset& dataset, const FeatureStoreOptions& options, ThreadPool& pool)
    : impl_(std::make_unique<Impl>(dataset, options, pool)) {}

FeatureStore::~FeatureStore() = default;

const graph::FeatureLayout& FeatureStore::layout() const noexcept { return impl_->layout; }
int64_t FeatureStore::num_nodes() const noexcept { return impl_->num_nodes; }
const TierLayout& FeatureStore::tiers() const noexcept { return impl_->tiers; }
int FeatureStore::io_depth() const noexcept { return impl_->storage->depth(); }
GatherStats FeatureStore::last_gather() const {
  const std::lock_guard lock(impl_->stats_mutex);
  return impl_->last;
}

GatherStats FeatureStore::total() const {
  const std::lock_guard lock(impl_->stats_mutex);
  return impl_->total;
}

namespace {

// Ids at or above `begin` and inside the table: the ones a dynamic cache starting there serves.
std::span<const int64_t> ids_from(std::span<const int64_t> ids, int64_t begin, int64_t num_nodes,
                                  std::vector<int64_t>& scratch) {
  scratch.clear();
  for (const int64_t id : ids) {
    if (id >= begin && id < num_nodes) scratch.push_back(id);
  }
  return scratch;
}

}  // namespace

double FeatureStore::window(std::span<const int64_t> ids, int delta) {
  GRAPHTIER_EXPECTS(delta == kAnnounce || delta == kConsume, InvalidArgument, "FeatureStore::window: delta is ", delta,
                    ", expected +1 (announce) or -1 (consume)");
  const auto start = std::chrono::steady_clock::now();
  const std::lock_guard lock(impl_->policy_mutex);  // never held across a gather's I/O
  const double waited = seconds_since(start);
  double device_waited = 0;  // the GPU cache's window upload (cuda::window)
  Impl& s = *impl_;
  if (s.host_cache->num_lines() > 0) {
    cache::CachePolicy& policy = s.host_cache->policy();
    const std::span<const int64_t> cached = ids_from(ids, s.tiers.ranges.cpu_end, s.num_nodes, s.window_scratch);
    delta == kAnnounce ? policy.announce(cached) : policy.consume(cached);
  }
#if GRAPHTIER_WITH_CUDA
  if (s.gpu) device_waited = cuda::window(*s.gpu, ids_from(ids, s.tiers.ranges.gpu_end, s.num_nodes, s.window_scratch), delta);
#endif
  return waited + device_waited;
}

}  // namespace graphtier::feature
