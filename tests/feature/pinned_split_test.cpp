// The pinned tier's per-request split (pinned_split.hpp): given calibrated rates, a span and the
// row size they were measured at, the zero-copy share.
#include "graphtier/feature/pinned_split.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace graphtier::feature {
namespace {

constexpr double kOneMiB = 1 << 20;

// The floor's 128 B figures (docs/architecture.md, Performance floor): zero-copy 400M rows/s within
// 256 MiB, 32M rows/s over 16 GiB; the CPU gather + copy 20 GB/s = 156M rows/s.
PinnedPaths floor_128b() {
  PinnedPaths p;
  p.near_span_bytes = 256 * kOneMiB;
  p.near_zero_copy_rows_per_second = 400e6;
  p.tier_bytes = 16 * 1024 * kOneMiB;
  p.zero_copy_rows_per_second = 32e6;
  p.cpu_copy_rows_per_second = 156e6;
  return p;
}

TEST(PinnedSplitTest, RateFollowsTheSpanBetweenTheCalibratedPoints) {
  const PinnedPaths p = floor_128b();
  EXPECT_DOUBLE_EQ(zero_copy_rate(p, 1 * kOneMiB), 400e6);
  EXPECT_DOUBLE_EQ(zero_copy_rate(p, 256 * kOneMiB), 400e6);
  EXPECT_DOUBLE_EQ(zero_copy_rate(p, 16 * 1024 * kOneMiB), 32e6);
  EXPECT_DOUBLE_EQ(zero_copy_rate(p, 64 * 1024 * kOneMiB), 32e6);
  // 2 GiB is half-way on log(span) from 256 MiB to 16 GiB: the geometric mean of the two rates.
  EXPECT_NEAR(zero_copy_rate(p, 2048 * kOneMiB), std::sqrt(400e6 * 32e6), 1e3);
  // Monotone in the span.
  double previous = 1e30;
  for (double span = 128 * kOneMiB; span < 32 * 1024 * kOneMiB; span *= 1.5) {
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

TEST(PinnedSplitTest, ALinkBothPathsCrossCapsWhatTheCpuIsGiven) {
  // A link faster than the two together changes nothing.
  EXPECT_DOUBLE_EQ(split_share(300, 100, 400), 0.75);
  EXPECT_DOUBLE_EQ(split_share(300, 100, 1000), 0.75);
  // The H200's 512 B rows: zero-copy 96M rows/s, the CPU path 18M, one 55 GB/s link = 107M rows/s.
  // Zero-copy keeps what it moves in the link's time; the CPU's share is done well before it.
  const double share = split_share(96e6, 18e6, 107e6);
  EXPECT_NEAR(share, 96.0 / 107.0, 1e-12);
  EXPECT_LE((1 - share) / 18e6, share / 96e6);
  // Zero-copy alone at (or above) the link: all of it.
  EXPECT_DOUBLE_EQ(split_share(50, 20, 50), 1);
  EXPECT_DOUBLE_EQ(split_share(60, 20, 50), 1);
  // Never below the proportional share, and the all-or-nothing rule first.
  EXPECT_DOUBLE_EQ(split_share(100, 801, 300), 0);
  EXPECT_GE(split_share(40, 30, 50), 40.0 / 70.0);
  // Each share over a sweep of rates: the slower path's time never exceeds the link's.
  for (double zc = 5; zc <= 100; zc += 5) {
    for (double cpu = 5; cpu <= 100; cpu += 5) {
      const double link = 60;
      const double s = split_share(zc, cpu, link);
      if (s == 0 || s == 1) continue;
      const double time = std::max(s / zc, (1 - s) / cpu);
      EXPECT_LE(time, std::max(1 / (zc + cpu), 1 / link) * (1 + 1e-12)) << zc << " " << cpu;
    }
  }
}

TEST(PinnedSplitTest, NarrowRequestsGoToZeroCopyWideOnesMostlyToTheCpu) {
  const PinnedPaths p = floor_128b();
  EXPECT_NEAR(zero_copy_fraction(p, 100 * kOneMiB), 400.0 / 556.0, 1e-12);
  EXPECT_NEAR(zero_copy_fraction(p, 16 * 1024 * kOneMiB), 32.0 / 188.0, 1e-12);
  EXPECT_GT(zero_copy_fraction(p, 512 * kOneMiB), zero_copy_fraction(p, 4096 * kOneMiB));
  // One span measured (the tier is no wider than the narrow span): the tier's rate everywhere.
  PinnedPaths small = p;
  small.near_span_bytes = 0;
  EXPECT_DOUBLE_EQ(zero_copy_fraction(small, 1 * kOneMiB), zero_copy_fraction(small, 16 * 1024 * kOneMiB));
  // 4 KiB rows: zero-copy 50 GB/s = 12M rows/s against a CPU path of 5M rows/s at every span.
  PinnedPaths large;
  large.near_span_bytes = 256 * kOneMiB;
  large.near_zero_copy_rows_per_second = 12.5e6;
  large.tier_bytes = 16 * 1024 * kOneMiB;
  large.zero_copy_rows_per_second = 12e6;
  large.cpu_copy_rows_per_second = 5e6;
  EXPECT_NEAR(zero_copy_fraction(large, 8 * 1024 * kOneMiB), 0.7, 0.01);
  // Through a 50 GB/s link (12.2M rows/s at 4 KiB) zero-copy carries its rate over the link's.
  large.link_rows_per_second = 50e9 / 4096;
  EXPECT_NEAR(zero_copy_fraction(large, 8 * 1024 * kOneMiB),
              zero_copy_rate(large, 8 * 1024 * kOneMiB) / large.link_rows_per_second, 1e-12);
  EXPECT_GT(zero_copy_fraction(large, 8 * 1024 * kOneMiB), 0.98);
}

}  // namespace
}  // namespace graphtier::feature
