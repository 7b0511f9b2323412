// The per-node draws of neighbour sampling on the GPU, exactly as neighbor_sampler.hpp specifies
// them (the CPU twin is cpu/neighbor_draws.cpp). One warp samples one dst node:
//   - the warp's loads of one neighbour list coalesce, which matters most through zero-copy,
//     where every 32-byte sector is a PCIe read: a thread per node would issue one read per
//     sampled entry, a warp issues one per sector its picks touch;
//   - Floyd with fanout <= 32 runs one draw per lane (Philox is the expensive part) and resolves
//     the collisions with ballots and shuffles; weighted lists are streamed in coalesced chunks.
// Bit-identity with the host: integer draws are exact; the double arithmetic uses the _rn
// intrinsics so that nvcc cannot contract it into FMAs, and the log is core/portable_math.hpp's,
// the same bits on both sides.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/topology_ref.cuh"
#include "graphtier/core/rng.hpp"
#include "graphtier/sample/random.hpp"

namespace graphtier::sample::cuda {

inline constexpr int kWarp = 32;
inline constexpr unsigned kFullMask = 0xffffffffu;
/// Entries of a neighbour list staged in shared memory per warp at a time (keys or prefix sums).
inline constexpr int kChunk = 256;
inline constexpr int kRadixBins = 256;

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
  if (c.fanout == 0) return 0;
  if (c.weighted) {
    if (c.replace && c.fanout > 0) return positive > 0 ? c.fanout : 0;
    return c.fanout < 0 || c.fanout >= positive ? positive : c.fanout;
  }
  if (c.fanout < 0 || (!c.replace && c.fanout >= d)) return d;
  if (c.replace) return d > 0 ? c.fanout : 0;
  return c.fanout;
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

/// Floyd for f <= 32 (f < d), draw i on lane i. Draw i collides (keeps j_i = d - f + i instead of
/// t_i) iff t_i is already kept, i.e. iff an earlier draw had the same t, or t_i = j_k for an
/// earlier k that collided itself (kept values are t's and collided j's only). The first test is a
/// __match_any_sync, the second a chain through earlier lanes, resolved in f shuffle steps.
template <typename Index>
__device__ void floyd_warp(const TopologyRef<Index>& g, const DrawParams& c, int64_t v, int64_t begin, int64_t d,
                           int f, int64_t* positions, int64_t* neighbours, int lane) {
  const bool active = lane < f;
  const int64_t j = d - f + lane;
  int64_t t = 0;
  if (active) t = static_cast<int64_t>(bounded_u64(node_bits(c.seed, c.layer_stream, v, lane), static_cast<uint64_t>(j + 1)));
  // Inactive lanes get values no draw can take (draws are < 2^62).
  const unsigned long long key = active ? static_cast<unsigned long long>(t) : ~0ull - static_cast<unsigned>(lane);
  const unsigned same = __match_any_sync(kFullMask, key);
  const unsigned repeated = __ballot_sync(kFullMask, active && (same & lanes_below(lane)) != 0);
  const int64_t k = t - (d - f);  // the earlier draw whose j equals t, when 0 <= k < lane
  const int ref = active && k >= 0 && k < lane ? static_cast<int>(k) : -1;
  unsigned collided = 0;
  for (int i = 0; i < f; ++i) {
    const int r = __shfl_sync(kFullMask, ref, i);
    if (((repeated >> i) & 1u) != 0 || (r >= 0 && ((collided >> r) & 1u) != 0)) collided |= 1u << i;
  }
  const int64_t pick = ((collided >> lane) & 1u) != 0 ? j : t;
  int rank = 0;  // picks are distinct: the rank is the output slot in ascending order
  for (int i = 0; i < f; ++i) rank += __shfl_sync(kFullMask, pick, i) < pick ? 1 : 0;
  if (active) emit(g, positions, neighbours, rank, begin + pick);
}

/// Floyd for f > 32, on lane 0 with the kept set sorted in the output slots (as the host does),
/// then the neighbour ids read by the whole warp. Quadratic in f like the host: large fanouts
/// without replacement are rare.
template <typename Index>
__device__ void floyd_serial(const TopologyRef<Index>& g, const DrawParams& c, int64_t v, int64_t begin, int64_t d,
                             int64_t f, int64_t* positions, int64_t* neighbours, int lane) {
  if (lane == 0) {
    for (int64_t i = 0; i < f; ++i) {
      const int64_t j = d - f + i;
      const auto t = static_cast<int64_t>(bounded_u64(node_bits(c.seed, c.layer_stream, v, i), static_cast<uint64_t>(j + 1)));
      int64_t lo = 0, hi = i;  // lower_bound of begin + t among the i kept
      while (lo < hi) {
        const int64_t mid = (lo + hi) / 2;
        if (positions[mid] < begin + t) lo = mid + 1; else hi = mid;
      }
      const int64_t value = begin + (lo < i && positions[lo] == begin + t ? j : t);
      lo = 0;
      hi = i;
      while (lo < hi) {
        const int64_t mid = (lo + hi) / 2;
        if (positions[mid] < value) lo = mid + 1; else hi = mid;
      }
      for (int64_t m = i; m > lo; --m) positions[m] = positions[m - 1];
      positions[lo] = value;
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
      if (has && pick < 0 && s.prefix[len - 1] > target) {
        int lo = 0, hi = len - 1;  // the first k with prefix[k] > target; prefix[len - 1] is one
        while (lo < hi) {
          const int mid = (lo + hi) / 2;
          if (s.prefix[mid] > target) hi = mid; else lo = mid + 1;
        }
        pick = base + lo;
      }
      const bool done = __all_sync(kFullMask, !has || pick >= 0);
      __syncwarp();  // lane 0 overwrites the chunk next
      if (done) break;
    }
    if (has) emit(g, positions, neighbours, i, pick >= 0 ? pick : last_positive);
  }
}

/// The Efraimidis-Spirakis key of edge p as ordered bits (keys are positive finite doubles, whose
/// bit patterns order like their values); zero-weight edges get a key above every real one.
template <typename Index>
__device__ __forceinline__ uint64_t es_key(const TopologyRef<Index>& g, const DrawParams& c, int64_t p) {
  const float w = g.weight(p);
  if (!(w > 0.0f)) return ~0ull;
  return static_cast<uint64_t>(__double_as_longlong(::graphtier::sample::es_key(c.seed, c.layer_stream, p, w)));
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
    const uint64_t high = shift == 56 ? 0 : ~0ull << (shift + 8);
    for (int b = lane; b < kRadixBins; b += kWarp) s.hist[b] = 0;
    __syncwarp();
    for (int64_t p = begin + lane; p < end; p += kWarp) {
      const uint64_t key = key_at(p);
      if ((key & high) == prefix) atomicAdd(&s.hist[(key >> shift) & 0xFF], 1u);
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
    if (lane == owner) {
      for (int b = 0; b < kPerLane; ++b) {
        const unsigned h = s.hist[lane * kPerLane + b];
        if (below + h >= need) {
          digit = lane * kPerLane + b;
          break;
        }
        below += h;
      }
    }
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
    const bool keep = p < end && (key < prefix || (equal && ties + __popc(equal_mask & lanes_below(lane)) < need));
    const unsigned keep_mask = __ballot_sync(kFullMask, keep);
    if (keep) emit(g, positions, neighbours, written + __popc(keep_mask & lanes_below(lane)), p);
    written += __popc(keep_mask);
    ties += __popc(equal_mask);
  }
}

}  // namespace graphtier::sample::cuda
