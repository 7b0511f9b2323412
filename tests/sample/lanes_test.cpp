// The sampler's vector lanes (cpu/lanes.hpp) against the scalar functions they stand for: Philox
// blocks (core/rng.hpp), Floyd's sets (neighbor_steps.hpp's floyd_small), on every instruction set
// this CPU has (one that it lacks skips, saying so), and the grouped draws of the CPU sampler
// (cpu/neighbor_draws.hpp's draw_floyd_group) against its one-node draws.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "cpu/lanes.hpp"
#include "cpu/lanes_isa.hpp"
#include "cpu/neighbor_draws.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/sample/random.hpp"
#include "neighbor_steps.hpp"

namespace graphtier::sample {
namespace {

struct Isa {
  std::string name;
  bool present;
  cpu::LaneOps ops;
};

std::vector<Isa> instruction_sets() {
  std::vector<Isa> sets{{"scalar", true, cpu::lane_ops_scalar()}};
#if defined(__x86_64__)
  __builtin_cpu_init();
  sets.push_back({"avx512", __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd"), cpu::lane_ops_avx512()});
  sets.push_back({"avx2", __builtin_cpu_supports("avx2") != 0, cpu::lane_ops_avx2()});
#endif
  return sets;
}

/// Floyd's values t for f draws of d, with many repeats when d is close to f.
std::vector<int64_t> floyd_values(std::mt19937_64& rng, int64_t d, int f) {
  std::vector<int64_t> t(static_cast<std::size_t>(nbr::kWarpFloyd), -7);  // -7: the slots past f
  for (int i = 0; i < f; ++i) t[i] = static_cast<int64_t>(rng() % static_cast<uint64_t>(d - f + i + 1));
  return t;
}

std::vector<int64_t> floyd_reference(const std::vector<int64_t>& t, int64_t begin, int64_t d, int f) {
  std::vector<int64_t> picks(static_cast<std::size_t>(nbr::kWarpFloyd)), out(static_cast<std::size_t>(f));
  nbr::floyd_small(t.data(), begin, d, f, picks.data(), out.data());
  return out;
}

TEST(Lanes, PhiloxPairDrawsAreTheBlocksWordsOnEveryInstructionSet) {
  std::mt19937_64 rng(11);
  std::vector<uint64_t> index(200);
  for (uint64_t& i : index) i = rng();
  const uint64_t seed = rng(), stream = rng();
  std::vector<uint64_t> want(2 * index.size());
  for (std::size_t k = 0; k < index.size(); ++k) {
    const PhiloxBlock b = philox_block(seed, stream, index[k]);
    want[2 * k] = pair_half(b, 0);
    want[2 * k + 1] = pair_half(b, 1);
  }
  const auto check = [&](const std::string& name, auto pair_draws) {
    // Every count up to 70 covers the 4-vector steps, the 1-vector steps and every tail.
    for (int64_t n = 0; n <= 70; ++n) {
      std::vector<uint64_t> got(2 * static_cast<std::size_t>(n) + 2, 0xABAB);
      pair_draws(seed, stream, index.data() + 3, n, got.data());
      for (int64_t k = 0; k < 2 * n; ++k) ASSERT_EQ(got[k], want[6 + k]) << name << " n " << n << " draw " << k;
      EXPECT_EQ(got[2 * n], 0xABABu) << name << ": wrote past the draws";
    }
  };
  check("dispatch (" + std::string(cpu::lanes_name()) + ")", cpu::philox_pair_draws);
  for (const Isa& isa : instruction_sets()) {
    if (!isa.present) {
      std::cout << "[ SKIPPED  ] " << isa.name << ": this CPU lacks it\n";
      continue;
    }
    check(isa.name, isa.ops.pair_draws);
  }
}

TEST(Lanes, FloydSetsEqualFloydSmallOnEveryInstructionSet) {
  std::mt19937_64 rng(12);
  int64_t collided = 0;
  const auto sets = instruction_sets();
  for (int trial = 0; trial < 20000; ++trial) {
    const int f = 1 + static_cast<int>(rng() % nbr::kWarpFloyd);
    // Degrees close to f (many repeats), far above it, and past 2^32 (the 64-bit lanes), where
    // values that agree in their low 32 bits must not count as repeats.
    const bool wide = trial % 5 == 0;
    const int64_t d = wide ? (int64_t{1} << 33) + f
                           : f + 1 + static_cast<int64_t>(rng() % (trial % 2 == 0 ? 3 : (trial % 3 == 0 ? 1u << 30 : 100)));
    const int64_t begin = static_cast<int64_t>(rng() % 1000);
    auto t = floyd_values(rng, d, f);
    if (wide) {
      for (int i = 0; i < f; ++i) t[i] = static_cast<int64_t>(rng() % 3) + (static_cast<int64_t>(rng() % 2) << 32);
    }
    const auto want = floyd_reference(t, begin, d, f);
    for (int i = 0; i < f; ++i) collided += std::count(want.begin(), want.end(), begin + d - f + i);
    std::vector<int64_t> got(static_cast<std::size_t>(f) + 1, -1);
    cpu::floyd_small_lanes(t.data(), begin, d, f, got.data());
    ASSERT_EQ(std::vector<int64_t>(got.begin(), got.begin() + f), want) << "dispatch, f " << f << " d " << d;
    ASSERT_EQ(got[f], -1) << "wrote past the set";
    for (const Isa& isa : sets) {
      if (!isa.present) continue;
      uint32_t repeated = 0;
      for (int i = 1; i < f; ++i) {
        for (int k = 0; k < i; ++k) repeated |= t[k] == t[i] ? 1u << i : 0u;
      }
      ASSERT_EQ(isa.ops.repeats(t.data(), f, d), repeated) << isa.name << " f " << f;
      const uint32_t collided = nbr::floyd_warp_collisions(
          repeated, f, [&](int i) { return nbr::floyd_warp_ref(t[i], i, d, f); });
      std::vector<int64_t> placed(static_cast<std::size_t>(f) + 1, -1);
      isa.ops.place(t.data(), collided, f, d, begin, placed.data());
      ASSERT_EQ(std::vector<int64_t>(placed.begin(), placed.begin() + f), want) << isa.name << " f " << f;
      ASSERT_EQ(placed[f], -1);
    }
  }
  EXPECT_GT(collided, 5000);  // the collision rule ran
}

TEST(Lanes, GroupedDrawsEqualEachNodesDraws) {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 3000; ++trial) {
    const int64_t f = 1 + static_cast<int64_t>(rng() % nbr::kWarpFloyd);
    const cpu::DrawContext ctx{rng(), rng(), f, false, {}};
    ASSERT_TRUE(cpu::floyd_groups(ctx));
    const int n = 1 + static_cast<int>(rng() % cpu::kFloydGroup);
    std::vector<cpu::NodeColumn> columns;
    std::vector<int64_t> want;
    std::vector<int64_t> want_counts;
    std::vector<double> scratch;
    int64_t first = 0;
    for (int k = 0; k < n; ++k) {
      // Degrees below, at and above the fanout (all of a column, or Floyd's f of it).
      const int64_t d = std::max<int64_t>(0, f - 2 + static_cast<int64_t>(rng() % (k % 2 == 0 ? 5 : 300)));
      const cpu::NodeColumn c{static_cast<int64_t>(rng() % (int64_t{1} << 39)), first, d};
      first += d + static_cast<int64_t>(rng() % 3);
      const std::size_t before = want.size();
      cpu::draw_neighbours(ctx, c.node, c.first, c.first + c.degree, want, scratch);
      want_counts.push_back(static_cast<int64_t>(want.size() - before));
      columns.push_back(c);
    }
    std::vector<int64_t> got{-5};  // what was there before stays
    std::vector<int64_t> counts(static_cast<std::size_t>(n), -1);
    cpu::draw_floyd_group(ctx, columns, got, counts.data());
    ASSERT_EQ(got.front(), -5);
    ASSERT_EQ(std::vector<int64_t>(got.begin() + 1, got.end()), want) << "trial " << trial << " f " << f;
    ASSERT_EQ(counts, want_counts);
  }
  EXPECT_FALSE(cpu::floyd_groups({1, 2, 33, false, {}}));  // above the warp's fanouts
  EXPECT_FALSE(cpu::floyd_groups({1, 2, 5, true, {}}));    // with replacement
  EXPECT_FALSE(cpu::floyd_groups({1, 2, -1, false, {}}));  // every neighbour
}

}  // namespace
}  // namespace graphtier::sample
