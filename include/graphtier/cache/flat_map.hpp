// An open-addressing hash map from non-negative int64 keys to small values, for the cache
// policy's per-key state: one flat array probed linearly, so a lookup costs about one cache miss
// where std::unordered_map costs a node allocation and a pointer chase. Deletion shifts the
// following entries back (no tombstones), so the table never degrades under eviction churn.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "graphtier/core/rng.hpp"

namespace graphtier::cache {

template <typename Value>
class FlatMap {
 public:
  explicit FlatMap(std::size_t expected = 0) { rehash(table_size_for(expected)); }

  std::size_t size() const noexcept { return size_; }

  /// The value of `key` (>= 0), or nullptr.
  Value* find(int64_t key) noexcept {
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) return &values_[i];
      if (keys_[i] < 0) return nullptr;
    }
  }
  const Value* find(int64_t key) const noexcept { return const_cast<FlatMap*>(this)->find(key); }

  /// Inserts `key` (>= 0, absent) with `value`.
  void insert(int64_t key, Value value) {
    if (2 * (size_ + 1) > keys_.size()) rehash(2 * keys_.size());
    std::size_t i = home(key);
    while (keys_[i] >= 0) i = (i + 1) & mask_;
    keys_[i] = key;
    values_[i] = value;
    ++size_;
  }

  /// Removes `key` if present; returns whether it was.
  bool erase(int64_t key) noexcept {
    std::size_t hole = home(key);
    while (keys_[hole] != key) {
      if (keys_[hole] < 0) return false;
      hole = (hole + 1) & mask_;
    }
    // Backward shift: move up every later entry of the probe run whose home is not in
    // (hole, j], so that no entry sits behind an empty slot on its own probe path.
    for (std::size_t j = (hole + 1) & mask_; keys_[j] >= 0; j = (j + 1) & mask_) {
      const std::size_t k = home(keys_[j]);
      const bool stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
      if (stays) continue;
      keys_[hole] = keys_[j];
      values_[hole] = values_[j];
      hole = j;
    }
    keys_[hole] = -1;
    --size_;
    return true;
  }

 private:
  static std::size_t table_size_for(std::size_t expected) { return std::bit_ceil(std::max<std::size_t>(16, 2 * expected)); }
  std::size_t home(int64_t key) const noexcept { return static_cast<std::size_t>(mix64(static_cast<uint64_t>(key))) & mask_; }

  void rehash(std::size_t capacity) {
    std::vector<int64_t> old_keys(capacity, -1);
    std::vector<Value> old_values(capacity);
    old_keys.swap(keys_);
    old_values.swap(values_);
    mask_ = capacity - 1;
    size_ = 0;
    for (std::size_t i = 0; i < old_keys.size(); ++i) {
      if (old_keys[i] >= 0) insert(old_keys[i], old_values[i]);
    }
  }

  std::vector<int64_t> keys_;  // -1: empty
  std::vector<Value> values_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace graphtier::cache
