// FlatMap against std::unordered_map under random inserts, updates and erases: backward-shift
// deletion must keep every remaining key reachable.
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

#include "graphtier/cache/flat_map.hpp"

namespace graphtier::cache {
namespace {

TEST(FlatMap, MatchesUnorderedMapUnderChurn) {
  std::mt19937_64 rng(3);
  FlatMap<int32_t> map(4);  // small: forces growth and long probe runs
  std::unordered_map<int64_t, int32_t> want;
  // Few distinct keys, many collisions in a small table.
  std::uniform_int_distribution<int64_t> key(0, 300);
  for (int step = 0; step < 200000; ++step) {
    const int64_t k = key(rng);
    switch (rng() % 3) {
      case 0:
        if (want.count(k) == 0) {
          map.insert(k, step);
          want[k] = step;
        }
        break;
      case 1:
        EXPECT_EQ(map.erase(k), want.erase(k) == 1) << "step " << step;
        break;
      default:
        if (int32_t* v = map.find(k)) {
          *v += 1;
          ++want.at(k);
        }
    }
    ASSERT_EQ(map.size(), want.size()) << "step " << step;
  }
  for (int64_t k = 0; k <= 300; ++k) {
    const int32_t* v = map.find(k);
    ASSERT_EQ(v != nullptr, want.count(k) == 1) << "key " << k;
    if (v != nullptr) {
      EXPECT_EQ(*v, want.at(k)) << "key " << k;
    }
  }
}

TEST(FlatMap, LargeKeysAndEmptyMap) {
  FlatMap<int64_t> map;
  EXPECT_EQ(map.find(0), nullptr);
  EXPECT_FALSE(map.erase(7));
  const int64_t big = int64_t{1} << 40;
  map.insert(big, 5);
  map.insert(0, 6);
  ASSERT_NE(map.find(big), nullptr);
  EXPECT_EQ(*map.find(big), 5);
  EXPECT_TRUE(map.erase(big));
  EXPECT_EQ(map.find(big), nullptr);
  EXPECT_EQ(*map.find(0), 6);
}

}  // namespace
}  // namespace graphtier::cache
