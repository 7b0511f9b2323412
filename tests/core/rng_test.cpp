#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "graphtier/core/rng.hpp"

namespace graphtier {
namespace {

// Known-answer vectors of Philox4x32-10 from the Random123 distribution (kat_vectors).
TEST(Philox, MatchesRandom123KnownAnswers) {
  struct Case {
    PhiloxBlock ctr;
    uint32_t k0, k1;
    PhiloxBlock expected;
  };
  const Case cases[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu, 0xffffffffu,
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u, 0x299f31d0u,
       {{0xd16cfe09u, 0x94fdcceb, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const auto& c : cases) {
    const PhiloxBlock out = philox4x32_10(c.ctr, c.k0, c.k1);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out.v[i], c.expected.v[i]) << "word " << i;
  }
}

TEST(Philox, DrawsArePureFunctionsOfTheirCounters) {
  EXPECT_EQ(philox_u64(7, 3, 11), philox_u64(7, 3, 11));
  EXPECT_NE(philox_u64(7, 3, 11), philox_u64(8, 3, 11));
  EXPECT_NE(philox_u64(7, 3, 11), philox_u64(7, 4, 11));
  EXPECT_NE(philox_u64(7, 3, 11), philox_u64(7, 3, 12));
}

TEST(Philox, BoundedDrawsAreUniform) {
  // Chi-square over 10 buckets, 100k draws: the 99.9% critical value for 9 dof is 27.88.
  constexpr int kBuckets = 10, kDraws = 100000;
  std::vector<int> counts(kBuckets, 0);
  for (uint64_t i = 0; i < kDraws; ++i) {
    const uint64_t b = bounded_u64(philox_u64(42, 0, i), kBuckets);
    ASSERT_LT(b, static_cast<uint64_t>(kBuckets));
    ++counts[b];
  }
  double chi2 = 0;
  const double expected = static_cast<double>(kDraws) / kBuckets;
  for (int c : counts) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 27.88);
}

TEST(Philox, UnitFloatsStayInRange) {
  EXPECT_EQ(u32_to_unit_float(0), 0.0f);
  EXPECT_LT(u32_to_unit_float(0xffffffffu), 1.0f);
  EXPECT_LT(u64_to_unit_double(~uint64_t{0}), 1.0);
  double sum = 0;
  for (uint64_t i = 0; i < 10000; ++i) sum += u32_to_unit_float(philox_block(1, 2, i).v[0]);
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
}

}  // namespace
}  // namespace graphtier
