// The state of a FeatureStore, shared by its front door and its CPU and CUDA backends.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "cuda/gpu_tiers.hpp"
#include "host_tiers.hpp"
#include "graphtier/feature/feature_store.hpp"

namespace graphtier::feature {

/// A store: the tiers its budgets gave (what FeatureStore::tiers() reports), the host's tiers, the
/// GPU's (CUDA builds with a GPU), and the front door's locks and statistics. The backends see
/// only their own tiers' interfaces (host_tiers.hpp, cuda/gpu_tiers.hpp).
struct FeatureStore::Impl {
  Impl(const FeatureTable& table, const TierLayout& tiers, const FeatureStoreOptions& options, ThreadPool& pool);
  ~Impl();

  TierLayout tiers;
  std::unique_ptr<HostTiers> host;
  std::unique_ptr<cuda::GpuTiers, cuda::GpuTiersDeleter> gpu;  // null in CPU-only mode
  // Locking (docs/architecture.md, "Feature store and tiers"). A gather holds gather_mutex from
  // start to end: one gather at a time owns the tiers' scratch, staging, buffers and the cache
  // lines it fills, so no other gather can evict or read a line it is filling. window_mutex
  // serialises window() calls (the GPU cache's window buffers); the host cache's policy has a
  // lock of its own inside HostTiers, held only for short steps, so window() never waits for a
  // gather's I/O. Order: gather_mutex, then the policy's lock; window_mutex, then the policy's.
  std::mutex gather_mutex;
  std::mutex window_mutex;
  mutable std::mutex stats_mutex;
  GatherStats last;   // guarded by stats_mutex
  GatherStats total;  // guarded by stats_mutex
  std::vector<int64_t> window_ids;  // the GPU cache's share of a window's ids; guarded by window_mutex
};

}  // namespace graphtier::feature
