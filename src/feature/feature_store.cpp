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

namespace {

// The tiers the options' budgets give the dataset's table: static prefixes, then the caches' lines
// over the rest (cache lines hold packed rows: row_bytes, not the on-disk stride).
TierLayout budget_tiers(const graph::Dataset& dataset, const FeatureStoreOptions& options) {
  const FeatureTable table = FeatureTable::of(dataset);  // InvalidArgument without features
  TierLayout tiers;
  tiers.ranges = tier_ranges(dataset.manifest(), options.budgets.gpu_hot, options.budgets.cpu_buffer);
  const int64_t bytes = table.rows * table.layout.row_stride;
  const int64_t row_bytes = table.layout.row_bytes();
  const auto lines = [&](const Budget& budget, int64_t end) {
    return std::min(budget.resolve(bytes) / row_bytes, table.rows - end);
  };
  tiers.gpu_cache_rows = lines(options.budgets.gpu_cache, tiers.ranges.gpu_end);
  tiers.host_cache_rows = lines(options.budgets.host_cache, tiers.ranges.cpu_end);
  return tiers;
}

}  // namespace

FeatureTable FeatureTable::of(const graph::Dataset& dataset) {
  // The dataset was validated when it was opened; only its manifest is read here (no second pass
  // over the topology), and nothing of it is kept beyond the values copied out.
  GRAPHTIER_EXPECTS(dataset.has_features(), InvalidArgument, dataset.dir(), ": the dataset has no features");
  const graph::Manifest& manifest = dataset.manifest();
  return {dataset.dir() + "/" + manifest.files.at("features").path, manifest.features, manifest.num_nodes};
}

FeatureStore::Impl::Impl(const FeatureTable& table, const TierLayout& given, const FeatureStoreOptions& options,
                         ThreadPool& pool)
    : tiers(given) {
  const TierRanges& r = tiers.ranges;
  GRAPHTIER_EXPECTS(table.rows >= 0 && table.layout.dim > 0 && r.num_nodes == table.rows &&
                        r.row_stride == table.layout.row_stride && 0 <= r.gpu_end && r.gpu_end <= r.cpu_end &&
                        r.cpu_end <= table.rows && tiers.gpu_cache_rows >= 0 &&
                        tiers.gpu_cache_rows <= table.rows - r.gpu_end && tiers.host_cache_rows >= 0 &&
                        tiers.host_cache_rows <= table.rows - r.cpu_end,
                    InvalidArgument, table.path, ": tiers [0, ", r.gpu_end, ") [", r.gpu_end, ", ", r.cpu_end,
                    ") with ", tiers.gpu_cache_rows, " GPU and ", tiers.host_cache_rows,
                    " host cache lines do not fit a table of ", table.rows, " rows of ", table.layout.row_stride,
                    " bytes (tiers for ", r.num_nodes, " rows of ", r.row_stride, ")");
  const bool wants_gpu = r.gpu_end > 0 || tiers.gpu_cache_rows > 0;
  GRAPHTIER_EXPECTS(!wants_gpu || cuda_available(), Unsupported,
                    "the GPU hot tier and GPU cache need a CUDA build and a GPU (budgets ",
                    options.budgets.gpu_hot.to_string(), " and ", options.budgets.gpu_cache.to_string(),
                    "); give them 0 in CPU-only mode");
  tiers.host_pinned = cuda_available();
  tiers.pinned_paths = {};
  host = std::make_unique<HostTiers>(table.path, table.layout, tiers, options, pool);
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
    : FeatureStore(FeatureTable::of(dataset), budget_tiers(dataset, options), options, pool) {}

FeatureStore::FeatureStore(const FeatureTable& table, const TierLayout& tiers, const FeatureStoreOptions& options,
                           ThreadPool& pool)
    : impl_(std::make_unique<Impl>(table, tiers, options, pool)) {}

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
    ids_in(ids, s.tiers.ranges.gpu_end, s.host->num_nodes(), s.window_ids);
    waited += cuda::window(*s.gpu, s.window_ids, delta);
  }
#endif
  return waited;
}

}  // namespace graphtier::feature
