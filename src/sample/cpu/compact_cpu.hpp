// Unique-and-compact on the host: global neighbour ids -> local positions in the layer's src
// nodes, new nodes numbered in order of first appearance (MiniBatch contract).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

namespace graphtier::sample::cpu {

/// Open-addressing map from an id (>= 0, below the largest Key) to a local position, linear
/// probing on a power-of-two table sized for `expected` keys at most half full. Not thread-safe.
/// Key uint32_t halves the table (a slot is 8 bytes): compact_layer's choice when every id and
/// position fits, so a layer's table stays in the core's cache.
template <typename Key>
class BasicIdMap {
 public:
  explicit BasicIdMap(int64_t expected)
      : capacity_(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(16, 2 * expected)))),
        shift_(64 - std::countr_zero(capacity_)),
        slots_(new Slot[capacity_]) {
    std::memset(slots_.get(), 0xFF, capacity_ * sizeof(Slot));  // every key kEmpty
  }
  /// The local id of `key`, inserting it as `next` (and returning `next`) when absent.
  Key find_or_insert(Key key, Key next) {
    for (uint64_t slot = home(key);; slot = (slot + 1) & (capacity_ - 1)) {
      Slot& s = slots_[slot];
      if (s.key == key) return s.value;
      if (s.key == kEmpty) {
        s = {key, next};
        return next;
      }
    }
  }
  /// The local id of `key`, or -1 when absent. Safe from many threads while nothing inserts.
  int64_t find(Key key) const {
    for (uint64_t slot = home(key);; slot = (slot + 1) & (capacity_ - 1)) {
      const Slot& s = slots_[slot];
      if (s.key == key) return static_cast<int64_t>(s.value);
      if (s.key == kEmpty) return -1;
    }
  }
  /// Starts loading `key`'s slot (a loop over random keys calls it some keys ahead).
  void prefetch(Key key) const { __builtin_prefetch(slots_.get() + home(key)); }

 private:
  static constexpr Key kEmpty = static_cast<Key>(-1);
  struct Slot {
    Key key;  // a key and its value share a cache line: one miss per probe
    Key value;
  };
  // Fibonacci hashing: the top bits of the key times 2^64 / phi (one multiply; every key bit
  // reaches them, and runs of ids spread evenly).
  uint64_t home(Key key) const { return (static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> shift_; }

  uint64_t capacity_;
  int shift_;
  std::unique_ptr<Slot[]> slots_;
};

using IdMap = BasicIdMap<int64_t>;

/// Layer compaction: `src_nodes` starts as the (unique) dst nodes and gains each global id of
/// `neighbours` not seen before, in order; `local` receives the position of every neighbour.
void compact_layer(std::span<const int64_t> dst_nodes, std::span<const int64_t> neighbours,
                   std::vector<int64_t>& src_nodes, std::vector<int64_t>& local);

}  // namespace graphtier::sample::cpu
