#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "graphtier/core/portable_math.hpp"
#include "graphtier/core/rng.hpp"

namespace graphtier {
namespace {

// fdlibm's log is within 1 ulp of the true value, and so is glibc's: the two may differ by one
// ulp, never more, over the domain the samplers use (Efraimidis-Spirakis keys: u in [2^-60, 1)).
TEST(PortableLog, WithinOneUlpOfLibm) {
  int64_t differ = 0;
  for (int64_t i = 0; i < 2'000'000; ++i) {
    double u = u64_to_unit_double(philox_u64(7, 1, static_cast<uint64_t>(i)));
    if (i % 5 == 0) u = std::ldexp(u, -static_cast<int>(i % 60));  // down to 2^-60
    u = std::fmax(u, 0x1p-60);
    const double mine = portable_log(u), libm = std::log(u);
    if (mine == libm) continue;
    ++differ;
    ASSERT_EQ(std::nextafter(libm, mine), mine) << std::hexfloat << "log(" << u << ")";
  }
  // Equal on most inputs; the rest are the 1-ulp cases, which is why the samplers do not use libm.
  EXPECT_LT(differ, 2'000'000 / 5);
}

// The exact bits are the contract between the host and the device (a GPU test checks the device
// against these same cases): any change to the polynomial or to its order of operations shows here.
TEST(PortableLog, GoldenBits) {
  struct Case {
    double x, log;
  };
  const Case cases[] = {
      {1.0, 0.0},
      {2.0, 0x1.62e42fefa39efp-1},
      {0.5, -0x1.62e42fefa39efp-1},
      {0x1.999999999999ap-4, -0x1.26bb1bbb55515p+1},
      {0x1p-60, -0x1.4cb5ecf0a965p+5},
      {0x1.ffffffff2419p-1, -0x1.b7ce00005e728p-34},
      {0x1.000001ad7f29bp+0, 0x1.ad7f2847b6492p-24},
      {3.0, 0x1.193ea7aad030ap+0},  // glibc: ...30bp+0, one ulp above
  };
  for (const Case& c : cases) EXPECT_EQ(portable_log(c.x), c.log) << std::hexfloat << "log(" << c.x << ")";
}

TEST(PortableLog, MonotoneAcrossTheReductionBoundaries) {
  // The reduction switches at m = sqrt(2) and the evaluation at m ~ 1.15 and ~0.85: no step back.
  for (const double edge : {std::sqrt(2.0), 1.15, 0.85, 1.0, 0.5, 0.25}) {
    double x = edge;
    for (int i = 0; i < 64; ++i) x = std::nextafter(x, 0.0);
    double previous = portable_log(x);
    for (int i = 0; i < 128; ++i) {
      x = std::nextafter(x, 2.0);
      const double now = portable_log(x);
      ASSERT_GE(now, previous) << std::hexfloat << "at " << x;
      previous = now;
    }
  }
}

}  // namespace
}  // namespace graphtier
