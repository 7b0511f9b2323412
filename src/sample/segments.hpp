// The one search the samplers' per-item device kernels use to find their row, batch or sequence:
// with n consecutive segments starting at ascending positions, the segment that holds position p.
// Host/device code under nvcc, plain C++ under g++.
#pragma once

#include <cstdint>

#include "graphtier/core/rng.hpp"

namespace graphtier::sample {

/// The last i in [0, n) with start_of(i) <= p, for start_of ascending in i and start_of(0) <= p:
/// the segment holding position p, empty segments (equal starts) skipped. O(log n).
template <typename StartOf>
GRAPHTIER_HD int64_t segment_of_key(int64_t n, int64_t p, StartOf start_of) {
  int64_t lo = 0, hi = n;  // answer in [lo, hi)
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (start_of(mid) <= p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// segment_of_key over the array starts[0, n).
GRAPHTIER_HD int64_t segment_of(const int64_t* starts, int64_t n, int64_t p) {
  return segment_of_key(n, p, [starts](int64_t i) { return starts[i]; });
}

}  // namespace graphtier::sample
