// The one floating-point sum of layer-wise sampling, shared by the CPU and CUDA backends
// (layer_sampler.hpp defines it): a block row's Σ (1 / w_u) over its edges, as a pairwise tree
// whose shape depends only on the row's length, so that a whole warp (or several levels of warps,
// for a hub row) computes it on the device with the bits the host gets by a plain loop. Also the
// layout of the dst rows' nonzeros that the device's per-nonzero kernels index.
// Host/device code under nvcc, plain C++ under g++.
#pragma once

#include <cstdint>

#include "graphtier/core/portable_math.hpp"
#include "graphtier/core/rng.hpp"
#include "pairwise_sum.hpp"
#include "segments.hpp"

namespace graphtier::sample::layer {

// The sum is pairwise_sum.hpp's tree; below, how the device lays out its levels.
using ::graphtier::sample::pairwise_sum;

/// Items a device lane sums (an aligned block of 8), and lanes a warp combines.
inline constexpr int kLaneItems = 8;
inline constexpr int kTreeLanes = 32;
/// Items one tree level of warps reduces to one value: an aligned block of 2^kTreeFanInBits.
inline constexpr int kTreeFanInBits = 8;
static_assert((int64_t{1} << kTreeFanInBits) == kLaneItems * kTreeLanes);

/// The tree over x[0, count) padded to 8 items (count in [0, 8]; 0 gives +0): a lane's share,
/// written out so that the device keeps it in registers. Equals pairwise_sum(x, count).
GRAPHTIER_HD double lane_sum(const double* x, int64_t count) {
  double v[kLaneItems];
  for (int j = 0; j < kLaneItems; ++j) v[j] = j < count ? x[j] : 0.0;
  return add_rn(add_rn(add_rn(v[0], v[1]), add_rn(v[2], v[3])), add_rn(add_rn(v[4], v[5]), add_rn(v[6], v[7])));
}

// The device's levels. Row i's terms are x[start[i], start[i + 1]) (level 0, length len_i >= 1);
// level r >= 1 holds, for each row, the sums of its aligned blocks of 256^r terms: ceil(len_i /
// 256^r) values, at slots [i + (start[i] >> 8r), ...) of the level's array (disjoint: row i + 1's
// slot is at least 1 + floor(len_i / 256^r) >= ceil(len_i / 256^r) past row i's). No scan is
// needed to place them, and the array has n + (start[n] >> 8r) slots. Level r's value t of row i is
// the tree over level r - 1's values [256 t, 256 t + 256) of that row. Once 256^r >= len_i, the
// row's one value at level r is its sum.

/// First slot of row i at level r (r = 0: the terms themselves).
GRAPHTIER_HD int64_t tree_slot(const int64_t* start, int64_t i, int level) {
  return level == 0 ? start[i] : i + (start[i] >> (kTreeFanInBits * level));
}

/// Values of a row of len terms at level r: ceil(len / 256^r).
GRAPHTIER_HD int64_t tree_level_length(int64_t len, int level) {
  const int shift = kTreeFanInBits * level;
  return (len + (int64_t{1} << shift) - 1) >> shift;
}

/// Slots of level r >= 1 for n rows whose terms number at most `terms`.
GRAPHTIER_HD int64_t tree_level_slots(int64_t n, int64_t terms, int level) {
  return n + (terms >> (kTreeFanInBits * level)) + 1;
}

/// The row whose slots at level r >= 1 begin at or before slot o: the last i in [0, n) with
/// tree_slot(start, i, r) <= o (the slots are strictly increasing in i). The caller checks that o
/// is one of that row's values (o - its first slot < its level length), not a gap.
GRAPHTIER_HD int64_t tree_slot_row(const int64_t* start, int64_t n, int level, int64_t o) {
  return segment_of_key(n, o, [start, level](int64_t i) { return tree_slot(start, i, level); });
}

/// Levels the device runs for rows of at most max_len terms: the least r >= 1 with 256^r >= max_len.
GRAPHTIER_HD int tree_levels(int64_t max_len) {
  int r = 1;
  while (r * kTreeFanInBits < 62 && (int64_t{1} << (r * kTreeFanInBits)) < max_len) ++r;
  return r;
}

// The row of nonzero e when row i's nonzeros are [offsets[i], offsets[i + 1]) and every row has at
// least one: segment_of(offsets, n, e) (segments.hpp). Per-nonzero device work finds its row this
// way, so that a hub row spreads over as many threads as it has nonzeros.
using ::graphtier::sample::segment_of;

}  // namespace graphtier::sample::layer
