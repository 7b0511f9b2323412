// The decisions of GPU neighbour sampling, written once for the host and the device: the CUDA
// kernels (cuda/neighbor_draws_cuda.cuh, cuda/compact_cuda.cu, cuda/neighbor_sampler_cuda.cu)
// only arrange the threads around these functions, and the CPU tests call them directly and
// compare them with the CPU sampler (cpu/neighbor_draws.cpp, cpu/compact_cpu.cpp), so that a GPU
// that samples differently from the host would need a kernel that does not call them.
//
// Also the host's sizing of a minibatch by upper bounds (the GPU sampler's one-synchronisation
// budget: cuda_neighbor_sampler.hpp).
//
// Plain C++ under g++, host/device code under nvcc (like core/rng.hpp).
#pragma once

#include <cstdint>
#include <span>

#include "graphtier/core/rng.hpp"
#include "graphtier/sample/random.hpp"

namespace graphtier::sample::nbr {

/// Fanouts up to this draw without replacement one draw per warp lane (floyd_warp); larger ones
/// run floyd_step serially.
inline constexpr int kWarpFloyd = 32;
/// Bins of one radix-select digit (8 bits).
inline constexpr int kRadixBins = 256;
/// Rows of at least this degree are hubs: the GPU samples them with a whole thread block where
/// the cost of the draw grows with the degree (a warp would take milliseconds over a 1M list).
inline constexpr int64_t kHubDegree = 10240;

/// How many edges a node of degree d with `positive` positive-weight edges (d when unweighted)
/// keeps (neighbor_sampler.hpp's draw rules).
GRAPHTIER_HD int64_t sample_count(int64_t fanout, bool replace, bool weighted, int64_t d, int64_t positive) {
  if (fanout == 0) return 0;
  if (weighted) {
    if (replace && fanout > 0) return positive > 0 ? fanout : 0;
    return fanout < 0 || fanout >= positive ? positive : fanout;
  }
  if (fanout < 0 || (!replace && fanout >= d)) return d;
  if (replace) return d > 0 ? fanout : 0;
  return fanout;
}

/// Whether the draw of a node costs in proportion to its degree (so that a hub is sampled by a
/// block): every weighted path (prefix sums, keys, the positive count), and the unweighted copy
/// of a whole list. Uniform draws (Floyd, with replacement) cost the fanout only.
GRAPHTIER_HD bool cost_grows_with_degree(int64_t fanout, bool replace, bool weighted, int64_t d) {
  if (fanout == 0) return false;
  if (weighted) return true;
  return fanout < 0 || (!replace && fanout >= d);
}

/// Whether any node of a layer can be a hub (a degree d >= kHubDegree whose draw
/// cost_grows_with_degree): the GPU sampler launches its hub kernels only then. Unweighted, only a
/// whole list (fanout -1, or a fanout of at least kHubDegree without replacement) is a hub's.
GRAPHTIER_HD bool hubs_possible(int64_t fanout, bool replace, bool weighted) {
  // cost_grows_with_degree is monotone in d: true at some d >= kHubDegree iff at kHubDegree.
  return cost_grows_with_degree(fanout, replace, weighted, kHubDegree);
}

/// Whether the GPU count pass runs a thread per dst node rather than a warp: when a node's count
/// needs its degree alone (unweighted, or fanout 0), not a pass over its weights.
GRAPHTIER_HD bool count_per_thread(int64_t fanout, bool weighted) { return !weighted || fanout == 0; }

/// Draw i of Floyd's algorithm for node v (f of d, f < d) from its bits: t in [0, d - f + i].
GRAPHTIER_HD int64_t floyd_pick(uint64_t bits, int64_t d, int64_t f, int64_t i) {
  return static_cast<int64_t>(bounded_u64(bits, static_cast<uint64_t>(d - f + i + 1)));
}

/// Draw i of Floyd's algorithm for node v: its bits are node_pair_bits' (draws 2p and 2p + 1 share
/// a Philox call; floyd_draws computes both from one).
GRAPHTIER_HD int64_t floyd_draw(uint64_t seed, uint64_t layer_stream, int64_t v, int64_t d, int64_t f, int64_t i) {
  return floyd_pick(node_pair_bits(seed, layer_stream, v, i), d, f, i);
}

/// Draws [i0, i0 + n) of Floyd's algorithm into t (i0 even): floyd_draw's values, a Philox call per
/// two draws, with no branch between the calls (a host loop runs them back to back).
GRAPHTIER_HD void floyd_draws(uint64_t seed, uint64_t layer_stream, int64_t v, int64_t d, int64_t f, int64_t i0,
                              int64_t n, int64_t* t) {
  for (int64_t k = 0; k < n; k += 2) {
    const PhiloxBlock b = node_pair_block(seed, layer_stream, v, (i0 + k) >> 1);
    t[k] = floyd_pick(pair_half(b, 0), d, f, i0 + k);
    if (k + 1 < n) t[k + 1] = floyd_pick(pair_half(b, 1), d, f, i0 + k + 1);
  }
}

/// One step of Floyd's algorithm: kept[0, i) holds the positions kept by draws 0..i-1, sorted;
/// draw i drew t, so it keeps begin + t unless that is kept already, and then begin + j
/// (j = d - f + i, above every earlier draw's range: it goes last). One backward scan finds both
/// the collision and the insertion point (f is small: no binary search's mispredicted branches);
/// kept[0, i] stays sorted.
GRAPHTIER_HD void floyd_step(int64_t* kept, int64_t i, int64_t begin, int64_t j, int64_t t) {
  const int64_t pick = begin + t;
  int64_t k = i;
  while (k > 0 && kept[k - 1] > pick) --k;
  if (k > 0 && kept[k - 1] == pick) {
    kept[i] = begin + j;
    return;
  }
  for (int64_t m = i; m > k; --m) kept[m] = kept[m - 1];
  kept[k] = pick;
}

/// The warp Floyd (f <= kWarpFloyd, f < d), draw i on lane i: the earlier draw k whose j equals
/// t (t = d - f + k, k < lane), or -1.
GRAPHTIER_HD int floyd_warp_ref(int64_t t, int lane, int64_t d, int f) {
  const int64_t k = t - (d - f);
  const bool earlier = (k >= 0) & (k < lane);  // not &&: no branch on the data
  return earlier ? static_cast<int>(k) : -1;
}

/// The collision rule of the warp Floyd: draw i keeps j_i instead of t_i iff t_i is kept already,
/// i.e. iff an earlier draw drew the same t (bit i of `repeated`), or t_i = j_k for an earlier k
/// that collided itself (kept values are t's and collided j's only). `ref_of(i)` is lane i's
/// floyd_warp_ref (a shuffle on the device, an array on the host). Returns the collided lanes.
template <typename RefOf>
GRAPHTIER_HD uint32_t floyd_warp_collisions(uint32_t repeated, int f, RefOf ref_of) {
  uint32_t collided = 0;
  for (int i = 0; i < f; ++i) {
    const int r = ref_of(i);
    // No branch on the data (the host's loop mispredicted them): bit r of `collided` when r >= 0.
    const uint32_t via_ref = (collided >> (r & 31)) & static_cast<uint32_t>(r >= 0);
    collided |= (((repeated >> i) | via_ref) & 1u) << i;
  }
  return collided;
}

/// The output slot of a pick among the f distinct picks (`pick_of(i)`: lane i's): its rank.
template <typename PickOf>
GRAPHTIER_HD int floyd_warp_rank(int64_t pick, int f, PickOf pick_of) {
  int rank = 0;
  for (int i = 0; i < f; ++i) rank += pick_of(i) < pick ? 1 : 0;
  return rank;
}

/// Floyd's f <= kWarpFloyd draws of a node at once, from their values t (floyd_draws): the set
/// floyd_step builds one draw at a time (draw i keeps t_i unless an earlier draw kept it, then
/// d - f + i), written to out ascending by rank (floyd_warp_rank), begin added. No branch on the
/// data, where floyd_step's scan mispredicts: the host's one-node path for small fanouts (its grouped
/// path computes the same set on vector lanes, cpu/lanes.hpp). `picks`: f slots.
GRAPHTIER_HD void floyd_small(const int64_t* t, int64_t begin, int64_t d, int f, int64_t* picks, int64_t* out) {
  for (int i = 0; i < f; ++i) {
    bool kept = false;
    for (int m = 0; m < i; ++m) kept |= picks[m] == t[i];
    picks[i] = kept ? d - f + i : t[i];
  }
  for (int i = 0; i < f; ++i) out[floyd_warp_rank(picks[i], f, [&](int k) { return picks[k]; })] = begin + picks[i];
}

/// The Efraimidis-Spirakis key of an edge as ordered bits (positive finite doubles order like
/// their bit patterns); a weight of zero gets a key above every real one.
GRAPHTIER_HD uint64_t es_key_bits(uint64_t seed, uint64_t layer_stream, int64_t p, float w) {
  if (!(w > 0.0f)) return ~0ull;
  return ::graphtier::detail::double_bits(es_key(seed, layer_stream, p, w));
}

/// Radix select, the histogram step: the digit of `key` at `shift` when its higher digits equal
/// `prefix` (the digits found so far), else -1.
GRAPHTIER_HD int radix_bin(uint64_t key, int shift, uint64_t prefix) {
  const uint64_t high = shift == 56 ? 0 : ~0ull << (shift + 8);
  return (key & high) == prefix ? static_cast<int>((key >> shift) & 0xFF) : -1;
}

/// Radix select, the digit step over bins [0, bins) of a histogram: the first bin b at which
/// *below + hist[0] + ... + hist[b] reaches `need` (*below then counts the keys before bin b).
/// Returns b, or bins when the bins do not reach `need` (*below then includes them all).
GRAPHTIER_HD int radix_digit(const unsigned* hist, int bins, int64_t need, int64_t* below) {
  for (int b = 0; b < bins; ++b) {
    if (*below + hist[b] >= need) return b;
    *below += hist[b];
  }
  return bins;
}

/// The ordered pass after the select: with K the n-th smallest key, keep the keys below K and
/// the first `need` positions (in position order) whose key equals K; `ties_before` counts the
/// keys equal to K at earlier positions.
GRAPHTIER_HD bool es_keep(uint64_t key, uint64_t threshold, int64_t ties_before, int64_t need) {
  return key < threshold || (key == threshold && ties_before < need);
}

/// The compaction's hash table capacity for `ids` distinct ids at most (nd + ne, and at most the
/// graph's nodes): a power of two at least twice that, and at least 64, so linear probing ends.
GRAPHTIER_HD uint64_t compact_capacity(int64_t ids) {
  uint64_t c = 64;
  while (c < 2 * static_cast<uint64_t>(ids)) c *= 2;
  return c;
}

/// The compaction's first-occurrence rule: position q (dst nodes at 0 .. nd-1, neighbour e at
/// nd + e) is the first of its id iff the smallest position the table holds for the id is q.
GRAPHTIER_HD bool first_occurrence(uint64_t first_of_id, int64_t q) { return first_of_id == static_cast<uint64_t>(q); }

/// The local id of the id whose first position is `first`: a dst node keeps its position; the new
/// node first seen at edge k is numbered nd + new_rank[k] - 1 (new_rank: the inclusive count of
/// first occurrences among the edges).
GRAPHTIER_HD int64_t compact_local_id(int64_t first, int64_t nd, const int64_t* new_rank) {
  return first < nd ? first : nd + new_rank[first - nd] - 1;
}

// ---- Sizing by upper bounds (host) -------------------------------------------------------------

/// Upper bounds of one layer's sizes, known on the host before the layer runs.
struct LayerBound {
  int64_t nd = 0;        // dst nodes
  int64_t ne = 0;        // edges; -1 when only a synchronisation can tell (fanout -1)
  int64_t num_src = 0;   // src nodes (dst nodes first)
  uint64_t capacity = 0; // the compaction's hash table slots
};

inline int64_t saturating_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > INT64_MAX / b ? INT64_MAX : a * b;
}

/// The bounds of a layer whose nd dst nodes are at most `nd_bound` (distinct nodes of a graph of
/// num_nodes nodes and num_edges edges). With fanout f > 0 a node keeps at most f edges (exactly f
/// with replacement), and without replacement distinct positions of distinct nodes' lists, so at
/// most num_edges in all. Fanout -1 keeps whole lists: no bound below num_edges without knowing
/// which nodes, so ne = -1 (the sampler reads the exact count; `exact_ne` passes it back in).
/// New nodes are at most the edges, and src nodes are distinct: at most num_nodes.
inline LayerBound layer_bound(int64_t nd_bound, int64_t fanout, bool replace, int64_t num_nodes, int64_t num_edges,
                              int64_t exact_ne = -1) {
  LayerBound b;
  b.nd = nd_bound;
  if (exact_ne >= 0) {
    b.ne = exact_ne;
  } else if (fanout == 0) {
    b.ne = 0;
  } else if (fanout < 0) {
    b.ne = -1;
    return b;
  } else {
    b.ne = saturating_mul(nd_bound, fanout);
    if (!replace && b.ne > num_edges) b.ne = num_edges;
  }
  const int64_t ids = nd_bound > INT64_MAX - b.ne ? INT64_MAX : nd_bound + b.ne;
  b.num_src = ids < num_nodes ? ids : num_nodes;
  b.capacity = compact_capacity(b.num_src);
  return b;
}

/// Device bytes of the batch's arrays of one layer sized by `b`: indptr, src nodes, local
/// indices, edge ids when asked, a typed graph's edge types.
inline int64_t layer_batch_bytes(const LayerBound& b, bool edge_ids, bool typed = false) {
  return (b.nd + 1) * 8 + b.num_src * 8 + b.ne * 8 + (edge_ids ? b.ne * 8 : 0) + (typed ? b.ne : 0);
}

/// Device bytes of the workspace one layer sized by `b` needs (reused across layers, so a batch
/// needs its largest layer's): per-node counts, neighbour ids, edge positions when no edge ids
/// are asked (counted here always), the hash table's keys and first positions, the slot of every
/// position, the new-node ranks; a typed graph of `relations` relations also counts and scans one
/// row per (dst node, relation).
inline int64_t layer_workspace_bytes(const LayerBound& b, int relations = 0) {
  const int64_t rows = relations > 0 ? saturating_mul(b.nd, relations) * 16 + 8 : 0;
  return b.nd * 8 + b.ne * 8 + b.ne * 8 + static_cast<int64_t>(b.capacity) * 16 + (b.nd + b.ne) * 4 + b.ne * 8 + rows;
}

/// An upper bound of the device bytes one GPU sampling call of nd0 seeds allocates: every
/// layer's batch arrays, plus the workspace (each layer's, summed: at least the largest of each
/// array, which is what the reused scratch holds) with DeviceScratch's headroom of half again;
/// -1 when a fanout -1 layer has no bound before sampling. A typed graph of `relations` relations:
/// `fanouts` are its layers' typed::layer_fanout_bound.
inline int64_t call_device_bytes(int64_t nd0, std::span<const int64_t> fanouts, bool replace, bool edge_ids,
                                 int64_t num_nodes, int64_t num_edges, int relations = 0) {
  int64_t batch = nd0 * 8;  // the seeds
  int64_t workspace = static_cast<int64_t>(fanouts.size()) * relations * 8;  // a typed graph's fanout table
  int64_t nd = nd0;
  for (const int64_t fanout : fanouts) {
    const LayerBound b = layer_bound(nd, fanout, replace, num_nodes, num_edges);
    if (b.ne < 0) return -1;
    batch += layer_batch_bytes(b, edge_ids, relations > 0);
    workspace += layer_workspace_bytes(b, relations);
    nd = b.num_src;
  }
  return batch + workspace + workspace / 2;
}

}  // namespace graphtier::sample::nbr
