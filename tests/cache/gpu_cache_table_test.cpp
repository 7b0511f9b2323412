// The GPU software cache's decisions (graphtier/cache/gpu_cache_table.hpp), called on the host:
// the hash table against std::unordered_map, the first-occurrence table against a set, and the
// batched CLOCK sweep, run as the kernels run it (every step a call of the same functions, the
// sweep in the kernels' order), against the naive one-victim-at-a-time model over seeded
// sequences of gathers with a window.
#include "graphtier/cache/gpu_cache_table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <vector>

#include "cache/gpu_cache_reference.hpp"
#include "graphtier/core/rng.hpp"

namespace graphtier::cache::gpu {
namespace {

int64_t plain_cas(int64_t* address, int64_t expected, int64_t desired) {
  const int64_t before = *address;
  if (before == expected) *address = desired;
  return before;
}

void plain_min(int64_t* address, int64_t value) {
  if (value < *address) *address = value;
}

struct Table {
  explicit Table(int64_t lines) : keys(table_capacity(lines), kEmpty), slots(keys.size(), -1) {}
  uint64_t mask() const { return keys.size() - 1; }
  std::vector<int64_t> keys;
  std::vector<int64_t> slots;
  int64_t tombstones = 0;
};

TEST(GpuCacheTableTest, CapacityIsAPowerOfTwoOfAtLeastTwiceTheLines) {
  EXPECT_EQ(table_capacity(0), 16u);
  EXPECT_EQ(table_capacity(8), 16u);
  EXPECT_EQ(table_capacity(9), 32u);
  EXPECT_EQ(table_capacity(1000), 2048u);
  EXPECT_EQ(table_capacity(1024), 2048u);
  EXPECT_FALSE(table_needs_rebuild(4, 16));
  EXPECT_TRUE(table_needs_rebuild(5, 16));
}

TEST(GpuCacheTableTest, InsertFindEraseMatchAMapWithTombstonesAndRebuilds) {
  constexpr int64_t kLines = 300;
  Table t(kLines);
  std::unordered_map<int64_t, int64_t> reference;
  std::vector<int64_t> held;
  int64_t rebuilds = 0;
  for (uint64_t step = 0; step < 20000; ++step) {
    const uint64_t bits = philox_u64(11, 0, step);
    // Keys from a range a few times the lines, so that erases and re-inserts collide in the table.
    const auto key = static_cast<int64_t>(bounded_u64(philox_u64(11, 1, step), 4 * kLines));
    if (reference.count(key) == 0 && static_cast<int64_t>(reference.size()) < kLines && bits % 3 != 0) {
      const auto slot = static_cast<int64_t>(step % kLines);
      const int64_t before = table_insert(t.keys.data(), t.slots.data(), t.mask(), key, slot, plain_cas);
      ASSERT_TRUE(before == kEmpty || before == kTombstone);
      if (before == kTombstone) --t.tombstones;
      reference[key] = slot;
    } else if (reference.count(key) != 0 && bits % 3 == 0) {
      ASSERT_TRUE(table_erase(t.keys.data(), t.mask(), key));
      ++t.tombstones;
      reference.erase(key);
    }
    EXPECT_FALSE(table_erase(t.keys.data(), t.mask(), 4 * kLines + static_cast<int64_t>(step)));
    if (table_needs_rebuild(t.tombstones, t.keys.size())) {
      // What the rebuild kernel does: clear every cell, reinsert every held key.
      Table fresh(kLines);
      for (std::size_t i = 0; i < t.keys.size(); ++i) {
        if (t.keys[i] >= 0)
          table_insert(fresh.keys.data(), fresh.slots.data(), fresh.mask(), t.keys[i], t.slots[i], plain_cas);
      }
      t = fresh;
      ++rebuilds;
    }
    if (step % 97 == 0) {
      for (int64_t k = 0; k < 4 * kLines; ++k) {
        const auto it = reference.find(k);
        ASSERT_EQ(table_find(t.keys.data(), t.slots.data(), t.mask(), k), it == reference.end() ? -1 : it->second)
            << "key " << k << " step " << step;
      }
    }
  }
  EXPECT_GT(rebuilds, 0);
}

TEST(GpuCacheTableTest, FirstPositionKeepsEachKeysSmallestPosition) {
  constexpr int64_t kPositions = 5000;
  std::vector<int64_t> keys(table_capacity(kPositions), kEmpty);
  std::vector<int64_t> first(keys.size(), std::numeric_limits<int64_t>::max());
  std::unordered_map<int64_t, int64_t> reference;
  std::vector<int64_t> ids(kPositions);
  for (int64_t k = 0; k < kPositions; ++k) ids[k] = static_cast<int64_t>(bounded_u64(philox_u64(12, 0, k), 1500));
  // In reverse order: the minimum, not the last writer, must win (the kernel's threads race).
  for (int64_t k = kPositions - 1; k >= 0; --k) {
    first_position_insert(keys.data(), first.data(), keys.size() - 1, ids[k], k, plain_cas, plain_min);
  }
  for (int64_t k = 0; k < kPositions; ++k) reference.emplace(ids[k], k);
  for (int64_t key = 0; key < 1600; ++key) {
    const auto it = reference.find(key);
    EXPECT_EQ(first_position(keys.data(), first.data(), keys.size() - 1, key), it == reference.end() ? -1 : it->second);
  }
}

// plain_cas never fails; on the device a compare-and-swap loses whenever another thread claims the
// cell first. A key whose home is `cell` (not among the test's own keys): what a racing insert
// that claims exactly that cell would have inserted.
int64_t rival_key_at(uint64_t cell, uint64_t mask, int64_t& next_candidate) {
  while (table_home(next_candidate, mask) != cell) ++next_candidate;
  return next_candidate++;
}

TEST(GpuCacheTableTest, InsertsThatLoseTheirCompareAndSwapProbeOn) {
  constexpr int64_t kLines = 300;
  Table t(kLines);
  std::unordered_map<int64_t, int64_t> reference;
  int64_t candidate = int64_t{1} << 40;  // rivals' keys, above the test's own
  int64_t rivals = 0;
  uint64_t attempt = 0;
  // Every other attempt on a free cell loses to a rival that takes it (its slot written too, as
  // its own table_insert would).
  const auto losing_cas = [&](int64_t* address, int64_t expected, int64_t desired) {
    if (++attempt % 2 == 1 && (*address == kEmpty || *address == kTombstone) &&
        static_cast<int64_t>(reference.size()) < kLines - 1) {
      const auto cell = static_cast<uint64_t>(address - t.keys.data());
      const int64_t rival = rival_key_at(cell, t.mask(), candidate);
      *address = rival;
      t.slots[cell] = -rival;
      reference[rival] = -rival;
      ++rivals;
    }
    return plain_cas(address, expected, desired);
  };
  for (uint64_t step = 0; step < 5000; ++step) {
    const auto key = static_cast<int64_t>(bounded_u64(philox_u64(21, 1, step), 4 * kLines));
    if (reference.count(key) == 0 && static_cast<int64_t>(reference.size()) < kLines - 1) {
      const int64_t before = table_insert(t.keys.data(), t.slots.data(), t.mask(), key, 7 * key, losing_cas);
      ASSERT_TRUE(before == kEmpty || before == kTombstone) << "step " << step;
      reference[key] = 7 * key;
    } else if (reference.count(key) != 0) {
      ASSERT_TRUE(table_erase(t.keys.data(), t.mask(), key));
      reference.erase(key);
    }
    // Rivals leave too, so that the table keeps room and tombstones.
    if (step % 3 == 0) {
      for (auto it = reference.begin(); it != reference.end(); ++it) {
        if (it->first >= (int64_t{1} << 40)) {
          ASSERT_TRUE(table_erase(t.keys.data(), t.mask(), it->first));
          reference.erase(it);
          break;
        }
      }
    }
    if (table_needs_rebuild(static_cast<int64_t>(std::count(t.keys.begin(), t.keys.end(), kTombstone)), t.keys.size())) {
      Table fresh(kLines);
      for (std::size_t i = 0; i < t.keys.size(); ++i) {
        if (t.keys[i] >= 0)
          table_insert(fresh.keys.data(), fresh.slots.data(), fresh.mask(), t.keys[i], t.slots[i], plain_cas);
      }
      t = fresh;
    }
    if (step % 50 == 0) {
      for (const auto& [k, slot] : reference) {
        ASSERT_EQ(table_find(t.keys.data(), t.slots.data(), t.mask(), k), slot) << "key " << k << " step " << step;
        ASSERT_EQ(std::count(t.keys.begin(), t.keys.end(), k), 1) << "key " << k << " step " << step;
      }
      for (int64_t k = 0; k < 4 * kLines; ++k) {
        if (reference.count(k) == 0) {
          ASSERT_EQ(table_find(t.keys.data(), t.slots.data(), t.mask(), k), -1);
        }
      }
    }
  }
  EXPECT_GT(rivals, 100);
}

TEST(GpuCacheTableTest, FirstPositionsSurviveLosingTheirCompareAndSwap) {
  constexpr int64_t kPositions = 3000;
  std::vector<int64_t> keys(table_capacity(kPositions), kEmpty);
  std::vector<int64_t> first(keys.size(), std::numeric_limits<int64_t>::max());
  const uint64_t mask = keys.size() - 1;
  std::unordered_map<int64_t, int64_t> reference;
  int64_t candidate = int64_t{1} << 40;
  uint64_t attempt = 0;
  // A third of the attempts lose to another thread inserting the same key (at another position,
  // recorded with its own atomic minimum), a third to a thread inserting another key there.
  const auto losing_cas = [&](int64_t* address, int64_t expected, int64_t desired) {
    const uint64_t a = attempt++;
    const auto cell = static_cast<uint64_t>(address - keys.data());
    if (*address == kEmpty && a % 3 != 2) {
      const int64_t rival = a % 3 == 0 ? desired : rival_key_at(cell, mask, candidate);
      const auto pos = static_cast<int64_t>(bounded_u64(philox_u64(22, 0, a), 2 * kPositions));
      *address = rival;
      plain_min(&first[cell], pos);
      const auto it = reference.find(rival);
      if (it == reference.end() || pos < it->second) reference[rival] = pos;
    }
    return plain_cas(address, expected, desired);
  };
  for (int64_t k = kPositions - 1; k >= 0; --k) {
    const auto key = static_cast<int64_t>(bounded_u64(philox_u64(23, 0, static_cast<uint64_t>(k)), 1000));
    first_position_insert(keys.data(), first.data(), mask, key, k, losing_cas, plain_min);
    const auto it = reference.find(key);
    if (it == reference.end() || k < it->second) reference[key] = k;
  }
  for (const auto& [key, pos] : reference) {
    ASSERT_EQ(first_position(keys.data(), first.data(), mask, key), pos) << "key " << key;
    ASSERT_EQ(std::count(keys.begin(), keys.end(), key), 1) << "key " << key;
  }
  EXPECT_GT(attempt, 500u);
}

TEST(GpuCacheTableTest, ClockClassAndWindowCount) {
  EXPECT_EQ(clock_class(0, true, 0, 0), ClockClass::kKeep);
  EXPECT_EQ(clock_class(0, false, 2, 0), ClockClass::kKeep);
  EXPECT_EQ(clock_class(0, false, 0, 1), ClockClass::kSecondChance);
  EXPECT_EQ(clock_class(1, false, 0, 1), ClockClass::kVictim);
  EXPECT_EQ(clock_class(0, false, 0, 0), ClockClass::kVictim);
  EXPECT_TRUE(clock_reached(2, 3));
  EXPECT_FALSE(clock_reached(3, 3));
  EXPECT_EQ(clock_second_lap_need(10, 4, 3), 7);
  EXPECT_EQ(clock_second_lap_need(5, 4, 3), 5);
  EXPECT_EQ(clock_second_lap_need(5, 0, 0), 0);
  EXPECT_EQ(window_count(0, -1), 0);
  EXPECT_EQ(window_count(0, 1), 1);
  EXPECT_EQ(window_count(3, -1), 2);
}

// The device cache's state and its three kernels (probe, victim sweep, table update), run on the
// host in the order the kernels run them; the sweep visits slots in chunks of `chunk`, with each
// slot's victims_before taken as an exclusive scan over its chunk, as the sweep's grid does (a
// round of blocks x 1024 slots: a block scan plus the victims of the blocks before it).
class SerialDeviceCache {
 public:
  SerialDeviceCache(int64_t lines, int64_t base, int64_t num_keys, int64_t chunk)
      : lines_(lines),
        base_(base),
        chunk_(chunk),
        table_(lines),
        slot_key_(static_cast<std::size_t>(lines), -1),
        ref_(static_cast<std::size_t>(lines), 0),
        stamp_(static_cast<std::size_t>(lines), 0),
        reuse_(static_cast<std::size_t>(num_keys - base), 0) {}

  test::GpuCacheCounts gather(const std::vector<int64_t>& ids) {
    ++stamp_now_;
    test::GpuCacheCounts c;
    // Probe kernel.
    std::vector<uint8_t> hit(ids.size(), 0);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const int64_t slot = table_find(table_.keys.data(), table_.slots.data(), table_.mask(), ids[k]);
      if (slot < 0) continue;
      hit[k] = 1;
      ref_[static_cast<std::size_t>(slot)] = 1;
      stamp_[static_cast<std::size_t>(slot)] = stamp_now_;
      ++c.hits;
    }
    // Dedup kernels: misses into the first-occurrence table, then the first occurrences in order.
    std::vector<int64_t> pkeys(table_capacity(static_cast<int64_t>(ids.size())), kEmpty);
    std::vector<int64_t> pfirst(pkeys.size(), std::numeric_limits<int64_t>::max());
    const uint64_t pmask = pkeys.size() - 1;
    for (std::size_t k = ids.size(); k-- > 0;) {
      if (hit[k] == 0)
        first_position_insert(pkeys.data(), pfirst.data(), pmask, ids[k], static_cast<int64_t>(k), plain_cas,
                              plain_min);
    }
    std::vector<int64_t> fill_key;
    for (std::size_t k = 0; k < ids.size(); ++k) {
      if (hit[k] == 0 && first_position(pkeys.data(), pfirst.data(), pmask, ids[k]) == static_cast<int64_t>(k)) {
        fill_key.push_back(ids[k]);
      }
    }
    // Victim kernel.
    const auto m = static_cast<int64_t>(fill_key.size());
    std::vector<int64_t> fill_slot(static_cast<std::size_t>(m), -1);
    std::vector<int64_t> evict_key(static_cast<std::size_t>(m), -1);
    int64_t j = 0;
    for (; j < m && unused_ < lines_; ++j) take(fill_key, fill_slot, j, unused_++);
    int64_t need = m - j;
    int64_t taken = 0;
    int64_t cleared = 0;
    int64_t last = -1;
    for (int lap = 0; lap < 2 && taken < need && lines_ > 0; ++lap) {
      if (lap == 1) need = clock_second_lap_need(need, taken, cleared);
      for (int64_t begin = 0; begin < lines_ && taken < need; begin += chunk_) {
        const int64_t end = std::min(lines_, begin + chunk_);
        std::vector<ClockClass> cls;
        for (int64_t i = begin; i < end; ++i) {
          const auto s = static_cast<std::size_t>((hand_ + i) % lines_);
          cls.push_back(clock_class(lap, stamp_[s] == stamp_now_,
                                    reuse_[static_cast<std::size_t>(slot_key_[s] - base_)], ref_[s]));
        }
        int64_t before = taken;  // exclusive scan over the chunk
        for (int64_t i = begin; i < end; ++i) {
          const int64_t s = (hand_ + i) % lines_;
          const ClockClass k = cls[static_cast<std::size_t>(i - begin)];
          if (clock_reached(before, need)) {
            if (k == ClockClass::kSecondChance) {
              ref_[static_cast<std::size_t>(s)] = 0;
              ++cleared;
            }
            if (k == ClockClass::kVictim) {
              evict_key[static_cast<std::size_t>(j + before)] = slot_key_[static_cast<std::size_t>(s)];
              take(fill_key, fill_slot, j + before, s);
              last = s;
            }
          }
          if (k == ClockClass::kVictim) ++before;
        }
        taken = std::min(need, before);
      }
    }
    if (last >= 0) hand_ = (last + 1) % lines_;
    // Table update kernel.
    for (int64_t f = 0; f < m; ++f) {
      if (fill_slot[static_cast<std::size_t>(f)] < 0) {
        ++c.bypasses;
        continue;
      }
      ++c.fills;
      if (evict_key[static_cast<std::size_t>(f)] >= 0) {
        EXPECT_TRUE(table_erase(table_.keys.data(), table_.mask(), evict_key[static_cast<std::size_t>(f)]));
        ++table_.tombstones;
        ++c.evictions;
      }
      if (table_insert(table_.keys.data(), table_.slots.data(), table_.mask(), fill_key[static_cast<std::size_t>(f)],
                       fill_slot[static_cast<std::size_t>(f)], plain_cas) == kTombstone) {
        --table_.tombstones;
      }
    }
    if (table_needs_rebuild(table_.tombstones, table_.keys.size())) {
      Table fresh(lines_);
      for (int64_t s = 0; s < lines_; ++s) {
        if (slot_key_[static_cast<std::size_t>(s)] >= 0) {
          table_insert(fresh.keys.data(), fresh.slots.data(), fresh.mask(), slot_key_[static_cast<std::size_t>(s)], s,
                       plain_cas);
        }
      }
      table_ = fresh;
    }
    return c;
  }

  void window(const std::vector<int64_t>& ids, int32_t delta) {
    std::vector<int64_t> pkeys(table_capacity(static_cast<int64_t>(ids.size())), kEmpty);
    std::vector<int64_t> pfirst(pkeys.size(), std::numeric_limits<int64_t>::max());
    const uint64_t pmask = pkeys.size() - 1;
    for (std::size_t k = 0; k < ids.size(); ++k)
      first_position_insert(pkeys.data(), pfirst.data(), pmask, ids[k], static_cast<int64_t>(k), plain_cas, plain_min);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      if (first_position(pkeys.data(), pfirst.data(), pmask, ids[k]) != static_cast<int64_t>(k)) continue;
      int32_t& count = reuse_[static_cast<std::size_t>(ids[k] - base_)];
      count = window_count(count, delta);
    }
  }

  int64_t find(int64_t key) const { return table_find(table_.keys.data(), table_.slots.data(), table_.mask(), key); }
  int64_t hand() const { return hand_; }
  int32_t reuse(int64_t key) const { return reuse_[static_cast<std::size_t>(key - base_)]; }
  uint8_t referenced(int64_t slot) const { return ref_[static_cast<std::size_t>(slot)]; }

 private:
  void take(const std::vector<int64_t>& fill_key, std::vector<int64_t>& fill_slot, int64_t j, int64_t s) {
    fill_slot[static_cast<std::size_t>(j)] = s;
    slot_key_[static_cast<std::size_t>(s)] = fill_key[static_cast<std::size_t>(j)];
    ref_[static_cast<std::size_t>(s)] = 0;
    stamp_[static_cast<std::size_t>(s)] = stamp_now_;
  }

  int64_t lines_, base_, chunk_;
  Table table_;
  std::vector<int64_t> slot_key_;
  std::vector<uint8_t> ref_;
  std::vector<uint32_t> stamp_;
  std::vector<int32_t> reuse_;
  uint32_t stamp_now_ = 0;
  int64_t hand_ = 0;
  int64_t unused_ = 0;
};

TEST(GpuCacheTableTest, BatchedClockSweepMatchesTheNaiveModel) {
  constexpr int64_t kBase = 100;  // the hot tier's end: keys start here
  constexpr int64_t kKeys = 2000;
  for (const int64_t lines : {int64_t{1}, int64_t{7}, int64_t{64}, int64_t{500}}) {
    for (const int64_t chunk : {int64_t{1}, int64_t{32}, int64_t{1024}}) {
      SCOPED_TRACE("lines " + std::to_string(lines) + " chunk " + std::to_string(chunk));
      SerialDeviceCache device(lines, kBase, kKeys, chunk);
      test::NaiveGpuCache naive(lines);
      std::vector<std::vector<int64_t>> window;  // announced, not yet gathered
      for (uint64_t g = 0; g < 60; ++g) {
        // Batches skewed towards low keys (hot rows), a quarter repeating an earlier id.
        std::vector<int64_t> ids(static_cast<std::size_t>(50 + g % 7 * 40));
        for (std::size_t k = 0; k < ids.size(); ++k) {
          const uint64_t r = philox_u64(13 + lines, g, k);
          const auto span = static_cast<uint64_t>(r % 3 == 0 ? kKeys - kBase : 3 * lines + 10);
          ids[k] = k > 0 && r % 4 == 1 ? ids[bounded_u64(r >> 8, k)]
                                       : kBase + static_cast<int64_t>(bounded_u64(philox_u64(17, g, k), span));
        }
        // A window of 3: announce this batch, gather the oldest, consume it.
        device.window(ids, +1);
        naive.announce(ids);
        window.push_back(ids);
        if (window.size() < 3) continue;
        const std::vector<int64_t> batch = window.front();
        window.erase(window.begin());
        ASSERT_EQ(device.gather(batch), naive.gather(batch)) << "gather " << g;
        device.window(batch, -1);
        naive.consume(batch);
        if (g % 5 == 0) device.window(batch, -1), naive.consume(batch);  // a consume never announced
        ASSERT_EQ(device.hand(), naive.hand()) << "gather " << g;
        for (int64_t key = kBase; key < kKeys; ++key) {
          ASSERT_EQ(device.find(key), naive.find(key)) << "key " << key << " gather " << g;
          ASSERT_EQ(device.reuse(key), naive.reuse(key)) << "key " << key << " gather " << g;
        }
        for (int64_t s = 0; s < lines; ++s) ASSERT_EQ(device.referenced(s), naive.referenced(s)) << "slot " << s;
      }
    }
  }
}

TEST(GpuCacheTableTest, PinnedLinesAreNeverEvictedAndAFullyPinnedCacheBypasses) {
  SerialDeviceCache device(4, 0, 100, 32);
  test::NaiveGpuCache naive(4);
  const std::vector<int64_t> pinned{1, 2, 3, 4};
  device.window(pinned, +1);
  naive.announce(pinned);
  ASSERT_EQ(device.gather(pinned), naive.gather(pinned));
  const std::vector<int64_t> others{10, 11, 12};
  const test::GpuCacheCounts c = device.gather(others);
  EXPECT_EQ(c, naive.gather(others));
  EXPECT_EQ(c.bypasses, 3);
  EXPECT_EQ(c.evictions, 0);
  for (const int64_t key : pinned) EXPECT_GE(device.find(key), 0);
  device.window(pinned, -1);
  naive.consume(pinned);
  const test::GpuCacheCounts d = device.gather(others);
  EXPECT_EQ(d, naive.gather(others));
  EXPECT_EQ(d.fills, 3);
  EXPECT_EQ(d.evictions, 3);
}

}  // namespace
}  // namespace graphtier::cache::gpu
