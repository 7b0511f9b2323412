// The storage-access accumulator's estimate: storage-range ids times the reads per such id observed.
#include "accumulator.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace graphtier::loader {
namespace {

feature::GatherStats read_rows(int64_t storage_rows, int64_t gpu_cache_hits) {
  feature::GatherStats s;
  s.storage.rows = storage_rows;
  s.gpu_cache.rows = gpu_cache_hits;
  return s;
}

TEST(Accumulator, CountsStorageRangeIdsBeforeAnyGather) {
  const Accumulator a(/*storage_begin=*/100, /*target_depth=*/64, /*max_merge=*/4);
  const std::vector<int64_t> ids{5, 99, 100, 250, 101, 7};
  EXPECT_EQ(a.expected_reads(ids), 3);
  EXPECT_EQ(a.expected_reads({}), 0);
}

TEST(Accumulator, ScalesByTheObservedReadsPerStorageIdAndIgnoresHostRangeCacheHits) {
  Accumulator a(100, 64, 4);
  // 8 storage-range ids of which the caches absorbed 6; the 40 GPU-cache hits on host-range rows
  // (ids below 100) absorb no storage read and must not lower the estimate further.
  std::vector<int64_t> gathered(40, 50);
  for (int64_t v = 100; v < 108; ++v) gathered.push_back(v);
  a.record(gathered, read_rows(/*storage_rows=*/2, /*gpu_cache_hits=*/46));
  const std::vector<int64_t> next{100, 101, 102, 103, 104, 105, 106, 107, 1, 2};
  EXPECT_EQ(a.expected_reads(next), 2);  // 8 storage ids x 2/8
  a.record(next, read_rows(8, 0));        // this time every storage id was read: 10 of 16
  EXPECT_EQ(a.expected_reads(next), 5);   // ceil(8 x 10/16)
}

TEST(Accumulator, WantsMoreOnlyBelowTheDepthWithReadsAndRoom) {
  const Accumulator a(0, 64, 3);
  EXPECT_FALSE(a.wants_more(0, 1)) << "nothing to read: merging buys nothing";
  EXPECT_TRUE(a.wants_more(10, 1));
  EXPECT_TRUE(a.wants_more(63, 2));
  EXPECT_FALSE(a.wants_more(64, 1)) << "the depth is reached";
  EXPECT_FALSE(a.wants_more(10, 3)) << "max_merge";
}

// Types 0 and 2 have tables (storage from local id 10, depths 8 and 4), type 1 none.
TEST(TypedAccumulator, EstimatesEachTypeAndStopsWhenAnyTypeReachesItsDepth) {
  std::vector<std::optional<Accumulator>> types;
  types.emplace_back(Accumulator(10, 8, 99));
  types.emplace_back(std::nullopt);
  types.emplace_back(Accumulator(10, 4, 99));
  TypedAccumulator a(std::move(types), 3);
  const std::vector<std::vector<int64_t>> ids{{1, 10, 11}, {50, 60}, {12, 2}};
  std::vector<int64_t> expected(3, 0);
  EXPECT_EQ(a.add_expected(ids, expected), 3);
  EXPECT_EQ(expected, (std::vector<int64_t>{2, 0, 1})) << "a type without features expects nothing";
  EXPECT_TRUE(a.wants_more(expected, 1));
  EXPECT_FALSE(a.wants_more(std::vector<int64_t>{2, 0, 4}, 1)) << "type 2 reached its depth";
  EXPECT_FALSE(a.wants_more(std::vector<int64_t>{0, 9, 0}, 1)) << "no storage reads in a type with a table";
  EXPECT_FALSE(a.wants_more(expected, 3)) << "max_merge";
  // Type 2's caches absorbed every read: its estimate drops to 0, type 0's stays.
  a.record(2, std::vector<int64_t>{12, 13}, read_rows(0, 0));
  std::vector<int64_t> again(3, 0);
  EXPECT_EQ(a.add_expected(ids, again), 2);
  EXPECT_EQ(again, (std::vector<int64_t>{2, 0, 0}));
}

}  // namespace
}  // namespace graphtier::loader
