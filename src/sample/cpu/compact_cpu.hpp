// Unique-and-compact on the host: global neighbour ids -> local positions in the layer's src
// nodes, new nodes numbered in order of first appearance (MiniBatch contract).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "graphtier/core/rng.hpp"

namespace graphtier::sample::cpu {

/// Open-addressing map from global node id (>= 0) to local position, linear probing on a
/// power-of-two table sized for `expected` keys at most half full. Not thread-safe.
class IdMap {
 public:
  explicit IdMap(int64_t expected);
  /// The local id of `key`, inserting it as `next` (and returning `next`) when absent.
  int64_t find_or_insert(int64_t key, int64_t next) {
    for (uint64_t slot = home(key);; slot = (slot + 1) & mask_) {
      Slot& s = slots_[slot];
      if (s.key == key) return s.value;
      if (s.key < 0) {
        s = {key, next};
        return next;
      }
    }
  }
  /// The local id of `key`, or -1 when absent. Safe from many threads while nothing inserts.
  int64_t find(int64_t key) const {
    for (uint64_t slot = home(key);; slot = (slot + 1) & mask_) {
      const Slot& s = slots_[slot];
      if (s.key == key) return s.value;
      if (s.key < 0) return -1;
    }
  }
  /// Starts loading `key`'s slot (a loop over random keys calls it some keys ahead).
  void prefetch(int64_t key) const { __builtin_prefetch(slots_.data() + home(key)); }

 private:
  struct Slot {
    int64_t key;  // -1 = empty
    int64_t value;
  };
  uint64_t home(int64_t key) const { return mix64(static_cast<uint64_t>(key)) & mask_; }

  std::vector<Slot> slots_;  // a key and its value share a cache line: one miss per probe
  uint64_t mask_;
};

/// Layer compaction: `src_nodes` starts as the (unique) dst nodes and gains each global id of
/// `neighbours` not seen before, in order; `local` receives the position of every neighbour.
void compact_layer(std::span<const int64_t> dst_nodes, std::span<const int64_t> neighbours,
                   std::vector<int64_t>& src_nodes, std::vector<int64_t>& local);

}  // namespace graphtier::sample::cpu
