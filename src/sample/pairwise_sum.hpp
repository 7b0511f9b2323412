// The samplers' one floating-point row sum (the layer-wise samplers' edge weights, bulk LADIES'
// row weights), shared by the CPU and CUDA backends so that a whole warp, or several levels of
// warps for a hub row, computes on the device the bits the host gets by a plain loop.
// Host/device code under nvcc, plain C++ under g++.
#pragma once

#include <cstdint>

#include "graphtier/core/portable_math.hpp"
#include "graphtier/core/rng.hpp"

namespace graphtier::sample {

// NOTE: the summation tree. Σ x[0, n) (n >= 0, every x >= 0) is the complete binary tree over x
// padded with +0 to a power of two >= n, each internal node the IEEE-rounded sum of its children.
// Padding never changes a value (x + 0 = x, and 0 + 0 = 0; the padding is at the end, so every
// node is either all padding or holds a real left part), hence:
//   - any power of two >= n gives the same sum, and a zero-padded tree over 8 or 32 items equals
//     the tree over its real prefix;
//   - the sum equals the tree over the sums of the aligned blocks of 2^k items (the last one
//     partial), for every k: a device lane sums an aligned block, a warp adds its lanes' sums in
//     adjacent pairs, and longer rows take further levels of block sums.
// Addition is commutative in IEEE arithmetic, so only the grouping matters, never the operand
// order.

/// Σ term(0..n) by the tree above, in O(n) with a stack of pending aligned blocks (a binary
/// counter: one complete subtree per set bit of the count so far).
template <typename Term>
GRAPHTIER_HD double pairwise_sum_of(int64_t n, Term term) {
  double pending[64];  // pending[k]: the sum of a complete aligned block of 2^k items, if bit k of i
  for (int64_t i = 0; i < n; ++i) {
    double v = term(i);
    int k = 0;
    // Item i closes the blocks of sizes 2^0, 2^1, ... while the low bits of i are ones.
    for (uint64_t c = static_cast<uint64_t>(i); (c & 1) != 0; c >>= 1, ++k) v = add_rn(pending[k], v);
    pending[k] = v;
  }
  // The blocks still pending are the set bits of n, the leftmost (largest) the highest; a block
  // with nothing on its right passes up unchanged (its right sibling is padding).
  double sum = 0.0;
  bool any = false;
  for (int k = 0; k < 64; ++k) {
    if (((static_cast<uint64_t>(n) >> k) & 1) == 0) continue;
    sum = any ? add_rn(pending[k], sum) : pending[k];
    any = true;
  }
  return sum;
}

/// Σ x[0, n) by the tree above: what the CPU backends call for each row.
GRAPHTIER_HD double pairwise_sum(const double* x, int64_t n) {
  return pairwise_sum_of(n, [x](int64_t i) { return x[i]; });
}

}  // namespace graphtier::sample
