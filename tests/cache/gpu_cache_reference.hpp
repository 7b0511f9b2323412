// A naive host model of the GPU software cache (docs/architecture.md, "GPU software cache"),
// written from the stated semantics with standard containers and a one-victim-at-a-time CLOCK
// hand, for the tests of the device decisions (cache_tests) and of the kernels (feature_tests).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <unordered_map>
#include <vector>

namespace graphtier::test {

struct GpuCacheCounts {
  int64_t hits = 0;       // positions whose key was held before the gather
  int64_t fills = 0;      // distinct missed keys given a line
  int64_t bypasses = 0;   // distinct missed keys left without one
  int64_t evictions = 0;  // held keys whose line a fill took
  bool operator==(const GpuCacheCounts&) const = default;
};

class NaiveGpuCache {
 public:
  explicit NaiveGpuCache(int64_t lines)
      : slot_key_(static_cast<std::size_t>(lines), -1),
        ref_(static_cast<std::size_t>(lines), 0),
        stamp_(static_cast<std::size_t>(lines), 0) {}

  /// One gather of `keys` (the ids the cache serves, in output order): every hit is resolved
  /// first, then each distinct missed key, in order of first occurrence, takes a never-used line
  /// or the CLOCK hand's next victim (a line neither used by this gather nor pinned; referenced
  /// lines get one second chance), or bypasses when none is left.
  GpuCacheCounts gather(std::span<const int64_t> keys) {
    ++gather_;
    GpuCacheCounts c;
    std::vector<int64_t> missed;
    std::set<int64_t> seen;
    for (const int64_t key : keys) {
      if (const auto it = slot_.find(key); it != slot_.end()) {
        ref_[static_cast<std::size_t>(it->second)] = 1;
        stamp_[static_cast<std::size_t>(it->second)] = gather_;
        ++c.hits;
      } else if (seen.insert(key).second) {
        missed.push_back(key);
      }
    }
    const auto n = static_cast<int64_t>(slot_key_.size());
    for (const int64_t key : missed) {
      int64_t slot = -1;
      if (unused_ < n) {
        slot = unused_++;
      } else if (any_evictable()) {
        for (;;) {
          const int64_t s = hand_;
          hand_ = (hand_ + 1) % n;
          if (!evictable(s)) continue;
          if (ref_[static_cast<std::size_t>(s)] != 0) {
            ref_[static_cast<std::size_t>(s)] = 0;
            continue;
          }
          slot = s;
          break;
        }
        slot_.erase(slot_key_[static_cast<std::size_t>(slot)]);
        ++c.evictions;
      }
      if (slot < 0) {
        ++c.bypasses;
        continue;
      }
      slot_key_[static_cast<std::size_t>(slot)] = key;
      ref_[static_cast<std::size_t>(slot)] = 0;
      stamp_[static_cast<std::size_t>(slot)] = gather_;
      slot_[key] = slot;
      ++c.fills;
    }
    return c;
  }

  /// Each distinct key gains (announce) or loses (consume, never below zero) one future use.
  void announce(std::span<const int64_t> keys) { change(keys, +1); }
  void consume(std::span<const int64_t> keys) { change(keys, -1); }

  int64_t find(int64_t key) const {
    const auto it = slot_.find(key);
    return it == slot_.end() ? -1 : it->second;
  }
  int32_t reuse(int64_t key) const {
    const auto it = reuse_.find(key);
    return it == reuse_.end() ? 0 : it->second;
  }
  int64_t hand() const { return hand_; }
  int64_t unused() const { return unused_; }
  uint8_t referenced(int64_t slot) const { return ref_[static_cast<std::size_t>(slot)]; }

 private:
  bool evictable(int64_t s) const {
    const int64_t key = slot_key_[static_cast<std::size_t>(s)];
    return stamp_[static_cast<std::size_t>(s)] != gather_ && reuse(key) == 0;
  }
  bool any_evictable() const {
    for (int64_t s = 0; s < static_cast<int64_t>(slot_key_.size()); ++s) {
      if (evictable(s)) return true;
    }
    return false;
  }
  void change(std::span<const int64_t> keys, int32_t delta) {
    for (const int64_t key : std::set<int64_t>(keys.begin(), keys.end())) {
      const int32_t after = std::max(0, reuse(key) + delta);
      if (after == 0) {
        reuse_.erase(key);
      } else {
        reuse_[key] = after;
      }
    }
  }

  std::vector<int64_t> slot_key_;
  std::vector<uint8_t> ref_;
  std::vector<uint64_t> stamp_;
  std::map<int64_t, int64_t> slot_;
  std::unordered_map<int64_t, int32_t> reuse_;
  uint64_t gather_ = 0;
  int64_t hand_ = 0;
  int64_t unused_ = 0;
};

}  // namespace graphtier::test
