// The row-normalisation sum of the layer-wise samplers (layer_row_sums.hpp): the host's pairwise
// tree against its naive definition, and the device's decomposition (lanes of 8, warps of 32 by
// shuffles, levels of 256) replayed on the host with the same functions the kernels call, down to
// the shuffles' lane semantics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "layer_row_sums.hpp"
#include "layer_sampler_test_util.hpp"

namespace graphtier::sample {
namespace {

/// Positive terms like the samplers' 1 / w_u: mixed scales, so that grouping changes the rounding.
std::vector<double> terms(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint64_t> weight(1, uint64_t{1} << 40);
  std::uniform_int_distribution<int> small(0, 3);
  std::vector<double> x(static_cast<std::size_t>(n));
  for (double& v : x) v = 1.0 / static_cast<double>(small(rng) == 0 ? weight(rng) % 97 + 1 : weight(rng));
  return x;
}

double left_to_right(const std::vector<double>& x) {
  double s = 0;
  for (const double v : x) s += v;
  return s;
}

/// __shfl_down_sync(v, offset) for offsets 1, 2, 4, 8, 16 as row_sums_level_kernel runs them: lane l
/// reads lane l + offset, or its own value past lane 31. Returns lane 0's value.
double warp_shuffle_tree(std::vector<double> lanes) {
  for (int offset = 1; offset < layer::kTreeLanes; offset <<= 1) {
    std::vector<double> next(lanes.size());
    for (int l = 0; l < layer::kTreeLanes; ++l) {
      next[l] = add_rn(lanes[l], l + offset < layer::kTreeLanes ? lanes[l + offset] : lanes[l]);
    }
    lanes.swap(next);
  }
  return lanes[0];
}

/// The device's row sums replayed: `levels` levels of row_sums_level_kernel over the rows laid out
/// by `start` (their terms in x), then each row's value at the last level.
std::vector<double> device_row_sums(const std::vector<int64_t>& start, const std::vector<double>& x, int levels) {
  const auto n = static_cast<int64_t>(start.size()) - 1;
  std::vector<double> below = x;
  for (int level = 1; level <= levels; ++level) {
    const int64_t slots = layer::tree_level_slots(n, start[n], level);
    std::vector<double> above(static_cast<std::size_t>(slots), -1.0);  // gaps stay -1
    for (int64_t o = 0; o < slots; ++o) {
      const int64_t i = layer::tree_slot_row(start.data(), n, level, o);
      const int64_t len = start[i + 1] - start[i];
      const int64_t t = o - layer::tree_slot(start.data(), i, level);
      if (t >= layer::tree_level_length(len, level)) continue;
      std::vector<double> lanes(layer::kTreeLanes);
      for (int lane = 0; lane < layer::kTreeLanes; ++lane) {
        const int64_t first = (t << layer::kTreeFanInBits) + lane * layer::kLaneItems;
        const int64_t count = layer::tree_level_length(len, level - 1) - first;
        lanes[lane] = count > 0 ? layer::lane_sum(below.data() + layer::tree_slot(start.data(), i, level - 1) + first,
                                                  std::min<int64_t>(count, layer::kLaneItems))
                                : 0.0;
      }
      above[o] = warp_shuffle_tree(lanes);
    }
    below.swap(above);
  }
  std::vector<double> sums;
  for (int64_t i = 0; i < n; ++i) sums.push_back(below[layer::tree_slot(start.data(), i, levels)]);
  return sums;
}

TEST(LayerRowSums, PairwiseSumIsTheZeroPaddedTree) {
  // Every length up to 1100 (all residues of 8, 32 and 256 and a few levels of each) and lengths
  // around the larger powers of two, against the naive halving of the padded array.
  std::vector<int64_t> lengths;
  for (int64_t n = 0; n <= 1100; ++n) lengths.push_back(n);
  for (const int64_t n : {4095, 4096, 4097, 65535, 65536, 65537, 100003}) lengths.push_back(n);
  int differs_from_left_to_right = 0;
  for (const int64_t n : lengths) {
    const std::vector<double> x = terms(n, static_cast<uint64_t>(n));
    const double tree = layer::pairwise_sum(x.data(), n);
    ASSERT_EQ(tree, test::tree_sum(x)) << "n " << n;
    if (tree != left_to_right(x)) ++differs_from_left_to_right;
  }
  // The order matters for these terms: a sum in another order would not pass the check above.
  EXPECT_GT(differs_from_left_to_right, 100);
  EXPECT_EQ(layer::pairwise_sum(nullptr, 0), 0.0);
}

TEST(LayerRowSums, LaneSumIsThePairwiseSumOfUpToEightTerms) {
  const std::vector<double> x = terms(8, 3);
  for (int64_t count = 0; count <= layer::kLaneItems; ++count) {
    EXPECT_EQ(layer::lane_sum(x.data(), count), layer::pairwise_sum(x.data(), count)) << "count " << count;
  }
}

TEST(LayerRowSums, WarpShufflesBuildThePairwiseTreeOverTheLanes) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const std::vector<double> lanes = terms(layer::kTreeLanes, seed);
    EXPECT_EQ(warp_shuffle_tree(lanes), layer::pairwise_sum(lanes.data(), layer::kTreeLanes));
  }
}

TEST(LayerRowSums, DeviceLevelsEqualTheHostTree) {
  // Rows of every awkward length (one term, lane, warp and level boundaries, a hub of 10^6 + 1
  // terms) laid out back to back as a block's edges are; the replayed levels give each row the
  // host's pairwise_sum bit for bit, with the exact number of levels and with more (the bound the
  // host uses may exceed the longest row).
  const std::vector<int64_t> lengths = {1,   2,    3,    7,    8,     9,     31,    32,    33,      255, 256,
                                        257, 1000, 4095, 4096, 65535, 65536, 65537, 70000, 1000001, 5,   1};
  std::vector<int64_t> start = {0};
  for (const int64_t len : lengths) start.push_back(start.back() + len);
  const std::vector<double> x = terms(start.back(), 17);
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  const int levels = layer::tree_levels(longest);
  EXPECT_EQ(levels, 3);  // 256^2 < 10^6 + 1 <= 256^3
  for (const int extra : {0, 1}) {
    const std::vector<double> sums = device_row_sums(start, x, levels + extra);
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      ASSERT_EQ(sums[i], layer::pairwise_sum(x.data() + start[i], lengths[i])) << "row " << i << " extra " << extra;
    }
  }
  // The slots of every level are disjoint: each row's first slot lies past the previous row's last.
  for (int level = 1; level <= levels + 1; ++level) {
    for (std::size_t i = 0; i + 1 < lengths.size(); ++i) {
      EXPECT_GE(layer::tree_slot(start.data(), static_cast<int64_t>(i + 1), level),
                layer::tree_slot(start.data(), static_cast<int64_t>(i), level) +
                    layer::tree_level_length(lengths[i], level));
    }
    const auto n = static_cast<int64_t>(lengths.size());
    EXPECT_LE(layer::tree_slot(start.data(), n - 1, level) + layer::tree_level_length(lengths.back(), level),
              layer::tree_level_slots(n, start[n], level));
  }
}

TEST(LayerRowSums, LevelsCoverTheLongestRow) {
  EXPECT_EQ(layer::tree_levels(1), 1);
  EXPECT_EQ(layer::tree_levels(256), 1);
  EXPECT_EQ(layer::tree_levels(257), 2);
  EXPECT_EQ(layer::tree_levels(65536), 2);
  EXPECT_EQ(layer::tree_levels(65537), 3);
  EXPECT_EQ(layer::tree_level_length(1000001, 3), 1);
  EXPECT_EQ(layer::tree_level_length(1000001, 2), 16);
  EXPECT_EQ(layer::tree_level_length(1000001, 0), 1000001);
}

TEST(LayerRowSums, RowOfFindsEveryNonzerosRow) {
  // Random row lengths >= 1 (every dst row has its self-loop), one very long.
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int64_t> len(1, 40);
  std::vector<int64_t> offsets = {0};
  for (int i = 0; i < 300; ++i) offsets.push_back(offsets.back() + (i == 150 ? 100000 : len(rng)));
  const auto n = static_cast<int64_t>(offsets.size()) - 1;
  int64_t row = 0;
  for (int64_t e = 0; e < offsets[n]; ++e) {
    while (offsets[row + 1] <= e) ++row;
    ASSERT_EQ(layer::segment_of(offsets.data(), n, e), row) << "nonzero " << e;
  }
  const std::vector<int64_t> one = {0, 3};
  EXPECT_EQ(layer::segment_of(one.data(), 1, 2), 0);
}

}  // namespace
}  // namespace graphtier::sample
