// The arithmetic of layer-wise sampling shared by the CPU and CUDA backends (layer_sampler.hpp
// defines it): fixed-point column weights and the successive draws. The weights are integers, so
// host and device produce the same bits whatever the order of accumulation; the draws' keys use
// only IEEE-rounded operations and portable_log (core/portable_math.hpp), the same bits on both.
// Host/device code under nvcc, plain C++ under g++.
#pragma once

#include <cstdint>

#include "graphtier/core/portable_math.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/sample/random.hpp"

namespace graphtier::sample::layer {

/// Unsigned 128-bit integer: the exact sum of up to 2^66 contributions below 2^62. An aggregate
/// without initialisers (trivial, for CUB's reductions): value-initialise it, U128{}.
struct U128 {
  uint64_t lo;
  uint64_t hi;
};

GRAPHTIER_HD U128 add(U128 a, U128 b) {
  U128 s{};
  s.lo = a.lo + b.lo;
  s.hi = a.hi + b.hi + (s.lo < a.lo ? 1 : 0);
  return s;
}

GRAPHTIER_HD U128 add(U128 a, uint64_t b) { return add(a, U128{b, 0}); }

inline constexpr int kContributionBits = 62;
/// Bits of the summed draw weights: below 2^52 after the shift, plus one per candidate (< 2^40)
/// from the rounding up, stays below 2^53, so every weight and every sum of weights (the race
/// tree's nodes) is exact in double.
inline constexpr int kWeightBits = 52;

/// Â[i, u]^2 = 1 / (d + 1)^2 for a row of in-degree d, as floor(2^62 / (d + 1)^2), at least 1 so
/// that no candidate of a huge row loses all probability. floor(floor(x / a) / a) = floor(x / a^2)
/// avoids forming (d + 1)^2, which overflows past d = 2^32.
GRAPHTIER_HD uint64_t row_contribution(int64_t degree) {
  const uint64_t a = static_cast<uint64_t>(degree) + 1;
  const uint64_t q = ((uint64_t{1} << kContributionBits) / a) / a;
  return q == 0 ? 1 : q;
}

GRAPHTIER_HD int bit_length(U128 x) {
  int n = 0;
  uint64_t top = x.hi != 0 ? x.hi : x.lo;
  if (x.hi != 0) n = 64;
  while (top != 0) {
    ++n;
    top >>= 1;
  }
  return n;
}

/// The right shift k that brings the total T of the column weights below 2^52.
GRAPHTIER_HD int weight_shift(U128 total) {
  const int bits = bit_length(total);
  return bits > kWeightBits ? bits - kWeightBits : 0;
}

/// w_u = max(1, c_u >> k).
GRAPHTIER_HD uint64_t draw_weight(U128 c, int shift) {
  uint64_t w;
  if (shift == 0) {
    w = c.lo;  // c <= T < 2^52: hi is zero
  } else if (shift < 64) {
    w = (c.lo >> shift) | (c.hi << (64 - shift));
  } else {
    w = c.hi >> (shift - 64);
  }
  return w == 0 ? 1 : w;
}

/// The position of `key` in the ascending `ids[0, n)`, or -1.
GRAPHTIER_HD int64_t find_sorted(const int64_t* ids, int64_t n, int64_t key) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (ids[mid] < key) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < n && ids[lo] == key ? lo : -1;
}

// Successive sampling without replacement (layer_sampler.hpp) as a race: independent keys
// K_u ~ Exp(w_u), the s smallest win, which is exactly the law of s successive draws with
// probabilities proportional to the remaining weights (the Efraimidis-Spirakis equivalence). The
// keys are generated top-down over a complete binary tree of the weights, so that either backend
// finds the winners without touching every candidate, and the result is the same whichever way
// it is computed:
//   - the tree has 2^levels leaves, candidate i at leaf 2^levels + i (heap numbering, root 1), the
//     leaves past the candidates weigh 0; node x weighs W_x, the sum of its leaves (< 2^53, exact
//     in double: weight_shift keeps the total there);
//   - node x's draws are one Philox block (race_block: the split's bits and the exponential's);
//   - the root's key is E_0 / W_1, E_x = -log(unit(race_bits(x, 1))) (race_bits(0, 1) for the root);
//   - node x with key m passes m to the child c that holds the minimum of its subtree, the left one
//     iff bounded_u64(race_bits(x, 0), W_x) < W_left (probability W_left / W_x), and gives the other
//     child o the key add_rn(m, div_rn(E_x, W_o)) (memorylessness: the other subtree's minimum lies
//     Exp(W_o) above m). A child of weight 0 gets no key: it holds no candidate;
//   - the draws are the s leaves with the smallest (key, candidate) pairs, in that order (the draw
//     order of successive sampling).
// A node's key is the minimum of its leaves' keys exactly (the passed key is m, the other one is
// >= m since rounding is monotone), so the s best leaves lie under the s best nodes of every level
// (ordered by (key, node)): the host expands s nodes a level, O(s log n); the device instead
// computes every leaf's key by walking its path and sorts (LADIES), or keeps the s best nodes every
// few levels (FastGCN: staged draws, below). Keys are positive doubles, ordered like their bit
// patterns.

/// Leaves of the race tree over n candidates: the smallest power of two >= n.
GRAPHTIER_HD int race_levels(int64_t n) {
  int levels = 0;
  while ((int64_t{1} << levels) < n) ++levels;
  return levels;
}

/// The race tree: `internal[x]` = W_x for the internal nodes x in [1, 2^levels) (entry 0 unused),
/// `leaves[i]` = w_i for the n candidates.
struct RaceTree {
  const uint64_t* internal;
  const uint64_t* leaves;
  int64_t n;
  int levels;
  GRAPHTIER_HD uint64_t weight(int64_t x) const {
    const int64_t first_leaf = int64_t{1} << levels;
    if (x < first_leaf) return internal[x];
    return x - first_leaf < n ? leaves[x - first_leaf] : 0;
  }
};

/// Internal node x of the race tree of n weights whose inclusive prefix sums are `prefix`: each
/// entry is independent, so a GPU fills the tree in one parallel pass.
GRAPHTIER_HD uint64_t race_tree_entry(const uint64_t* prefix, int64_t n, int levels, int64_t x) {
  int depth = 0;
  while ((x >> (depth + 1)) != 0) ++depth;
  const int span = levels - depth;  // the node covers 2^span leaves
  const int64_t lo = (x - (int64_t{1} << depth)) << span;
  if (lo >= n) return 0;
  const int64_t hi = lo + (int64_t{1} << span) < n ? lo + (int64_t{1} << span) : n;
  return prefix[hi - 1] - (lo == 0 ? 0 : prefix[lo - 1]);
}

/// Node x's two draws, one Philox block (words 0-1: the split, 2-3: the exponential).
struct RaceBits {
  uint64_t split;
  uint64_t exponential;
};

GRAPHTIER_HD RaceBits race_block(uint64_t seed, uint64_t layer_stream, int64_t x) {
  const PhiloxBlock b = philox_block(seed, layer_stream ^ (uint64_t{1} << 62), static_cast<uint64_t>(x));
  return {(static_cast<uint64_t>(b.v[1]) << 32) | b.v[0], (static_cast<uint64_t>(b.v[3]) << 32) | b.v[2]};
}

/// race_bits(x, 0) = the split's bits, race_bits(x, 1) = the exponential's.
GRAPHTIER_HD uint64_t race_bits(uint64_t seed, uint64_t layer_stream, int64_t x, int which) {
  const RaceBits r = race_block(seed, layer_stream, x);
  return which == 0 ? r.split : r.exponential;
}

/// E = -log(u), u uniform in (0, 1) (clamped at 2^-60 like es_key): positive and finite.
GRAPHTIER_HD double race_exponential(uint64_t bits) {
  double u = u64_to_unit_double(bits);
  if (u < 0x1p-60) u = 0x1p-60;
  return -portable_log(u);
}

/// +inf: the key of a node of weight 0 (it holds no candidate), after every real key.
GRAPHTIER_HD double race_no_key() { return detail::bits_double(0x7ff0000000000000ull); }

/// The root's key (total weight > 0).
GRAPHTIER_HD double race_root_key(const RaceTree& t, uint64_t seed, uint64_t layer_stream) {
  return div_rn(race_exponential(race_bits(seed, layer_stream, 0, 1)), static_cast<double>(t.weight(1)));
}

/// The key of child `child` (2x or 2x + 1, weight > 0) of internal node x whose key is m.
GRAPHTIER_HD double race_child_key(const RaceTree& t, uint64_t seed, uint64_t layer_stream, int64_t x, double m,
                                   int64_t child) {
  const uint64_t w_left = t.weight(2 * x);
  const RaceBits r = race_block(seed, layer_stream, x);
  const bool left_holds_min = bounded_u64(r.split, t.weight(x)) < w_left;
  if (left_holds_min == (child == 2 * x)) return m;
  return add_rn(m, div_rn(race_exponential(r.exponential), static_cast<double>(t.weight(child))));
}

/// Both children's keys at once (one draw of each kind instead of two), the same bits as
/// race_child_key for each; a child of weight 0 gets +inf.
GRAPHTIER_HD void race_children(const RaceTree& t, uint64_t seed, uint64_t layer_stream, int64_t x, double m,
                                double* left, double* right) {
  const uint64_t w_left = t.weight(2 * x);
  const uint64_t w_right = t.weight(x) - w_left;
  const RaceBits r = race_block(seed, layer_stream, x);
  const bool left_holds_min = bounded_u64(r.split, t.weight(x)) < w_left;
  const uint64_t w_other = left_holds_min ? w_right : w_left;
  const double other = w_other == 0 ? race_no_key()
                                    : add_rn(m, div_rn(race_exponential(r.exponential), static_cast<double>(w_other)));
  *left = left_holds_min ? m : other;
  *right = left_holds_min ? other : m;
}

/// The key of node y at depth depth_y, walking down from its ancestor x at depth depth_x whose key
/// is m (x = y >> (depth_y - depth_x)): O(depth_y - depth_x); +inf if y weighs 0 (then nothing on
/// the walk is drawn: a node of positive weight has ancestors of positive weight).
GRAPHTIER_HD double race_descendant_key(const RaceTree& t, uint64_t seed, uint64_t layer_stream, int depth_x, double m,
                                        int64_t y, int depth_y) {
  if (t.weight(y) == 0) return race_no_key();
  for (int depth = depth_x + 1; depth <= depth_y; ++depth) {
    const int64_t child = y >> (depth_y - depth);
    m = race_child_key(t, seed, layer_stream, child >> 1, m, child);
  }
  return m;
}

/// The key of node x at depth `depth` (x in [2^depth, 2^(depth + 1))), walking from the root.
GRAPHTIER_HD double race_node_key(const RaceTree& t, uint64_t seed, uint64_t layer_stream, int64_t x, int depth) {
  if (t.weight(x) == 0) return race_no_key();
  return race_descendant_key(t, seed, layer_stream, 0, race_root_key(t, seed, layer_stream), x, depth);
}

/// The key of candidate i (weight > 0), walking from the root: O(levels). What the device
/// computes for every candidate before selecting the s smallest (LADIES).
GRAPHTIER_HD double race_leaf_key(const RaceTree& t, uint64_t seed, uint64_t layer_stream, int64_t i) {
  return race_node_key(t, seed, layer_stream, (int64_t{1} << t.levels) + i, t.levels);
}

/// (key, node) order: the race's total order, ties to the smaller node (candidate).
GRAPHTIER_HD bool race_before(double key_a, int64_t a, double key_b, int64_t b) {
  return key_a < key_b || (key_a == key_b && a < b);
}

/// The same order on the keys' bit patterns (positive doubles and +inf order like their bits):
/// (key_a, a) <= (key_b, b), the device's test against the s-th smallest pair.
GRAPHTIER_HD bool race_at_most(uint64_t key_a, int64_t a, uint64_t key_b, int64_t b) {
  return key_a < key_b || (key_a == key_b && a <= b);
}

// NOTE: the device's draws of s among n candidates by stages (FastGCN, where n is every node and s
// is small). The s best leaves lie under the s best nodes of every depth, so the device need not
// compute every leaf's key: stage 0 computes the keys of every node at depth d_0 (from the root)
// and keeps the s best (key, node) pairs; each next stage computes the keys of the kept nodes'
// descendants k levels down (from the kept keys) and keeps the s best of those, until the leaves:
// O(width · levels) work per stage instead of n · levels and a sort of n. A stage's width (the
// pairs it selects from) is at most max(8 s, 4096): d_0 is the deepest depth with 2^d_0 <= width
// (or the leaves), k the largest with s · 2^k <= width (at least 3).

/// Pairs a stage of the staged draws selects from, at most.
GRAPHTIER_HD int64_t race_stage_width(int64_t s) { return 8 * s > 4096 ? 8 * s : 4096; }

GRAPHTIER_HD int floor_log2(int64_t x) {
  int r = 0;
  while ((x >> (r + 1)) != 0) ++r;
  return r;
}

/// d_0: the depth of stage 0 for `levels` levels and s draws.
GRAPHTIER_HD int race_first_depth(int levels, int64_t s) {
  const int d = floor_log2(race_stage_width(s));
  return d < levels ? d : levels;
}

/// k: the levels each later stage goes down (the last one stops at the leaves).
GRAPHTIER_HD int race_stage_step(int64_t s) { return floor_log2(race_stage_width(s) / s); }

}  // namespace graphtier::sample::layer
