#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "graphtier/core/error.hpp"
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

TEST(ThreadPool, CapsAHugeRequestAtAFewThreadsPerCore) {
  const int cap = max_worker_threads();
  EXPECT_EQ(cap, kMaxThreadsPerCore * static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  for (int requested : {cap + 1, 100000}) {
    ThreadPool pool(requested);
    EXPECT_EQ(pool.size(), cap) << requested << " threads requested";
    std::atomic<int64_t> sum{0};
    pool.parallel_for(0, 100, 1, [&](int64_t lo, int64_t) { sum += lo; });
    EXPECT_EQ(sum.load(), 4950);
  }
  EXPECT_EQ(cap_worker_threads(3, "test"), 3);
}

TEST(ThreadPool, DefaultSizeIsTheCoresTheThreadMayUse) {
  cpu_set_t saved;
  ASSERT_EQ(::sched_getaffinity(0, sizeof(saved), &saved), 0);
  EXPECT_EQ(usable_cores(), CPU_COUNT(&saved));
  // Confined to the first core it may use (as `taskset -c N` does), the default pool has one thread.
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &saved)) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  ASSERT_EQ(::sched_setaffinity(0, sizeof(one), &one), 0);
  const int confined = usable_cores();
  const int pool_size = ThreadPool().size();
  ASSERT_EQ(::sched_setaffinity(0, sizeof(saved), &saved), 0);
  EXPECT_EQ(confined, 1);
  EXPECT_EQ(pool_size, 1);
}

/// The body of the child below: exits 3 with the error on stderr when starting a pool fails with
/// IoError, 0 when it starts.
[[noreturn]] void start_pool_without_thread_allowance() {
  if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) std::_Exit(4);
  const rlimit none{0, 0};
  if (::setrlimit(RLIMIT_NPROC, &none) != 0) std::_Exit(5);
  try {
    ThreadPool pool(4);
  } catch (const IoError& e) {
    std::fprintf(stderr, "%s (errno %d)\n", e.what(), e.code().value());
    std::_Exit(3);
  }
  std::_Exit(0);
}

// A thread that cannot be started is an IoError naming the pool, not a crash or a hang. The child
// drops to an unprivileged user where it is root (root is exempt from RLIMIT_NPROC) and allows
// itself no further processes, so the first worker's start fails with EAGAIN every time.
TEST(ThreadPool, AFailedThreadStartIsAnIoError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(start_pool_without_thread_allowance(), testing::ExitedWithCode(3),
              "thread pool: cannot start thread 2 of 4 .*thread limit.*errno 11");
}

}  // namespace
}  // namespace graphtier
