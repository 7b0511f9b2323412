// A cache policy: which node's row sits in which slot of a fixed-size cache, and which line to
// evict. It holds no rows (docs/architecture.md, Conventions 3; GraphBolt's cache_policy.h beside
// feature_cache.h): the storage that owns the slots (host or device memory) lives with the tier
// that uses it.
//
// Window buffering (§3.4 of GIDS, docs/references.md): the loader announces the node lists of
// minibatches it has sampled ahead and consumes each list once its minibatch has been gathered.
// A node's reuse counter is the number of announced-but-unconsumed minibatches that contain it;
// a cached line whose counter is above zero is pinned (never evicted), at zero it is evictable.
// Counters are kept by node id, so a node announced before it is cached is pinned from the moment
// it enters.
//
// A lookup never waits for a slot: when every line is pinned or already used by the same lookup,
// the miss is reported as a bypass (served without caching). There is nothing to wait for, so no
// deadlock of the kind GraphBolt had (dmlc/dgl PR 7641).
//
// Thread-safety: none. One owner calls it (the feature store serialises its calls).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "graphtier/cache/flat_map.hpp"

namespace graphtier::cache {

enum class Eviction : uint8_t {
  kClock,   // second chance: a hit sets the line's reference bit; the hand clears it once
  kRandom,  // a seeded pseudo-random evictable line (BaM's random policy)
};

std::string_view eviction_name(Eviction e);
/// "clock" or "random"; throws InvalidArgument otherwise.
Eviction parse_eviction(std::string_view text);

/// What a lookup decided for one key.
enum class LookupKind : uint8_t {
  kHit,     // the row is in slots[k] (or is being filled there by this same lookup)
  kFill,    // a miss given slots[k]: the caller must write the row there before reading it
  kBypass,  // a miss with no slot (slots[k] = -1): serve the row without caching it
};

struct LookupCounts {
  int64_t hits = 0;
  int64_t fills = 0;
  int64_t bypasses = 0;
};

class CachePolicy {
 public:
  /// A cache of `num_slots` >= 0 lines (0: every lookup bypasses). `seed` drives kRandom.
  CachePolicy(int64_t num_slots, Eviction eviction, uint64_t seed = 0);

  int64_t num_slots() const noexcept { return static_cast<int64_t>(slot_key_.size()); }
  Eviction eviction() const noexcept { return eviction_; }
  /// Lines holding a key.
  int64_t size() const noexcept { return static_cast<int64_t>(key_slot_.size()); }

  /// For every keys[k] (any non-negative id, repeats allowed) writes slots[k] and kinds[k]. A key
  /// repeated within one lookup is given one fill and then hits on the same slot. Lines used by
  /// the lookup are not evicted by it, so every slot returned stays valid until the next lookup:
  /// the caller fills the kFill slots and then reads the kHit ones. A call with `continues` goes on
  /// with the previous call's lookup (its keys in parts, the lines of every part kept), else it
  /// starts a new one. slots and kinds must have keys.size() elements (InvalidArgument).
  LookupCounts lookup(std::span<const int64_t> keys, std::span<int64_t> slots, std::span<LookupKind> kinds,
                      bool continues = false);

  /// The slot holding `key`, or -1; changes nothing (no reference bit).
  int64_t find(int64_t key) const;
  /// Frees the line holding `key`, if any (a fill that failed must not leave a line claiming a
  /// row it does not hold). The key's reuse count is kept.
  void erase(int64_t key);
  /// Frees the lines that a lookup(keys, slots, kinds) gave as kFill: the whole lookup's fills
  /// failed (a gather that threw before its copies were done).
  void erase_fills(std::span<const int64_t> keys, std::span<const LookupKind> kinds);

  /// Window buffering: each distinct key of `keys` gains one future use (repeats within one call
  /// count once: one minibatch uses a row once).
  void announce(std::span<const int64_t> keys);
  /// Each distinct key of `keys` loses one future use; a key with none left is unaffected (a
  /// minibatch that was never announced consumes nothing).
  void consume(std::span<const int64_t> keys);
  /// Announced-but-unconsumed uses of `key`.
  int32_t reuse_count(int64_t key) const;
  /// Lines that are pinned now (held key with reuse count > 0).
  int64_t pinned_lines() const noexcept { return pinned_lines_; }

 private:
  bool evictable(int64_t slot) const;
  int64_t take_slot();  // a free or evictable slot, or -1
  int64_t clock_victim();
  int64_t random_victim();
  void change_reuse(int64_t key, int32_t delta);

  Eviction eviction_;
  uint64_t seed_;
  uint64_t random_draws_ = 0;
  FlatMap<int64_t> key_slot_;
  std::vector<int64_t> slot_key_;          // -1: free
  std::vector<uint8_t> referenced_;        // CLOCK reference bits
  std::vector<int32_t> slot_reuse_;        // mirror of reuse_ for the held key
  std::vector<uint64_t> slot_stamp_;       // lookup number that last used the line
  FlatMap<int32_t> reuse_;  // key -> future uses (> 0 only)
  uint64_t stamp_ = 0;
  int64_t hand_ = 0;
  int64_t unused_ = 0;  // slots [unused_, num_slots) have never been used
  std::vector<int64_t> free_;  // erased lines
  int64_t pinned_lines_ = 0;
  // Unpinned lines the current lookup has used (slot_stamp_ == stamp_): with pinned_lines_ it
  // tells when no line is evictable, so a miss bypasses at once instead of sweeping the cache
  // (a window that pins more rows than the cache holds would otherwise cost O(slots) a miss).
  int64_t used_unpinned_ = 0;
  std::vector<int64_t> scratch_;  // distinct keys of one announce/consume
};

}  // namespace graphtier::cache
