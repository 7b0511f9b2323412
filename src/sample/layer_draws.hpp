// The arithmetic of layer-wise sampling shared by the CPU and CUDA backends (layer_sampler.hpp
// defines it): fixed-point column weights and the successive draws. Integers only, so that host
// and device produce the same bits whatever the order of accumulation. Host/device code under
// nvcc, plain C++ under g++.
#pragma once

#include <cstdint>

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
/// Bits of the summed draw weights: below 2^61 after the shift, plus one per candidate (< 2^40)
/// from the rounding up, stays below 2^62, so r + removed weight never overflows.
inline constexpr int kWeightBits = 61;

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

/// The right shift k that brings the total T of the column weights below 2^61.
GRAPHTIER_HD int weight_shift(U128 total) {
  const int bits = bit_length(total);
  return bits > kWeightBits ? bits - kWeightBits : 0;
}

/// w_u = max(1, c_u >> k).
GRAPHTIER_HD uint64_t draw_weight(U128 c, int shift) {
  uint64_t w;
  if (shift == 0) {
    w = c.lo;  // c <= T < 2^61: hi is zero
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

// Successive sampling without replacement (layer_sampler.hpp): draw k picks the first candidate
// whose prefix sum of not-yet-drawn weights exceeds r_k. Any structure that answers that gives
// the same picks; a Fenwick tree does it in O(log n) per draw and per removal. Tree entry i
// (0-based) holds the weights of candidates (i - lowbit(i + 1), i].

/// Entry i of the Fenwick tree of the weights whose inclusive prefix sums are `prefix`: each
/// entry is independent, so a GPU builds the tree in parallel.
GRAPHTIER_HD uint64_t fenwick_entry(const uint64_t* prefix, int64_t i) {
  const int64_t before = i - ((i + 1) & -(i + 1));
  return before < 0 ? prefix[i] : prefix[i] - prefix[before];
}

/// A tree in a plain array the draws may modify.
struct DenseFenwick {
  uint64_t* entries;
  GRAPHTIER_HD uint64_t at(int64_t i) const { return entries[i]; }
  GRAPHTIER_HD void subtract(int64_t i, uint64_t w) { entries[i] -= w; }
};

/// Sum of the first n weights still in the tree.
template <typename Tree>
GRAPHTIER_HD uint64_t fenwick_total(const Tree& tree, int64_t n) {
  uint64_t sum = 0;
  for (int64_t i = n; i > 0; i -= i & -i) sum += tree.at(i - 1);
  return sum;
}

/// The first candidate whose prefix sum of remaining weights exceeds r (r < the remaining total).
template <typename Tree>
GRAPHTIER_HD int64_t fenwick_find(const Tree& tree, int64_t n, uint64_t r) {
  int64_t step = 1;
  while (step <= n / 2) step *= 2;
  int64_t pos = 0;  // candidates [0, pos) hold remaining weight <= r
  for (; step > 0; step /= 2) {
    const int64_t next = pos + step;
    if (next <= n && tree.at(next - 1) <= r) {
      r -= tree.at(next - 1);
      pos = next;
    }
  }
  return pos;
}

/// chosen[0, s) = s successive draws among n candidates with weights[0, n) (every weight >= 1,
/// total below 2^62), using and updating `tree`, the Fenwick tree of those weights. Sequential by
/// definition: one thread runs it on the GPU, O(s log n).
template <typename Tree>
GRAPHTIER_HD void successive_draws(Tree& tree, const uint64_t* weights, int64_t n, int64_t s, uint64_t seed,
                                   uint64_t layer_stream, int64_t* chosen) {
  uint64_t left = fenwick_total(tree, n);
  for (int64_t k = 0; k < s; ++k) {
    const uint64_t r = bounded_u64(node_bits(seed, layer_stream, 0, k), left);
    const int64_t j = fenwick_find(tree, n, r);
    chosen[k] = j;
    for (int64_t i = j + 1; i <= n; i += i & -i) tree.subtract(i - 1, weights[j]);
    left -= weights[j];
  }
}

}  // namespace graphtier::sample::layer
