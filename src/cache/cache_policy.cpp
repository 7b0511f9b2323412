#include "graphtier/cache/cache_policy.hpp"

#include <algorithm>

#include "graphtier/core/error.hpp"
#include "graphtier/core/rng.hpp"

namespace graphtier::cache {

std::string_view eviction_name(Eviction e) {
  switch (e) {
    case Eviction::kClock: return "clock";
    case Eviction::kRandom: return "random";
  }
  return "?";
}

Eviction parse_eviction(std::string_view text) {
  if (text == "clock") return Eviction::kClock;
  if (text == "random") return Eviction::kRandom;
  throw InvalidArgument(detail::concat("eviction policy must be clock or random, got '", text, "'"));
}

CachePolicy::CachePolicy(int64_t num_slots, Eviction eviction, uint64_t seed) : eviction_(eviction), seed_(seed) {
  GRAPHTIER_EXPECTS(num_slots >= 0, InvalidArgument, "cache slot count must be >= 0, got ", num_slots);
  const auto n = static_cast<std::size_t>(num_slots);
  slot_key_.assign(n, -1);
  referenced_.assign(n, 0);
  slot_reuse_.assign(n, 0);
  slot_stamp_.assign(n, 0);
  key_slot_ = FlatMap<int64_t>(n);
}

bool CachePolicy::evictable(int64_t slot) const {
  const auto s = static_cast<std::size_t>(slot);
  return slot_stamp_[s] != stamp_ && slot_reuse_[s] == 0;
}

int64_t CachePolicy::clock_victim() {
  const int64_t n = num_slots();
  // Two sweeps: the first clears every reference bit it passes, so the second finds any evictable
  // line. Pinned lines keep their bit; a full cache of pinned lines ends the search (bypass).
  for (int64_t step = 0; step < 2 * n; ++step) {
    const int64_t s = hand_;
    hand_ = hand_ + 1 == n ? 0 : hand_ + 1;
    if (!evictable(s)) continue;
    if (referenced_[static_cast<std::size_t>(s)] != 0) {
      referenced_[static_cast<std::size_t>(s)] = 0;
      continue;
    }
    return s;
  }
  return -1;
}

int64_t CachePolicy::random_victim() {
  const auto n = static_cast<uint64_t>(num_slots());
  // A few random probes find a victim at once unless most lines are pinned; the bounded scan
  // after them decides the rest without looping forever.
  constexpr int kProbes = 8;
  for (int probe = 0; probe < kProbes; ++probe) {
    const auto s = static_cast<int64_t>(bounded_u64(philox_u64(seed_, 0, random_draws_++), n));
    if (evictable(s)) return s;
  }
  const auto start = static_cast<int64_t>(bounded_u64(philox_u64(seed_, 0, random_draws_++), n));
  for (int64_t i = 0; i < num_slots(); ++i) {
    const int64_t s = (start + i) % num_slots();
    if (evictable(s)) return s;
  }
  return -1;
}

int64_t CachePolicy::take_slot() {
  if (unused_ < num_slots()) return unused_++;
  if (!free_.empty()) {
    const int64_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  if (pinned_lines_ + used_unpinned_ >= num_slots()) return -1;  // every line pinned or in use
  const int64_t victim = eviction_ == Eviction::kClock ? clock_victim() : random_victim();
  if (victim >= 0) key_slot_.erase(slot_key_[static_cast<std::size_t>(victim)]);
  return victim;
}

LookupCounts CachePolicy::lookup(std::span<const int64_t> keys, std::span<int64_t> slots, std::span<LookupKind> kinds,
                                 bool continues) {
  GRAPHTIER_EXPECTS(slots.size() == keys.size() && kinds.size() == keys.size(), InvalidArgument,
                    "lookup of ", keys.size(), " keys needs as many slots and kinds, got ", slots.size(), " and ",
                    kinds.size());
  if (!continues) {
    ++stamp_;
    used_unpinned_ = 0;
  }
  LookupCounts counts;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const int64_t key = keys[k];
    if (const int64_t* held = key_slot_.find(key); held != nullptr) {
      const auto s = static_cast<std::size_t>(*held);
      referenced_[s] = 1;
      if (slot_stamp_[s] != stamp_ && slot_reuse_[s] == 0) ++used_unpinned_;
      slot_stamp_[s] = stamp_;
      slots[k] = *held;
      kinds[k] = LookupKind::kHit;
      ++counts.hits;
      continue;
    }
    const int64_t slot = take_slot();
    slots[k] = slot;
    if (slot < 0) {
      kinds[k] = LookupKind::kBypass;
      ++counts.bypasses;
      continue;
    }
    const auto s = static_cast<std::size_t>(slot);
    slot_key_[s] = key;
    key_slot_.insert(key, slot);
    referenced_[s] = 0;
    slot_stamp_[s] = stamp_;
    const int32_t* reuse = reuse_.find(key);
    slot_reuse_[s] = reuse == nullptr ? 0 : *reuse;
    if (slot_reuse_[s] > 0) {
      ++pinned_lines_;
    } else {
      ++used_unpinned_;
    }
    kinds[k] = LookupKind::kFill;
    ++counts.fills;
  }
  return counts;
}

int64_t CachePolicy::find(int64_t key) const {
  const int64_t* held = key_slot_.find(key);
  return held == nullptr ? -1 : *held;
}

void CachePolicy::erase_fills(std::span<const int64_t> keys, std::span<const LookupKind> kinds) {
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    if (kinds[k] == LookupKind::kFill) erase(keys[k]);
  }
}

void CachePolicy::erase(int64_t key) {
  const int64_t* held = key_slot_.find(key);
  if (held == nullptr) return;
  const int64_t slot = *held;
  const auto s = static_cast<std::size_t>(slot);
  if (slot_reuse_[s] > 0) --pinned_lines_;
  slot_reuse_[s] = 0;
  slot_key_[s] = -1;
  referenced_[s] = 0;
  free_.push_back(slot);
  key_slot_.erase(key);
}

int32_t CachePolicy::reuse_count(int64_t key) const {
  const int32_t* count = reuse_.find(key);
  return count == nullptr ? 0 : *count;
}

void CachePolicy::change_reuse(int64_t key, int32_t delta) {
  int32_t* count = reuse_.find(key);
  const int32_t before = count == nullptr ? 0 : *count;
  const int32_t after = std::max(0, before + delta);
  if (after == before) return;
  if (after == 0) {
    reuse_.erase(key);
  } else if (count == nullptr) {
    reuse_.insert(key, after);
  } else {
    *count = after;
  }
  if (const int64_t slot = find(key); slot >= 0) {
    slot_reuse_[static_cast<std::size_t>(slot)] = after;
    if (before == 0) ++pinned_lines_;
    if (after == 0) --pinned_lines_;
  }
}

void CachePolicy::announce(std::span<const int64_t> keys) {
  scratch_.assign(keys.begin(), keys.end());
  std::sort(scratch_.begin(), scratch_.end());
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  for (const int64_t key : scratch_) change_reuse(key, +1);
}

void CachePolicy::consume(std::span<const int64_t> keys) {
  scratch_.assign(keys.begin(), keys.end());
  std::sort(scratch_.begin(), scratch_.end());
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  for (const int64_t key : scratch_) change_reuse(key, -1);
}

}  // namespace graphtier::cache
