// The per-node draws of neighbour sampling on the GPU, exactly as neighbor_sampler.hpp specifies
// them (the CPU twin is cpu/neighbor_draws.cpp). One warp samples one dst node:
//   - the warp's loads of one neighbour list coalesce, which matters most through zero-copy,
//     where every 32-byte sector is a PCIe read: a thread per node would issue one read per
//     sampled entry, a warp issues one per sector its picks touch;
//   - Floyd with fanout <= 32 runs one draw per lane (Philox is the expensive part) and resolves
//     the collisions with ballots and shuffles; weighted lists are streamed in coalesced chunks.
// Bit-identity with the host: integer draws are exact; the double arithmetic uses the _rn
// intrinsics so that nvcc cannot contract it into FMAs, and the log is core/portable_math.hpp's,
// the same bits on both sides. Every decision (the sample count, the Floyd steps and collision
// rule, the keys, the radix-select digit, the keep rule) is a function of ../neighbor_steps.hpp
// that the CPU tests call; the code here arranges lanes and blocks around them.
//
// Hubs (degree >= nbr::kHubDegree) whose draw costs in proportion to the degree are sampled by a
// whole block instead (the block_* functions below, kThreads threads).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "cuda/cuda_util.cuh"
#include "cuda/topology_ref.cuh"
#include "graphtier/core/rng.hpp"
#include "graphtier/sample/random.hpp"
#include "bulk_row_ops.hpp"
#include "neighbor_steps.hpp"

namespace graphtier::sample::cuda {

inline constexpr int kWarp = 32;
inline constexpr unsigned kFullMask = 0xffffffffu;
/// Entries of a neighbour list staged in shared memory per warp at a time (keys or prefix sums).
inline constexpr int kChunk = 256;
inline constexpr int kRadixBins = nbr::kRadixBins;

struct DrawParams {
  uint64_t seed;
  uint64_t layer_stream;
  int64_t fanout;  // -1 = all
  bool replace;
  bool weighted;
};

/// Per-warp shared scratch.
struct WarpScratch {
  union {
    uint64_t keys[kChunk];
    double prefix[kChunk];
  };
  unsigned hist[kRadixBins];
};

/// How many edges node v keeps: degree d, `positive` edges of positive weight (d when unweighted).
__device__ __forceinline__ int64_t sample_count(const DrawParams& c, int64_t d, int64_t positive) {
  return nbr::sample_count(c.fanout, c.replace, c.weighted, d, positive);
}

/// Whether node w of degree d is a hub that a block samples (nbr::cost_grows_with_degree).
__device__ __forceinline__ bool is_hub(const DrawParams& c, int64_t d) {
  return d >= nbr::kHubDegree && nbr::cost_grows_with_degree(c.fanout, c.replace, c.weighted, d);
}

__device__ __forceinline__ int64_t warp_sum(int64_t x) {
  for (int o = kWarp / 2; o > 0; o /= 2) x += __shfl_xor_sync(kFullMask, x, o);
  return x;
}

__device__ __forceinline__ unsigned lanes_below(int lane) { return (1u << lane) - 1u; }

template <typename Index>
__device__ int64_t count_positive(const TopologyRef<Index>& g, int64_t begin, int64_t end, int lane) {
  int64_t mine = 0;
  for (int64_t p = begin + lane; p < end; p += kWarp) mine += g.weight(p) > 0.0f ? 1 : 0;
  return warp_sum(mine);
}

/// Writes edge p at output slot k.
template <typename Index>
__device__ __forceinline__ void emit(const TopologyRef<Index>& g, int64_t* positions, int64_t* neighbours, int64_t k,
                                     int64_t p) {
  positions[k] = p;
  neighbours[k] = g.index(p);
}

template <typename Index>
__device__ void all_edges(const TopologyRef<Index>& g, int64_t begin, int64_t d, int64_t* positions,
                          int64_t* neighbours, int lane) {
  for (int64_t k = lane; k < d; k += kWarp) emit(g, positions, neighbours, k, begin + k);
}

/// Positive-weight edges in position order (a ballot compaction per 32 edges).
template <typename Index>
__device__ void positive_edges(const TopologyRef<Index>& g, int64_t begin, int64_t end, int64_t* positions,
                               int64_t* neighbours, int lane) {
  int64_t written = 0;
  for (int64_t base = begin; base < end; base += kWarp) {
    const int64_t p = base + lane;
    const bool keep = p < end && g.weight(p) > 0.0f;
    const unsigned mask = __ballot_sync(kFullMask, keep);
    if (keep) emit(g, positions, neighbours, written + __popc(mask & lanes_below(lane)), p);
    written += __popc(mask);
  }
}

template <typename Index>
__device__ void uniform_repeated(const TopologyRef<Index>& g, const DrawParams& c, int64_t v, int64_t begin, int64_t d,
                                 int64_t n, int64_t* positions, int64_t* neighbours, int lane) {
  for (int64_t i = lane; i < n; i += kWarp) {
    const auto t = static_cast<int64_t>(bounded_u64(node_bits(c.seed, c.layer_stream, v, i), static_cast<uint64_t>(d)));
    emit(g, positions, neighbours, i, begin + t);
  }
}

/// Floyd for f <= 32 (f < d), draw i on lane i; the collision rule is nbr::floyd_warp_collisions:
/// the "same t as an earlier draw" test is a __match_any_sync, the chain through earlier
/// collided lanes f shuffle steps.
template <typename Index>
__device__ void floyd_warp(const TopologyRef<Index>& g, const DrawParams& c, int64_t v, int64_t begin, int64_t d,
                           int f, int64_t* positions, int64_t* neighbours, int lane) {
  const bool active = lane < f;
  const int64_t j = d - f + lane;
  int64_t t = 0;
  if (active) t = nbr::floyd_draw(c.seed, c.layer_stream, v, d, f, lane);
  // Inactive lanes get values no draw can take (draws are < 2^62).
  const unsigned long long key = active ? static_cast<unsigned long long>(t) : ~0ull - static_cast<unsigned>(lane);
  const unsigned same = __match_any_sync(kFullMask, key);
  const unsigned repeated = __ballot_sync(kFullMask, active && (same & lanes_below(lane)) != 0);
  const int ref = active ? nbr::floyd_warp_ref(t, lane, d, f) : -1;
  const unsigned collided =
      nbr::floyd_warp_collisions(repeated, f, [&](int i) { return __shfl_sync(kFullMask, ref, i); });
  const int64_t pick = ((collided >> lane) & 1u) != 0 ? j : t;
  // Picks are distinct: the rank is the output slot in ascending order.
  const int rank = nbr::floyd_warp_rank(pick, f, [&](int i) { return __shfl_sync(kFullMask, pick, i); });
  if (active) emit(g, positions, neighbours, rank, begin + pick);
}

/// Floyd for f > 32: nbr::floyd_step on lane 0, the kept set sorted in the output slots (as the
/// host does), then the neighbour ids read by the whole warp. Quadratic in f like the host: large
/// fanouts without replacement are rare.
template <typename Index>
__device__ void floyd_serial(const TopologyRef<Index>& g, const DrawParams& c, int64_t v, int64_t begin, int64_t d,
                             int64_t f, int64_t* positions, int64_t* neighbours, int lane) {
  if (lane == 0) {
    for (int64_t i = 0; i < f; ++i) {
      nbr::floyd_step(positions, i, begin, d - f + i, nbr::floyd_draw(c.seed, c.layer_stream, v, d, f, i));
    }
  }
  __syncwarp();
  for (int64_t k = lane; k < f; k += kWarp) neighbours[k] = g.index(positions[k]);
}

/// Inverse transform on the inclusive prefix sums: the sums must be the host's left-to-right
/// doubles, so lane 0 adds them up, a chunk at a time staged by the whole warp (coalesced); every
/// lane then binary-searches its draw in the chunk that crosses its target.
template <typename Index>
__device__ void weighted_repeated(const TopologyRef<Index>& g, const DrawParams& c, int64_t v, int64_t begin,
                                  int64_t end, int64_t n, int64_t* positions, int64_t* neighbours, int lane,
                                  WarpScratch& s) {
  double total = 0;
  int64_t last_positive = -1;  // this lane's, then the warp's
  for (int64_t base = begin; base < end; base += kChunk) {
    const int len = static_cast<int>(end - base < kChunk ? end - base : kChunk);
    for (int k = lane; k < len; k += kWarp) {
      const float w = g.weight(base + k);
      s.prefix[k] = static_cast<double>(w);
      if (w > 0.0f) last_positive = base + k;
    }
    __syncwarp();
    if (lane == 0) {
      for (int k = 0; k < len; ++k) total = __dadd_rn(total, s.prefix[k]);
    }
    __syncwarp();
  }
  total = __shfl_sync(kFullMask, total, 0);
  for (int o = kWarp / 2; o > 0; o /= 2) {
    const int64_t other = __shfl_xor_sync(kFullMask, last_positive, o);
    last_positive = other > last_positive ? other : last_positive;
  }
  for (int64_t round = 0; round < n; round += kWarp) {
    const int64_t i = round + lane;
    const bool has = i < n;
    double target = 0;
    if (has) target = __dmul_rn(u64_to_unit_double(node_bits(c.seed, c.layer_stream, v, i)), total);
    int64_t pick = -1;
    double running = 0;
    for (int64_t base = begin; base < end; base += kChunk) {
      const int len = static_cast<int>(end - base < kChunk ? end - base : kChunk);
      for (int k = lane; k < len; k += kWarp) s.prefix[k] = static_cast<double>(g.weight(base + k));
      __syncwarp();
      if (lane == 0) {
        for (int k = 0; k < len; ++k) s.prefix[k] = running = __dadd_rn(running, s.prefix[k]);
      }
      __syncwarp();
      if (has && pick < 0 && s.prefix[len - 1] > target) pick = base + bulk::upper_bound_index(s.prefix, len, target);
      const bool done = __all_sync(kFullMask, !has || pick >= 0);
      __syncwarp();  // lane 0 overwrites the chunk next
      if (done) break;
    }
    if (has) emit(g, positions, neighbours, i, pick >= 0 ? pick : last_positive);
  }
}

/// The Efraimidis-Spirakis key of edge p as ordered bits (nbr::es_key_bits).
template <typename Index>
__device__ __forceinline__ uint64_t es_key(const TopologyRef<Index>& g, const DrawParams& c, int64_t p) {
  return nbr::es_key_bits(c.seed, c.layer_stream, p, g.weight(p));
}

/// Efraimidis-Spirakis without replacement: the n smallest (key, position) among the positive
/// edges, emitted in position order. A radix select (8 passes of 8 bits, a per-warp histogram)
/// finds the n-th smallest key K; then one ordered pass keeps the keys below K and the lowest
/// positions among those equal to K. Keys are staged in shared memory when the list fits one
/// chunk, recomputed per pass otherwise (9 Philox + log per edge for long lists).
template <typename Index>
__device__ void weighted_distinct(const TopologyRef<Index>& g, const DrawParams& c, int64_t begin, int64_t end,
                                  int64_t n, int64_t* positions, int64_t* neighbours, int lane, WarpScratch& s) {
  const int64_t d = end - begin;
  const bool staged = d <= kChunk;
  if (staged) {
    for (int64_t k = lane; k < d; k += kWarp) s.keys[k] = es_key(g, c, begin + k);
    __syncwarp();
  }
  const auto key_at = [&](int64_t p) { return staged ? s.keys[p - begin] : es_key(g, c, p); };
  uint64_t prefix = 0;  // the digits of K found so far
  int64_t need = n;     // rank of K among the keys that share `prefix`
  for (int shift = 56; shift >= 0; shift -= 8) {
    for (int b = lane; b < kRadixBins; b += kWarp) s.hist[b] = 0;
    __syncwarp();
    for (int64_t p = begin + lane; p < end; p += kWarp) {
      const int bin = nbr::radix_bin(key_at(p), shift, prefix);
      if (bin >= 0) atomicAdd(&s.hist[bin], 1u);
    }
    __syncwarp();
    // Lane l owns bins [8l, 8l + 8): an inclusive warp scan of the lane sums finds the lane whose
    // bins reach `need`, and that lane walks its eight.
    constexpr int kPerLane = kRadixBins / kWarp;
    int64_t mine = 0;
    for (int b = 0; b < kPerLane; ++b) mine += s.hist[lane * kPerLane + b];
    int64_t inclusive = mine;
    for (int o = 1; o < kWarp; o *= 2) {
      const int64_t up = __shfl_up_sync(kFullMask, inclusive, o);
      if (lane >= o) inclusive += up;
    }
    const int64_t before = inclusive - mine;
    const unsigned reached = __ballot_sync(kFullMask, inclusive >= need);
    const int owner = __ffs(static_cast<int>(reached)) - 1;  // need <= the count, so some lane reaches it
    int digit = 0;
    int64_t below = before;
    if (lane == owner) digit = lane * kPerLane + nbr::radix_digit(s.hist + lane * kPerLane, kPerLane, need, &below);
    digit = __shfl_sync(kFullMask, digit, owner);
    below = __shfl_sync(kFullMask, below, owner);
    prefix |= static_cast<uint64_t>(digit) << shift;
    need -= below;
    __syncwarp();  // the histogram is cleared next
  }
  // Keep key < K, and the first `need` positions with key == K.
  int64_t written = 0, ties = 0;
  for (int64_t base = begin; base < end; base += kWarp) {
    const int64_t p = base + lane;
    const uint64_t key = p < end ? key_at(p) : ~0ull;
    const bool equal = p < end && key == prefix;
    const unsigned equal_mask = __ballot_sync(kFullMask, equal);
    const bool keep = p < end && nbr::es_keep(key, prefix, ties + __popc(equal_mask & lanes_below(lane)), need);
    const unsigned keep_mask = __ballot_sync(kFullMask, keep);
    if (keep) emit(g, positions, neighbours, written + __popc(keep_mask & lanes_below(lane)), p);
    written += __popc(keep_mask);
    ties += __popc(equal_mask);
  }
}

// ---- Hubs: one block (kThreads threads) per node -----------------------------------------------

/// Entries of a hub's list staged in shared memory per block at a time (prefix sums).
inline constexpr int kBlockChunk = 2048;

struct MaxI64 {
  __device__ int64_t operator()(int64_t a, int64_t b) const { return a > b ? a : b; }
};

/// Per-block shared scratch of the hub paths.
struct BlockScratch {
  using Scan = cub::BlockScan<int64_t, kThreads>;
  using Reduce = cub::BlockReduce<int64_t, kThreads>;
  union {
    typename Scan::TempStorage scan;
    typename Reduce::TempStorage reduce;
  };
  double prefix[kBlockChunk];
  unsigned hist[kRadixBins];
  int64_t shared[4];
};

/// The positive-weight edges of [begin, end), counted by the block (the same total for every
/// thread).
template <typename Index>
__device__ int64_t block_count_positive(const TopologyRef<Index>& g, int64_t begin, int64_t end, BlockScratch& s) {
  int64_t mine = 0;
  for (int64_t p = begin + threadIdx.x; p < end; p += kThreads) mine += g.weight(p) > 0.0f ? 1 : 0;
  const int64_t total = typename BlockScratch::Reduce(s.reduce).Sum(mine);
  if (threadIdx.x == 0) s.shared[0] = total;
  __syncthreads();
  const int64_t out = s.shared[0];
  __syncthreads();
  return out;
}

template <typename Index>
__device__ void block_all_edges(const TopologyRef<Index>& g, int64_t begin, int64_t d, int64_t* positions,
                                int64_t* neighbours) {
  for (int64_t k = threadIdx.x; k < d; k += kThreads) emit(g, positions, neighbours, k, begin + k);
}

/// Edges of [begin, end) that pass `keep(p, ties_before)`, emitted in position order: a block
/// scan per tile of kThreads edges numbers them. `tie(p)` marks the edges counted by ties_before
/// (an exclusive count in position order), for the keep rule of weighted_distinct.
template <typename Index, typename Tie, typename Keep>
__device__ void block_ordered_keep(const TopologyRef<Index>& g, int64_t begin, int64_t end, int64_t* positions,
                                   int64_t* neighbours, BlockScratch& s, Tie tie, Keep keep) {
  int64_t written = 0, ties = 0;
  for (int64_t base = begin; base < end; base += kThreads) {
    const int64_t p = base + threadIdx.x;
    const bool in = p < end;
    const int64_t is_tie = in && tie(p) ? 1 : 0;
    int64_t ties_before = 0, tile_ties = 0;
    typename BlockScratch::Scan(s.scan).ExclusiveSum(is_tie, ties_before, tile_ties);
    __syncthreads();
    const int64_t kept = in && keep(p, ties + ties_before) ? 1 : 0;
    int64_t slot = 0, tile_kept = 0;
    typename BlockScratch::Scan(s.scan).ExclusiveSum(kept, slot, tile_kept);
    __syncthreads();
    if (kept != 0) emit(g, positions, neighbours, written + slot, p);
    written += tile_kept;
    ties += tile_ties;
  }
}

/// positive_edges by a block.
template <typename Index>
__device__ void block_positive_edges(const TopologyRef<Index>& g, int64_t begin, int64_t end, int64_t* positions,
                                     int64_t* neighbours, BlockScratch& s) {
  block_ordered_keep(
      g, begin, end, positions, neighbours, s, [](int64_t) { return false; },
      [&](int64_t p, int64_t) { return g.weight(p) > 0.0f; });
}

/// weighted_distinct by a block: the same radix select (nbr::radix_bin, nbr::radix_digit) with
/// the histogram shared by the block and the keys recomputed per pass, then the same keep rule
/// (nbr::es_keep) in position order.
template <typename Index>
__device__ void block_weighted_distinct(const TopologyRef<Index>& g, const DrawParams& c, int64_t begin, int64_t end,
                                        int64_t n, int64_t* positions, int64_t* neighbours, BlockScratch& s) {
  uint64_t prefix = 0;
  int64_t need = n;
  for (int shift = 56; shift >= 0; shift -= 8) {
    for (int b = threadIdx.x; b < kRadixBins; b += kThreads) s.hist[b] = 0;
    __syncthreads();
    for (int64_t p = begin + threadIdx.x; p < end; p += kThreads) {
      const int bin = nbr::radix_bin(es_key(g, c, p), shift, prefix);
      if (bin >= 0) atomicAdd(&s.hist[bin], 1u);
    }
    __syncthreads();
    // Thread b owns bin b (kThreads == kRadixBins): the bin where the running count first
    // reaches `need` is the one whose exclusive count is below it and whose digit step stops.
    static_assert(kThreads == kRadixBins, "one bin per thread");
    const int b = static_cast<int>(threadIdx.x);
    int64_t before = 0;
    typename BlockScratch::Scan(s.scan).ExclusiveSum(static_cast<int64_t>(s.hist[b]), before);
    int64_t below = before;
    if (before < need && nbr::radix_digit(s.hist + b, 1, need, &below) == 0) {
      s.shared[0] = b;
      s.shared[1] = below;
    }
    __syncthreads();
    prefix |= static_cast<uint64_t>(s.shared[0]) << shift;
    need -= s.shared[1];
    __syncthreads();  // the histogram and the shared digit are rewritten next
  }
  block_ordered_keep(
      g, begin, end, positions, neighbours, s, [&](int64_t p) { return es_key(g, c, p) == prefix; },
      [&](int64_t p, int64_t ties_before) { return nbr::es_keep(es_key(g, c, p), prefix, ties_before, need); });
}

/// weighted_repeated by a block. The prefix sums must be the host's left-to-right doubles, so
/// thread 0 still adds them one by one; the block only stages the weights (coalesced, kBlockChunk
/// at a time) and runs the binary searches of the n draws in parallel.
template <typename Index>
__device__ void block_weighted_repeated(const TopologyRef<Index>& g, const DrawParams& c, int64_t v, int64_t begin,
                                        int64_t end, int64_t n, int64_t* positions, int64_t* neighbours,
                                        BlockScratch& s) {
  double total = 0;  // thread 0's
  int64_t last_positive = -1;
  for (int64_t base = begin; base < end; base += kBlockChunk) {
    const int len = static_cast<int>(end - base < kBlockChunk ? end - base : kBlockChunk);
    for (int k = threadIdx.x; k < len; k += kThreads) {
      const float w = g.weight(base + k);
      s.prefix[k] = static_cast<double>(w);
      if (w > 0.0f) last_positive = base + k;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int k = 0; k < len; ++k) total = __dadd_rn(total, s.prefix[k]);
    }
    __syncthreads();
  }
  last_positive = typename BlockScratch::Reduce(s.reduce).Reduce(last_positive, MaxI64{});
  if (threadIdx.x == 0) {
    s.shared[0] = last_positive;
    s.prefix[0] = total;
  }
  __syncthreads();
  last_positive = s.shared[0];
  total = s.prefix[0];
  __syncthreads();
  for (int64_t round = 0; round < n; round += kThreads) {
    const int64_t i = round + threadIdx.x;
    const bool has = i < n;
    double target = 0;
    if (has) target = __dmul_rn(u64_to_unit_double(node_bits(c.seed, c.layer_stream, v, i)), total);
    int64_t pick = -1;
    double running = 0;  // thread 0's
    for (int64_t base = begin; base < end; base += kBlockChunk) {
      const int len = static_cast<int>(end - base < kBlockChunk ? end - base : kBlockChunk);
      for (int k = threadIdx.x; k < len; k += kThreads) s.prefix[k] = static_cast<double>(g.weight(base + k));
      __syncthreads();
      if (threadIdx.x == 0) {
        for (int k = 0; k < len; ++k) s.prefix[k] = running = __dadd_rn(running, s.prefix[k]);
      }
      __syncthreads();
      if (has && pick < 0 && s.prefix[len - 1] > target) pick = base + bulk::upper_bound_index(s.prefix, len, target);
      const bool done = __syncthreads_and(!has || pick >= 0) != 0;  // also: thread 0 overwrites next
      if (done) break;
    }
    if (has) emit(g, positions, neighbours, i, pick >= 0 ? pick : last_positive);
  }
}

}  // namespace graphtier::sample::cuda
