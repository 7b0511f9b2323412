// The storage-access accumulator's estimate: storage-range ids times the reads per such id observed.
#include "accumulator.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace graphtier::loader
