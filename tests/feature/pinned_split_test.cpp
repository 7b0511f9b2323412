// The pinned tier's per-request split (pinned_split.hpp): given calibrated rates, a span and the
// row size they were measured at, the zero-copy share.
#include "graphtier/feature/pinned_split.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace graphtier::feature {
namespace {

constexpr double kMiB = 1 << 20;

// The floor's 128 B figures (docs/architecture.md, Performance floor): zero-copy 400M rows/s within
// 256 MiB, 32M rows/s over 16 GiB; the CPU gather + copy 20 GB/s = 156M rows/s.
PinnedPaths floor_128b() {
  PinnedPaths p;
  p.near_span_bytes = 256 * kMiB;
  p.near_zero_copy_rows_per_second = 400e6;
  p.tier_bytes = 16 * 1024 * kMiB;
  p.zero_copy_rows_per_second = 32e6;
  p.cpu_copy_rows_per_second = 156e6;
  return p;
}

TEST(PinnedSplitTest, RateFollowsTheSpanBetweenTheCalibratedPoints) {
  const PinnedPaths p = floor_128b();
  EXPECT_DOUBLE_EQ(zero_copy_rate(p, 1 * kMiB), 400e6);
  EXPECT_DOUBLE_EQ(zero_copy_rate(p, 256 * kMiB), 400e6);
  EXPECT_DOUBLE_EQ(zero_copy_rate(p, 16 * 1024 * kMiB), 32e6);
  EXPECT_DOUBLE_EQ(zero_copy_rate(p, 64 * 1024 * kMiB), 32e6);
  // 2 GiB is half-way on log(span) from 256 MiB to 16 GiB: the geometric mean of the two rates.
  EXPECT_NEAR(zero_copy_rate(p, 2048 * kMiB), std::sqrt(400e6 * 32e6), 1e3);
  // Monotone in the span.
  double previous = 1e30;
  for (double span = 128 * kMiB; span < 32 * 1024 * kMiB; span *= 1.5) {
    const double r = zero_copy_rate(p, span);
    EXPECT_LE(r, previous);
    previous = r;
  }
}

TEST(PinnedSplitTest, ShareIsProportionalToTheRatesAndAllOrNothingBeyondEightTimes) {
  EXPECT_DOUBLE_EQ(split_share(0, 0), 0);
  EXPECT_DOUBLE_EQ(split_share(100, 100), 0.5);
  EXPECT_DOUBLE_EQ(split_share(300, 100), 0.75);
  EXPECT_DOUBLE_EQ(split_share(801, 100), 1);
  EXPECT_DOUBLE_EQ(split_share(100, 801), 0);
  EXPECT_DOUBLE_EQ(split_share(1, 0), 1);
}

TEST(PinnedSplitTest, NarrowRequestsGoToZeroCopyWideOnesMostlyToTheCpu) {
  const PinnedPaths p = floor_128b();
  EXPECT_NEAR(zero_copy_fraction(p, 100 * kMiB), 400.0 / 556.0, 1e-12);
  EXPECT_NEAR(zero_copy_fraction(p, 16 * 1024 * kMiB), 32.0 / 188.0, 1e-12);
  EXPECT_GT(zero_copy_fraction(p, 512 * kMiB), zero_copy_fraction(p, 4096 * kMiB));
  // One span measured (the tier is no wider than the narrow span): the tier's rate everywhere.
  PinnedPaths small = p;
  small.near_span_bytes = 0;
  EXPECT_DOUBLE_EQ(zero_copy_fraction(small, 1 * kMiB), zero_copy_fraction(small, 16 * 1024 * kMiB));
  // 4 KiB rows: zero-copy 50 GB/s = 12M rows/s against a CPU path of 5M rows/s at every span.
  PinnedPaths large;
  large.near_span_bytes = 256 * kMiB;
  large.near_zero_copy_rows_per_second = 12.5e6;
  large.tier_bytes = 16 * 1024 * kMiB;
  large.zero_copy_rows_per_second = 12e6;
  large.cpu_copy_rows_per_second = 5e6;
  EXPECT_NEAR(zero_copy_fraction(large, 8 * 1024 * kMiB), 0.7, 0.01);
}

}  // namespace
}  // namespace graphtier::feature
