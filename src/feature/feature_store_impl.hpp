// The state of a FeatureStore, shared by its front door and its CPU and CUDA backends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "host_cache.hpp"
#include "host_tier.hpp"
#include "storage_tier.hpp"
#include "graphtier/cache/cache_policy.hpp"
#include "graphtier/feature/feature_store.hpp"

namespace graphtier::feature {

namespace cuda {
struct GpuTiers;  // defined in cuda/gpu_tiers.cu, CUDA builds only
/// Defined in cuda/gpu_tiers.cu (CUDA builds) or feature_store.cpp (CPU builds, never called
/// with a tier set), so that the tiers stay opaque to every C++ translation unit.
struct GpuTiersDeleter {
  void operator()(GpuTiers* tiers) const noexcept;
};
}

/// Reused between gathers so that a minibatch allocates nothing once the sizes have been seen.
struct HostGatherScratch {
  std::vector<int64_t> host_pos;    // output positions served by the host tier
  std::vector<int64_t> store_pos;   // output positions of storage rows
  std::vector<int64_t> keys;        // their ids
  std::vector<int64_t> slots;
  std::vector<cache::LookupKind> kinds;
  std::vector<int64_t> stage_row;   // per storage position: its row in `staging`, or -1 (cache hit)
  std::vector<int64_t> hit_entries; // storage positions served from a cache line
  std::vector<int64_t> read_ids;    // one per fill or bypass
  std::unordered_map<int64_t, int64_t> staged_slot;  // line filled by this gather -> staging row
  std::vector<std::byte> staging;
  std::vector<int64_t> scatter_order;  // storage positions with a staged row, by staged row
};

struct FeatureStore::Impl {
  Impl(const graph::Dataset& dataset, const FeatureStoreOptions& options, ThreadPool& pool);
  ~Impl();

  std::string features_path;
  graph::FeatureLayout layout;
  int64_t num_nodes = 0;
  TierLayout tiers;
  ThreadPool& pool;
  std::unique_ptr<io::ReadDevice> own_device;
  std::unique_ptr<StorageTier> storage;
  HostTier host;
  std::unique_ptr<HostCache> host_cache;
  std::unique_ptr<cuda::GpuTiers, cuda::GpuTiersDeleter> gpu;  // null in CPU-only mode
  // Locking (docs/architecture.md, "Feature store and tiers"). A gather holds gather_mutex from
  // start to end: one gather at a time owns the scratch, the staging, the GPU tiers' buffers and
  // the cache lines, so no other gather can evict or read a line it is filling. policy_mutex
  // guards both caches' policies and is held only for their short steps (lookup, erase_fills,
  // announce, consume), never across reads or copies, so announce/consume never wait for a
  // gather's I/O. Order: gather_mutex before policy_mutex, never the reverse.
  std::mutex gather_mutex;
  std::mutex policy_mutex;
  mutable std::mutex stats_mutex;
  GatherStats last;   // guarded by stats_mutex
  GatherStats total;  // guarded by stats_mutex
  HostGatherScratch scratch;           // guarded by gather_mutex
  std::vector<int64_t> window_scratch; // guarded by policy_mutex
};

/// Throws OutOfRange naming the first id outside [0, num_nodes) and its position; returns when
/// there is none (gather.cpp: the front door's check, and the GPU tiers' after the device found one).
void check_ids(std::span<const int64_t> ids, int64_t num_nodes);

}  // namespace graphtier::feature
