#include "host_tiers.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"

namespace graphtier::feature {

namespace {

// The storage tier's read device: the one handed in, or one of the store's own in `own`.
io::ReadDevice& read_device(const FeatureStoreOptions& options, std::unique_ptr<io::ReadDevice>& own) {
  GRAPHTIER_EXPECTS(options.max_io_depth >= 1, InvalidArgument, "max_io_depth must be >= 1, got ",
                    options.max_io_depth);
  if (options.read_device != nullptr) return *options.read_device;
  own = io::make_read_device(options.io_backend, options.max_io_depth);
  return *own;
}

}  // namespace

HostTiers::HostTiers(std::string features_path, const graph::FeatureLayout& layout, const TierLayout& tiers,
                     const FeatureStoreOptions& options, ThreadPool& pool)
    : features_path_(std::move(features_path)),
      layout_(layout),
      num_nodes_(tiers.ranges.num_nodes),
      pool_(pool),
      host_(features_path_, layout_, tiers.ranges.gpu_end, tiers.ranges.cpu_end, tiers.host_pinned),
      cache_(tiers.host_cache_rows, layout_.row_bytes(), options.eviction, options.seed) {
  io::ReadDevice& device = read_device(options, own_device_);
  const bool has_storage_rows = tiers.ranges.cpu_end < num_nodes_;
  int depth = options.io_depth > 0 ? options.io_depth : (has_storage_rows ? 0 : device.max_in_flight());
  // A depth the device was asked for may exceed what it runs: the pread workers are capped.
  if (options.io_depth > 0 && options.io_depth <= options.max_io_depth) depth = std::min(depth, device.max_in_flight());
  storage_ = std::make_unique<StorageTier>(features_path_, layout_, num_nodes_, device, depth);
}

HostTiers::~HostTiers() = default;

double HostTiers::window(std::span<const int64_t> ids, int delta) {
  if (cache_.num_lines() == 0) return 0;
  const auto start = std::chrono::steady_clock::now();
  const std::lock_guard lock(policy_mutex_);
  const double waited = seconds_since(start);
  // The ids the cache covers: storage rows (at or above cpu_end) inside the table.
  ids_in(ids, host_.end(), num_nodes_, window_scratch_);
  cache::CachePolicy& policy = cache_.policy();
  delta == FeatureStore::kAnnounce ? policy.announce(window_scratch_) : policy.consume(window_scratch_);
  return waited;
}

}  // namespace graphtier::feature
