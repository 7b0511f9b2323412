// The cache policy: CLOCK's second chance by hand, random eviction, window buffering (pinned lines
// survive pressure, counters return to zero), and a full cache of pinned lines bypasses.
#include "graphtier/cache/cache_policy.hpp"

#include <gtest/gtest.h>

#include <set>
#include <unordered_map>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/rng.hpp"

namespace graphtier::cache {
namespace {

struct Result {
  std::vector<int64_t> slots;
  std::vector<LookupKind> kinds;
  LookupCounts counts;
};

Result lookup(CachePolicy& policy, std::vector<int64_t> keys) {
  Result r;
  r.slots.resize(keys.size());
  r.kinds.resize(keys.size());
  r.counts = policy.lookup(keys, r.slots, r.kinds);
  return r;
}

TEST(CachePolicyTest, ClockGivesASecondChanceToReferencedLines) {
  CachePolicy policy(3, Eviction::kClock);
  for (const int64_t key : {10, 11, 12}) EXPECT_EQ(lookup(policy, {key}).kinds[0], LookupKind::kFill);
  EXPECT_EQ(policy.find(10), 0);
  EXPECT_EQ(policy.find(11), 1);
  EXPECT_EQ(policy.find(12), 2);
  // A hit sets 10's reference bit: the hand (at slot 0) clears it and takes 11 instead.
  EXPECT_EQ(lookup(policy, {10}).kinds[0], LookupKind::kHit);
  Result r = lookup(policy, {13});
  EXPECT_EQ(r.kinds[0], LookupKind::kFill);
  EXPECT_EQ(r.slots[0], 1);
  EXPECT_EQ(policy.find(11), -1);
  EXPECT_EQ(policy.find(10), 0);
  // The hand moved on to slot 2 (12, unreferenced), then wraps to 10, whose bit is now clear.
  EXPECT_EQ(lookup(policy, {14}).slots[0], 2);
  EXPECT_EQ(policy.find(12), -1);
  EXPECT_EQ(lookup(policy, {15}).slots[0], 0);
  EXPECT_EQ(policy.find(10), -1);
  EXPECT_EQ(policy.size(), 3);
}

TEST(CachePolicyTest, RepeatsInOneLookupFillOnceThenHit) {
  CachePolicy policy(4, Eviction::kClock);
  const Result r = lookup(policy, {7, 8, 7, 7, 8});
  EXPECT_EQ(r.counts.fills, 2);
  EXPECT_EQ(r.counts.hits, 3);
  EXPECT_EQ(r.kinds[0], LookupKind::kFill);
  EXPECT_EQ(r.kinds[2], LookupKind::kHit);
  EXPECT_EQ(r.slots[2], r.slots[0]);
  EXPECT_EQ(r.slots[4], r.slots[1]);
}

TEST(CachePolicyTest, ALookupNeverEvictsALineItUses) {
  for (const Eviction e : {Eviction::kClock, Eviction::kRandom}) {
    CachePolicy policy(3, e, 5);
    // Five distinct keys into three lines: three fills, two bypasses, and no slot handed out twice.
    const Result r = lookup(policy, {1, 2, 3, 4, 5, 1});
    EXPECT_EQ(r.counts.fills, 3) << eviction_name(e);
    EXPECT_EQ(r.counts.bypasses, 2);
    EXPECT_EQ(r.counts.hits, 1);
    EXPECT_EQ(r.slots[3], -1);
    EXPECT_EQ(r.kinds[4], LookupKind::kBypass);
    EXPECT_EQ(std::set<int64_t>(r.slots.begin(), r.slots.begin() + 3).size(), 3u);
    EXPECT_EQ(r.slots[5], r.slots[0]);
  }
}

TEST(CachePolicyTest, ALookupInPartsKeepsEveryPartsLines) {
  for (const Eviction e : {Eviction::kClock, Eviction::kRandom}) {
    CachePolicy policy(3, e, 5);
    lookup(policy, {1, 2});
    // A part that continues the lookup: 3 takes the free line; 4 and 5 find every line in use by
    // the lookup's parts and bypass, and 1 still hits its line from the first part.
    std::vector<int64_t> keys{3, 4, 5, 1};
    std::vector<int64_t> slots(keys.size());
    std::vector<LookupKind> kinds(keys.size());
    const LookupCounts part = policy.lookup(keys, slots, kinds, /*continues=*/true);
    EXPECT_EQ(part.fills, 1) << eviction_name(e);
    EXPECT_EQ(part.bypasses, 2);
    EXPECT_EQ(part.hits, 1);
    EXPECT_EQ(policy.find(1), slots[3]);
    EXPECT_NE(policy.find(2), -1);
    // A new lookup may evict them again.
    const Result r = lookup(policy, {4});
    EXPECT_EQ(r.kinds[0], LookupKind::kFill);
    EXPECT_EQ(policy.size(), 3);
  }
}

TEST(CachePolicyTest, ZeroSlotsBypassEverything) {
  CachePolicy policy(0, Eviction::kClock);
  const Result r = lookup(policy, {1, 1, 2});
  EXPECT_EQ(r.counts.bypasses, 3);
  policy.announce(std::vector<int64_t>{1});
  EXPECT_EQ(policy.reuse_count(1), 1);
}

TEST(CachePolicyTest, WindowPinsLinesAgainstPressureAndCountersReturnToZero) {
  for (const Eviction e : {Eviction::kClock, Eviction::kRandom}) {
    CachePolicy policy(8, e, 9);
    // Three minibatches announced ahead; 1 and 2 are in two of them, 3 in one.
    policy.announce(std::vector<int64_t>{1, 2, 3, 3});
    policy.announce(std::vector<int64_t>{1, 2});
    policy.announce(std::vector<int64_t>{1});
    EXPECT_EQ(policy.reuse_count(1), 3);
    EXPECT_EQ(policy.reuse_count(2), 2);
    EXPECT_EQ(policy.reuse_count(3), 1);  // repeats in one minibatch count once
    lookup(policy, {1, 2, 3});
    EXPECT_EQ(policy.pinned_lines(), 3);
    // Heavy pressure: a thousand other keys stream through; the pinned lines stay.
    for (int64_t key = 100; key < 1100; ++key) lookup(policy, {key});
    EXPECT_NE(policy.find(1), -1) << eviction_name(e);
    EXPECT_NE(policy.find(2), -1);
    EXPECT_NE(policy.find(3), -1);
    policy.consume(std::vector<int64_t>{1, 2, 3, 3});
    EXPECT_EQ(policy.reuse_count(3), 0);
    EXPECT_EQ(policy.pinned_lines(), 2);
    // Unpinned now: pressure evicts 3.
    for (int64_t key = 2000; key < 2100; ++key) lookup(policy, {key});
    EXPECT_EQ(policy.find(3), -1);
    EXPECT_NE(policy.find(1), -1);
    policy.consume(std::vector<int64_t>{1, 2});
    policy.consume(std::vector<int64_t>{1});
    EXPECT_EQ(policy.reuse_count(1), 0);
    EXPECT_EQ(policy.reuse_count(2), 0);
    EXPECT_EQ(policy.pinned_lines(), 0);
    // Consuming what was never announced changes nothing.
    policy.consume(std::vector<int64_t>{1, 42});
    EXPECT_EQ(policy.reuse_count(1), 0);
    for (int64_t key = 3000; key < 3100; ++key) lookup(policy, {key});
    EXPECT_EQ(policy.find(1), -1);
    EXPECT_EQ(policy.find(2), -1);
  }
}

TEST(CachePolicyTest, AnnouncedBeforeCachedIsPinnedOnEntry) {
  CachePolicy policy(2, Eviction::kClock);
  policy.announce(std::vector<int64_t>{5});
  EXPECT_EQ(policy.pinned_lines(), 0);
  lookup(policy, {5});
  EXPECT_EQ(policy.pinned_lines(), 1);
  for (int64_t key = 10; key < 50; ++key) lookup(policy, {key});
  EXPECT_EQ(policy.find(5), 0);
}

TEST(CachePolicyTest, EveryLinePinnedBypassesWithoutBlocking) {
  for (const Eviction e : {Eviction::kClock, Eviction::kRandom}) {
    CachePolicy policy(4, e, 3);
    const std::vector<int64_t> window{1, 2, 3, 4};
    policy.announce(window);
    lookup(policy, window);
    EXPECT_EQ(policy.pinned_lines(), 4);
    const Result r = lookup(policy, {9, 10, 1});
    EXPECT_EQ(r.counts.bypasses, 2) << eviction_name(e);
    EXPECT_EQ(r.counts.hits, 1);
    policy.consume(window);
    EXPECT_EQ(lookup(policy, {9}).kinds[0], LookupKind::kFill);
  }
}

// Property: against a naive model, every hit names the slot the key was last given, no slot holds
// two keys, and a pinned key is never evicted.
TEST(CachePolicyTest, RandomTraceMatchesNaiveBookkeeping) {
  for (const Eviction e : {Eviction::kClock, Eviction::kRandom}) {
    CachePolicy policy(16, e, 11);
    std::unordered_map<int64_t, int64_t> model;  // key -> slot
    std::unordered_map<int64_t, int> pins;
    for (uint64_t step = 0; step < 2000; ++step) {
      std::vector<int64_t> keys(1 + philox_u64(1, step, 0) % 12);
      for (std::size_t k = 0; k < keys.size(); ++k) keys[k] = static_cast<int64_t>(philox_u64(2, step, k) % 40);
      if (step % 7 == 0) {
        policy.announce(keys);
        for (const int64_t key : std::set<int64_t>(keys.begin(), keys.end())) ++pins[key];
      }
      const Result r = lookup(policy, keys);
      for (std::size_t k = 0; k < keys.size(); ++k) {
        if (r.kinds[k] == LookupKind::kHit) {
          ASSERT_EQ(model.at(keys[k]), r.slots[k]);
        } else if (r.kinds[k] == LookupKind::kFill) {
          for (auto it = model.begin(); it != model.end();) {
            if (it->second == r.slots[k]) {
              ASSERT_EQ(pins[it->first], 0) << "evicted a pinned key " << it->first;
              it = model.erase(it);
            } else {
              ++it;
            }
          }
          model[keys[k]] = r.slots[k];
        }
      }
      for (const auto& [key, slot] : model) ASSERT_EQ(policy.find(key), slot);
      if (step % 7 == 3) {
        // Consume the oldest pinned keys one minibatch's worth at a time.
        std::vector<int64_t> done;
        for (auto& [key, n] : pins) {
          if (n > 0) {
            done.push_back(key);
            --n;
          }
        }
        policy.consume(done);
      }
    }
    for (const auto& [key, n] : pins) EXPECT_EQ(policy.reuse_count(key), n);
  }
}

TEST(CachePolicyTest, RejectsBadArguments) {
  EXPECT_THROW(CachePolicy(-1, Eviction::kClock), InvalidArgument);
  CachePolicy policy(2, Eviction::kClock);
  std::vector<int64_t> keys{1, 2}, slots(1);
  std::vector<LookupKind> kinds(2);
  EXPECT_THROW(policy.lookup(keys, slots, kinds), InvalidArgument);
  EXPECT_EQ(parse_eviction("random"), Eviction::kRandom);
  EXPECT_THROW(parse_eviction("lru"), InvalidArgument);
}

}  // namespace
}  // namespace graphtier::cache
