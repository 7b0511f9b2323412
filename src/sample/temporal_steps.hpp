// The per-row decision of temporal neighbour sampling (temporal.hpp), written once for the host and
// the device: which entries of a column are eligible for a seed time, which of them are taken, and
// the draws that pick them. The CPU sampler (cpu/temporal_sampler_cpu.cpp) calls these functions
// row by row and the CPU tests call them directly, so a GPU kernel that samples differently would
// have to bypass them.
//
// Positions here are positions of the column's time-ordered view (TemporalIndex::order / time):
// column v occupies [begin, end) = [indptr[v], indptr[v + 1]), time[] non-decreasing over it.
//
// Plain C++ under g++, host/device code under nvcc (like core/rng.hpp).
#pragma once

#include <cstdint>
#include <span>

#include "graphtier/core/rng.hpp"
#include "graphtier/sample/random.hpp"
#include "graphtier/sample/temporal.hpp"
#include "neighbor_steps.hpp"

namespace graphtier::sample::temporal {

/// What one dst node of a temporal layer takes: `count` of the view positions [lo, hi), all of them
/// in order when count == hi - lo and the draw is without replacement.
struct Window {
  int64_t lo = 0;
  int64_t hi = 0;
  int64_t count = 0;
};

/// The end of the eligible prefix of [begin, end): the first position whose time is later than
/// `seed_time`, or end (time[] non-decreasing over [begin, end)). O(log(end - begin)).
GRAPHTIER_HD int64_t eligible_end(const int64_t* time, int64_t begin, int64_t end, int64_t seed_time) {
  int64_t lo = begin, hi = end;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (time[mid] <= seed_time) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// The window of a column [begin, end) for a tree of time `seed_time`, fanout f (-1 = all, 0 =
/// none): kUniform draws from every eligible entry (f of them, or all when f is -1 or reaches
/// their count without replacement); kLast takes the min(f, eligible) most recent (never with
/// replacement: the sampler refuses it).
GRAPHTIER_HD Window window(const int64_t* time, int64_t begin, int64_t end, int64_t seed_time, int64_t fanout,
                           bool replace, TemporalStrategy strategy) {
  Window w;
  w.hi = eligible_end(time, begin, end, seed_time);
  w.lo = begin;
  if (strategy == TemporalStrategy::kLast && fanout >= 0 && w.hi - begin > fanout) w.lo = w.hi - fanout;
  const int64_t n = w.hi - w.lo;
  w.count = nbr::sample_count(fanout, replace && strategy == TemporalStrategy::kUniform, false, n, n);
  return w;
}

/// Tree `tree`'s stream within a layer (temporal.hpp): mixed so that tree 0 does not draw from the
/// layer's own stream either, and two trees never share one.
GRAPHTIER_HD uint64_t tree_stream(uint64_t layer_stream, int64_t tree) {
  return layer_stream ^ mix64(static_cast<uint64_t>(tree) + 0x7A3D9C1B5E2F4861ull);
}

/// Whether window w's picks are independent of one another, pick i being pick_at(.., i): every
/// position in order (count == hi - lo without replacement) or draws with replacement. Otherwise
/// the picks are Floyd's, which only `draw` makes (each depends on the earlier ones). The GPU
/// spreads independent picks over a warp, or a block for a hub.
GRAPHTIER_HD bool independent_picks(const Window& w, bool replace) { return replace || w.count == w.hi - w.lo; }

/// Pick i of a window with independent_picks: position lo + i without replacement, the uniform
/// draw bounded_u64(node_bits(seed, stream, v, i), n) with it.
GRAPHTIER_HD int64_t pick_at(const Window& w, bool replace, uint64_t seed, uint64_t stream, int64_t v, int64_t i) {
  if (!replace) return w.lo + i;
  return w.lo + static_cast<int64_t>(bounded_u64(node_bits(seed, stream, v, i), static_cast<uint64_t>(w.hi - w.lo)));
}

/// Whether the GPU samples window w with a whole block (a hub: neighbor_steps.hpp's rule on the
/// window's n = hi - lo entries): n >= nbr::kHubDegree and a draw that costs in proportion to n (every
/// eligible entry, in order or drawn with replacement). Such windows always have independent_picks.
GRAPHTIER_HD bool hub_window(const Window& w, int64_t fanout, bool replace) {
  const int64_t n = w.hi - w.lo;
  return n >= nbr::kHubDegree && nbr::cost_grows_with_degree(fanout, replace, false, n);
}

/// The view positions node v takes from window `w` into out[0, w.count): every position in order
/// (count == hi - lo without replacement), uniform draws with replacement in draw order
/// (pick_at), or Floyd's f distinct draws in ascending order (nbr::floyd_draw / floyd_step: the
/// untimed sampler's draw over a row of n = hi - lo entries). `stream` is tree_stream(layer
/// stream, tree of v). Costs O(count) draws, O(count^2) moves at most.
GRAPHTIER_HD void draw(const Window& w, bool replace, uint64_t seed, uint64_t stream, int64_t v, int64_t* out) {
  const int64_t n = w.hi - w.lo;
  const int64_t f = w.count;
  if (independent_picks(w, replace)) {
    for (int64_t i = 0; i < f; ++i) out[i] = pick_at(w, replace, seed, stream, v, i);
  } else {
    for (int64_t i = 0; i < f; ++i) {
      nbr::floyd_step(out, i, w.lo, n - f + i, nbr::floyd_draw(seed, stream, v, n, f, i));
    }
  }
}

/// Bits of a node id in tree_key (the draws address fewer than 2^40 nodes).
inline constexpr int kTreeKeyShift = 40;

/// The compaction key of node `id` in tree `tree`: nodes are deduplicated per tree (id < 2^40,
/// tree < 2^23, so the key is a non-negative int64). The GPU sampler carries (tree, node) pairs as
/// these keys from layer to layer.
GRAPHTIER_HD int64_t tree_key(int64_t tree, int64_t id) { return (tree << kTreeKeyShift) | id; }
/// tree_key's node and tree.
GRAPHTIER_HD int64_t key_node(int64_t key) { return key & ((int64_t{1} << kTreeKeyShift) - 1); }
GRAPHTIER_HD int64_t key_tree(int64_t key) { return key >> kTreeKeyShift; }

/// The most trees (seeds) of one temporal minibatch: tree_key's bound.
inline constexpr int64_t kMaxTrees = int64_t{1} << 23;

/// An upper bound of the device bytes one GPU temporal call of `trees` seeds allocates
/// (temporal_sampler_cuda.cu): the untimed sampler's (nbr::call_device_bytes) with a node counted
/// once per tree (trees * num_nodes keys, trees * num_edges edges), plus per layer the src trees
/// (batch) and the src keys (workspace), the seeds' keys and times and the layers' sizes, with
/// DeviceScratch's headroom; -1 when a fanout -1 layer has no bound before sampling.
inline int64_t call_device_bytes(int64_t trees, std::span<const int64_t> fanouts, bool replace, bool edge_ids,
                                 int64_t num_nodes, int64_t num_edges) {
  const int64_t key_space = nbr::saturating_mul(trees, num_nodes);
  const int64_t tree_edges = nbr::saturating_mul(trees, num_edges);
  const int64_t base = nbr::call_device_bytes(trees, fanouts, replace, edge_ids, key_space, tree_edges);
  if (base < 0) return -1;
  int64_t extra = trees * 16 + static_cast<int64_t>(fanouts.size() + 1) * 32;
  int64_t nd = trees;
  for (const int64_t fanout : fanouts) {
    const nbr::LayerBound b = nbr::layer_bound(nd, fanout, replace, key_space, tree_edges);
    extra += b.num_src * 16;
    nd = b.num_src;
  }
  return base + extra + extra / 2;
}

}  // namespace graphtier::sample::temporal
