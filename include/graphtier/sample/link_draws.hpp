// The decisions of link-prediction minibatches (link_batch.hpp), as pure functions of what
// identifies them, so that a CUDA path computes exactly what the CPU does:
//
//   - negative draws: node negative_node(seed, negative_stream(stream), index, attempt, N), where
//     `index` names the draw within the minibatch: binary negative i's source is index 2i and its
//     destination 2i + 1; triplet negative j of positive k is index k * amount + j (its source is
//     the positive's). `attempt` counts the redraws of a guaranteed non-edge (0 first).
//   - whether u -> v is an edge: csc_has_edge scans column v (in-neighbours of v), or
//     sorted_pairs_contain searches a (src, dst)-sorted list of pairs.
//   - seed-edge exclusion: whether a sampled message u -> v is one of the minibatch's supervision
//     edges (or, with reverses, the reverse of one): sorted_pairs_contain on the sorted list of
//     the batch's pairs.
//
// Plain C++ under g++, host/device code under nvcc (like random.hpp).
#pragma once

#include <cstdint>

#include "graphtier/core/rng.hpp"

namespace graphtier::sample {

/// Negative draw indices are below 2^48 and attempts below 2^16: one 64-bit Philox index.
inline constexpr int64_t kMaxNegativeDraws = int64_t{1} << 48;
inline constexpr int kMaxNegativeAttempts = 1 << 16;

/// The stream of a minibatch's negatives: apart from its layers' (random.hpp layer_stream mixes in
/// the layer number + 1 with another constant), so drawing negatives changes no neighbour draw.
GRAPHTIER_HD uint64_t negative_stream(uint64_t stream) { return mix64(stream ^ 0x6E65676174697665ull); }  // "negative"

/// Negative draw `index`, try `attempt`: a node in [0, num_nodes), uniform.
GRAPHTIER_HD int64_t negative_node(uint64_t seed, uint64_t negative_stream, int64_t index, int attempt,
                                   int64_t num_nodes) {
  const uint64_t counter = (static_cast<uint64_t>(attempt) << 48) | static_cast<uint64_t>(index);
  return static_cast<int64_t>(bounded_u64(philox_u64(seed, negative_stream, counter), static_cast<uint64_t>(num_nodes)));
}

/// Whether u -> v is an edge of the CSC (u among v's in-neighbours). Columns need not be sorted,
/// so this reads all of column v.
template <typename Index>
GRAPHTIER_HD bool csc_has_edge(const int64_t* indptr, const Index* indices, int64_t u, int64_t v) {
  for (int64_t p = indptr[v]; p < indptr[v + 1]; ++p) {
    if (static_cast<int64_t>(indices[p]) == u) return true;
  }
  return false;
}

/// Whether (u, v) is among the `count` pairs of `pairs` (flattened src0, dst0, src1, ..., sorted by
/// (src, dst)).
GRAPHTIER_HD bool sorted_pairs_contain(const int64_t* pairs, int64_t count, int64_t u, int64_t v) {
  int64_t lo = 0, hi = count;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const int64_t a = pairs[2 * mid], b = pairs[2 * mid + 1];
    if (a < u || (a == u && b < v)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < count && pairs[2 * lo] == u && pairs[2 * lo + 1] == v;
}

/// Whether the sampled message u -> v is excluded by the sorted supervision pairs: (u, v) is one,
/// or, with `reverse`, (v, u) is.
GRAPHTIER_HD bool is_excluded_edge(const int64_t* pairs, int64_t count, int64_t u, int64_t v, bool reverse) {
  return sorted_pairs_contain(pairs, count, u, v) || (reverse && sorted_pairs_contain(pairs, count, v, u));
}

}  // namespace graphtier::sample
