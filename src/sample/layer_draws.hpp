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

/// The first j in [0, n) with prefix[j] > x, or n when none is.
GRAPHTIER_HD int64_t first_above(const uint64_t* prefix, int64_t n, uint64_t x) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (prefix[mid] > x) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
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

GRAPHTIER_HD uint64_t weight_at(const uint64_t* prefix, int64_t j) { return j == 0 ? prefix[0] : prefix[j] - prefix[j - 1]; }

/// Successive sampling without replacement: s < n candidates by the draw weights whose inclusive
/// prefix sums are prefix[0, n) (every weight >= 1); chosen[k] receives the k-th drawn candidate.
///
/// The drawn weights are not removed from `prefix` (which FastGCN shares across layers and
/// batches); draw k instead looks for the first j whose remaining prefix P(j) - R(j) exceeds r,
/// R(j) the drawn weight at positions <= j. Searching P for r + R(j_prev) never overshoots that j
/// (R only grows with j), and when R(j) no longer changes the search has found it; R grows at each
/// repeat, so at most k + 1 searches. O(s^2) in the worst case: sequential by definition, run by a
/// single thread on the GPU; fine for layer sizes in the thousands.
GRAPHTIER_HD void successive_draws(const uint64_t* prefix, int64_t n, int64_t s, uint64_t seed, uint64_t layer_stream,
                                   int64_t* chosen) {
  const uint64_t total = prefix[n - 1];
  uint64_t drawn = 0;
  for (int64_t k = 0; k < s; ++k) {
    const uint64_t r = bounded_u64(node_bits(seed, layer_stream, 0, k), total - drawn);
    uint64_t skip = 0;
    int64_t j = 0;
    for (;;) {
      j = first_above(prefix, n, r + skip);
      uint64_t removed = 0;
      for (int64_t m = 0; m < k; ++m) {
        if (chosen[m] <= j) removed += weight_at(prefix, chosen[m]);
      }
      if (removed == skip) break;
      skip = removed;
    }
    chosen[k] = j;
    drawn += weight_at(prefix, j);
  }
}

}  // namespace graphtier::sample::layer
