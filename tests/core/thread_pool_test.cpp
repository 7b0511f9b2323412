#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "graphtier/core/thread_pool.hpp"

namespace graphtier {
namespace {

TEST(ThreadPool, CoversEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    std::vector<std::atomic<int>> hits(1003);
    pool.parallel_for(0, 1003, 17, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) hits[i].fetch_add(1);
    });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
}

TEST(ThreadPool, PartsSplitTheRangeContiguously) {
  ThreadPool pool(3);
  std::vector<std::pair<int64_t, int64_t>> parts(3);
  pool.parallel_parts(10, 20, [&](int part, int64_t lo, int64_t hi) { parts[part] = {lo, hi}; });
  EXPECT_EQ(parts[0].first, 10);
  EXPECT_EQ(parts[0].second, parts[1].first);
  EXPECT_EQ(parts[1].second, parts[2].first);
  EXPECT_EQ(parts[2].second, 20);
}

TEST(ThreadPool, RethrowsTheFirstFailureAndStaysUsable) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.parallel_for(0, 100, 1,
                                 [](int64_t lo, int64_t) {
                                   if (lo == 37) throw std::runtime_error("chunk 37 failed");
                                 }),
               std::runtime_error);
  std::atomic<int64_t> sum{0};
  pool.parallel_for(0, 100, 7, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 4950);
}

TEST(ThreadPool, EmptyRangeRunsNothing) {
  ThreadPool pool(2);
  bool ran = false;
  pool.parallel_for(5, 5, 1, [&](int64_t, int64_t) { ran = true; });
  EXPECT_FALSE(ran);
}

TEST(ThreadPool, ManySmallJobsDoNotDeadlock) {
  ThreadPool pool(4);
  int64_t total = 0;
  for (int round = 0; round < 2000; ++round) {
    std::atomic<int64_t> sum{0};
    pool.parallel_for(0, 8, 1, [&](int64_t lo, int64_t) { sum += lo; });
    total += sum.load();
  }
  EXPECT_EQ(total, 2000 * 28);
}

}  // namespace
}  // namespace graphtier
