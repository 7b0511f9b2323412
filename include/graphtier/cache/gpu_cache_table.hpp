// The decisions of the GPU software cache, as __host__ __device__ functions: the key-to-slot hash
// table the gather kernel's warps probe, the per-gather first-occurrence table that makes each
// missed key one fill candidate, the CLOCK sweep's per-slot choice, and the window's reuse
// counts. The CUDA kernels (src/feature/cuda/gpu_cache.cu) only launch these; the CPU tests call
// them directly against a naive host model (docs/architecture.md, "GPU software cache").
//
// Plain C++ under g++ (GRAPHTIER_HD is `inline` there); host and device code under nvcc. Atomic
// steps are passed in as callables (a compare-and-swap, an atomic minimum), so that the same
// probe sequence runs on the host with plain memory and on the device with atomics.
#pragma once

#include <bit>
#include <cstdint>

#include "graphtier/core/rng.hpp"

namespace graphtier::cache::gpu {

inline constexpr int64_t kEmpty = -1;      // a table cell never used since the last rebuild
inline constexpr int64_t kTombstone = -2;  // a cell whose key was evicted (probes go past it)

/// Cells of the key-to-slot table for `lines` cache lines: a power of two, at least twice the
/// lines (load <= 1/2 before tombstones) and at least 16.
inline uint64_t table_capacity(int64_t lines) {
  return std::bit_ceil(static_cast<uint64_t>(lines < 8 ? 16 : 2 * lines));
}

/// Rebuild the table (clear it, reinsert every held line) once tombstones pass a quarter of the
/// cells: live keys (<= 1/2) plus tombstones then keep the load under 3/4, so probes stay short.
GRAPHTIER_HD bool table_needs_rebuild(int64_t tombstones, uint64_t capacity) {
  return static_cast<uint64_t>(tombstones) * 4 > capacity;
}

/// The first cell probed for `key` (>= 0); the probe sequence is linear from there.
GRAPHTIER_HD uint64_t table_home(int64_t key, uint64_t mask) { return mix64(static_cast<uint64_t>(key)) & mask; }

/// The cell holding `key`, or -1. Stops at the first empty cell; tombstones are passed over.
GRAPHTIER_HD int64_t table_index(const int64_t* keys, uint64_t mask, int64_t key) {
  uint64_t i = table_home(key, mask);
  for (uint64_t step = 0; step <= mask; ++step, i = (i + 1) & mask) {
    const int64_t k = keys[i];
    if (k == key) return static_cast<int64_t>(i);
    if (k == kEmpty) return -1;
  }
  return -1;
}

/// The cache line (slot) holding `key`, or -1.
GRAPHTIER_HD int64_t table_find(const int64_t* keys, const int64_t* slots, uint64_t mask, int64_t key) {
  const int64_t i = table_index(keys, mask, key);
  return i < 0 ? -1 : slots[i];
}

/// Marks the cell of `key` as a tombstone; returns whether the key was there.
GRAPHTIER_HD bool table_erase(int64_t* keys, uint64_t mask, int64_t key) {
  const int64_t i = table_index(keys, mask, key);
  if (i < 0) return false;
  keys[i] = kTombstone;
  return true;
}

/// Inserts `key` (>= 0, absent from the table) -> `slot` into the first empty or tombstone cell of
/// its probe sequence, claimed with cas(address, expected, desired) -> previous value, so that
/// concurrent inserts of distinct keys never take the same cell. Returns the cell's previous
/// content (kEmpty or kTombstone: the caller counts reclaimed tombstones), or 0 when the table is
/// full (cannot happen at load <= 3/4).
template <typename Cas>
GRAPHTIER_HD int64_t table_insert(int64_t* keys, int64_t* slots, uint64_t mask, int64_t key, int64_t slot, Cas&& cas) {
  uint64_t i = table_home(key, mask);
  for (uint64_t step = 0; step <= mask; ++step, i = (i + 1) & mask) {
    int64_t seen = keys[i];
    while (seen == kEmpty || seen == kTombstone) {
      const int64_t before = cas(&keys[i], seen, key);
      if (before == seen) {
        slots[i] = slot;
        return before;
      }
      seen = before;
    }
  }
  return 0;
}

/// The per-gather table of missed keys: records `pos` as an occurrence of `key`, keeping the
/// smallest position per key in `first` (cells start kEmpty / INT64_MAX-like). cas as above;
/// atomic_min(address, value) lowers *address to value.
template <typename Cas, typename Min>
GRAPHTIER_HD void first_position_insert(int64_t* keys, int64_t* first, uint64_t mask, int64_t key, int64_t pos,
                                        Cas&& cas, Min&& atomic_min) {
  uint64_t i = table_home(key, mask);
  for (uint64_t step = 0; step <= mask; ++step, i = (i + 1) & mask) {
    int64_t seen = keys[i];
    if (seen == kEmpty) seen = cas(&keys[i], kEmpty, key);
    if (seen == kEmpty || seen == key) {
      atomic_min(&first[i], pos);
      return;
    }
  }
}

/// The first position recorded for `key` by first_position_insert, or -1.
GRAPHTIER_HD int64_t first_position(const int64_t* keys, const int64_t* first, uint64_t mask, int64_t key) {
  const int64_t i = table_index(keys, mask, key);
  return i < 0 ? -1 : first[i];
}

/// What the CLOCK hand does at a held line (docs/architecture.md, "GPU software cache"): keep it
/// (used by this gather, or pinned by an announced reuse), clear its reference bit and pass
/// (second chance, first lap of this gather's sweep only), or take it as a victim.
enum class ClockClass : uint8_t { kKeep, kSecondChance, kVictim };

GRAPHTIER_HD ClockClass clock_class(int lap, bool used_now, int32_t reuse, uint8_t referenced) {
  if (used_now || reuse > 0) return ClockClass::kKeep;
  if (lap == 0 && referenced != 0) return ClockClass::kSecondChance;
  return ClockClass::kVictim;
}

/// The hand reaches a slot of the sweep when fewer than `need` victims were taken before it in
/// sweep order: a victim it reaches is taken (as fill number `victims_before`), a second-chance
/// line it reaches loses its reference bit; slots beyond the last victim are left as they are.
GRAPHTIER_HD bool clock_reached(int64_t victims_before, int64_t need) { return victims_before < need; }

/// Victims the sweep looks for in its second lap: a first lap that fell short reached every line,
/// took every unreferenced evictable one and cleared the bit of every referenced evictable one
/// (`cleared` of them), so those are exactly the second lap's victims, and it stops after the last
/// of them instead of sweeping on (a cache of pinned lines then costs one lap, not two).
GRAPHTIER_HD int64_t clock_second_lap_need(int64_t need, int64_t taken, int64_t cleared) {
  return need < taken + cleared ? need : taken + cleared;
}

/// A key's announced-but-unconsumed uses after announce (+1) or consume (-1): never below zero (a
/// minibatch that was never announced consumes nothing).
GRAPHTIER_HD int32_t window_count(int32_t count, int32_t delta) {
  const int32_t after = count + delta;
  return after < 0 ? 0 : after;
}

}  // namespace graphtier::cache::gpu
