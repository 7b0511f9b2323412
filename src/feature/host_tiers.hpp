// The tiers the host serves: the static host rows [gpu_end, cpu_end) (page-locked when a GPU is
// present), the host cache of storage rows, and the storage tier behind it. One object owns their
// state, the gather's scratch and the cache policy's lock; the store's front door and the GPU tiers
// reach them only through this interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
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
#include "graphtier/core/file.hpp"
#include "graphtier/feature/feature_store.hpp"

namespace graphtier::feature {

/// Throws OutOfRange naming the first id outside [0, num_nodes) and its position; returns when
/// there is none (gather.cpp: the front door's check of the ids HostTiers::gather and the GPU
/// tiers are handed, and the GPU tiers' after the device found one).
void check_ids(std::span<const int64_t> ids, int64_t num_nodes);

/// Replaces `out` with the ids of `ids` in [begin, end), in their order: the rows a tier's window
/// covers (the host cache's storage rows, the GPU cache's rows).
inline void ids_in(std::span<const int64_t> ids, int64_t begin, int64_t end, std::vector<int64_t>& out) {
  out.clear();
  for (const int64_t id : ids) {
    if (id >= begin && id < end) out.push_back(id);
  }
}

class HostTiers {
 public:
  /// Loads the host rows [tiers.ranges.gpu_end, tiers.ranges.cpu_end) of `features_path`, opens
  /// the storage tier over the rest (on options.read_device, or a device of its own) and makes a
  /// host cache of tiers.host_cache_rows lines. Throws IoError, InvalidArgument.
  HostTiers(std::string features_path, const graph::FeatureLayout& layout, const TierLayout& tiers,
            const FeatureStoreOptions& options, ThreadPool& pool);
  HostTiers(const HostTiers&) = delete;
  HostTiers& operator=(const HostTiers&) = delete;
  ~HostTiers();

  const std::string& features_path() const noexcept { return features_path_; }
  const graph::FeatureLayout& layout() const noexcept { return layout_; }
  int64_t num_nodes() const noexcept { return num_nodes_; }
  /// The static host rows: what the GPU tiers map and read by zero-copy.
  const HostTier& rows() const noexcept { return host_; }
  /// The pool every gather's copies run on.
  ThreadPool& pool() const noexcept { return pool_; }
  int io_depth() const noexcept { return storage_->depth(); }

  /// out[k * row_bytes] = row ids[k], for ids the caller has checked, from the host rows, the
  /// host cache and storage (cpu/gather_cpu.cpp). Adds to `stats`. The caller serialises gathers
  /// (the store's gather lock): one gather at a time owns the scratch and the cache lines it
  /// fills. On a failure no cache line claims a row it never received. `after_lookup`, if set, is
  /// called once the host cache has looked every id up, on a thread of the pool while the reads
  /// may still be in flight (FeatureStore::gather); not when the gather fails before that.
  void gather(std::span<const int64_t> ids, std::byte* out, GatherStats& stats,
              const std::function<void()>& after_lookup = {});

  /// Announces (+1) or consumes (-1) `ids` in the host cache's policy (the ids it does not cover
  /// are skipped). Returns the seconds it waited for the policy's lock, which a gather holds only
  /// for its lookup and for freeing failed fills, never across its reads.
  double window(std::span<const int64_t> ids, int delta);

 private:
  /// Reused between gathers so that a minibatch allocates nothing once the sizes have been seen.
  struct Scratch {
    std::vector<int64_t> host_pos;    // output positions served by the host rows
    std::vector<int64_t> store_pos;   // output positions of storage rows
    std::vector<int64_t> keys;        // their ids
    std::vector<int64_t> slots;
    std::vector<cache::LookupKind> kinds;
    std::vector<int64_t> stage_row;   // per storage position: the read it copies from (in read_ids), or -1
                                      // (a hit on a line filled before, or a bypass read into the output)
    // The three lists below are sized to the keys and filled part after part (PlannedPart).
    std::vector<int64_t> hit_entries; // storage positions served from a cache line
    std::vector<int64_t> read_ids;    // one per fill or bypass
    std::vector<std::byte*> read_dst; // where each read lands: a fill's cache line, a bypass's output row
    std::unordered_map<int64_t, int64_t> staged_slot;  // line filled by this gather -> its read
    std::vector<int64_t> scatter_order;  // storage positions copied from a read (fills, hits on them), by read
  };
  /// Where a planned part of the keys ends in the lists it appends to.
  struct PlannedPart {
    int64_t reads = 0;    // read_ids, read_dst
    int64_t hits = 0;     // hit_entries
    int64_t scatter = 0;  // scatter_order
  };
  class CopyRounds;  // one gather's lookup, reads and copies (cpu/gather_cpu.cpp)

  PlannedPart plan_part(int64_t begin, int64_t end, std::byte* out, cache::LookupCounts& counts,
                        const PlannedPart& before);

  std::string features_path_;
  graph::FeatureLayout layout_;
  int64_t num_nodes_ = 0;
  ThreadPool& pool_;
  std::unique_ptr<io::ReadDevice> own_device_;
  std::unique_ptr<StorageTier> storage_;
  HostTier host_;
  HostCache cache_;
  Scratch scratch_;  // owned by the one gather running
  // Guards the cache's policy; held only for its short steps (lookup, erase_fills, window), never
  // across reads or copies. Taken after the store's gather lock, never before it.
  std::mutex policy_mutex_;
  std::vector<int64_t> window_scratch_;  // guarded by policy_mutex_
};

}  // namespace graphtier::feature
