// Step 2 of bulk sampling (bulk_row_ops.hpp's sample_row) for one row by a whole thread block, so
// that a hub row of a million entries is scanned by the block rather than by one thread. Only
// included by .cu files.
//
// Why the block gives sample_row's bits: every prefix sum of a row is exact (sample_row's note),
// so the block-wide scans (carry + the tile's inclusive sum) give the same doubles as the serial
// loop; the draws of a round only zero the entries they hit (atomically: a round's outcome is the
// set of entries hit, whatever the order), and the count of entries chosen in a round is the
// count of entries zeroed by it. Every decision (the target, the pick, the counts) is one of
// bulk_row_ops.hpp's __host__ __device__ functions, which the CPU tests check against the naive
// reference.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "bulk_row_ops.hpp"

namespace graphtier::sample::cuda {

struct MaxOfInt64 {
  __device__ int64_t operator()(int64_t a, int64_t b) const { return a > b ? a : b; }
};

/// The shared memory of one block's row draws.
template <int kBlock>
struct RowDrawShared {
  typename cub::BlockScan<double, kBlock>::TempStorage scan;
  typename cub::BlockScan<int64_t, kBlock>::TempStorage count_scan;
  typename cub::BlockReduce<int64_t, kBlock>::TempStorage reduce;
  int64_t last_positive;
  unsigned long long chosen_in_round;
};

/// Consecutive entries per thread in a tile: a tile of a row is kBlock * kRowItems entries, so a
/// hub row takes a quarter of the block-wide steps and each thread's loads are in flight together.
constexpr int kRowItems = 4;

/// prefix[k] = x[0] + ... + x[k] for k < n (exact sums: any grouping gives these bits); returns
/// the total in every thread. With `last_positive`, also the last k with x[k] > 0 (-1 if none).
template <int kBlock>
__device__ double block_prefix_sums(const double* x, int64_t n, double* prefix, RowDrawShared<kBlock>& s,
                                    int64_t* last_positive) {
  using Scan = cub::BlockScan<double, kBlock>;
  constexpr int64_t kTile = int64_t{kBlock} * kRowItems;
  double carry = 0;
  int64_t last = -1;
  for (int64_t base = 0; base < n; base += kTile) {
    const int64_t first = base + static_cast<int64_t>(threadIdx.x) * kRowItems;
    double v[kRowItems];
#pragma unroll
    for (int i = 0; i < kRowItems; ++i) {
      v[i] = first + i < n ? x[first + i] : 0.0;
      if (v[i] > 0) last = first + i;
    }
    double inclusive[kRowItems];
    double aggregate = 0;
    Scan(s.scan).InclusiveSum(v, inclusive, aggregate);
#pragma unroll
    for (int i = 0; i < kRowItems; ++i) {
      if (first + i < n) prefix[first + i] = bulk::add_rn(carry, inclusive[i]);
    }
    carry = bulk::add_rn(carry, aggregate);
    __syncthreads();  // the scan's storage is reused by the next tile
  }
  if (last_positive != nullptr) {
    const int64_t block_last = cub::BlockReduce<int64_t, kBlock>(s.reduce).Reduce(last, MaxOfInt64{});
    if (threadIdx.x == 0) s.last_positive = block_last;
    __syncthreads();
    *last_positive = s.last_positive;
    __syncthreads();
  }
  return carry;
}

/// bulk::sample_row by the block: the same arguments, every thread of the block calls it with the
/// same values; returns the count written to out (in every thread). work and prefix: n doubles
/// each, used only when the row draws (bulk::row_draws). Ends with a block barrier.
template <int kBlock>
__device__ int64_t block_sample_row(const double* w, int64_t n, int64_t budget, bool replace, uint64_t seed,
                                    uint64_t layer_stream, int64_t key, double* work, double* prefix, int64_t* out,
                                    RowDrawShared<kBlock>& s) {
  const int64_t count = bulk::sampled_count(n, budget, replace);
  if (count == 0) return 0;
  if (!bulk::row_draws(n, budget, replace)) {
    for (int64_t k = threadIdx.x; k < n; k += kBlock) out[k] = k;
    __syncthreads();
    return n;
  }
  if (replace) {
    const double total = block_prefix_sums<kBlock>(w, n, prefix, s, nullptr);
    __syncthreads();  // every prefix sum is written before any draw searches them
    for (int64_t j = threadIdx.x; j < budget; j += kBlock) {
      out[j] = bulk::pick_with_replacement(prefix, n, bulk::draw_target(seed, layer_stream, key, j, total));
    }
    __syncthreads();
    return budget;
  }
  for (int64_t k = threadIdx.x; k < n; k += kBlock) work[k] = w[k];
  __syncthreads();
  int64_t chosen = 0;
  for (int64_t round = 0; chosen < budget; ++round) {
    int64_t last_positive = -1;
    const double total = block_prefix_sums<kBlock>(work, n, prefix, s, &last_positive);
    if (threadIdx.x == 0) s.chosen_in_round = 0;
    __syncthreads();
    const uint64_t rs = bulk::round_stream_of(layer_stream, round);
    const int64_t need = budget - chosen;
    for (int64_t j = threadIdx.x; j < need; j += kBlock) {
      const int64_t k = bulk::pick_distinct(prefix, n, bulk::draw_target(seed, rs, key, j, total), last_positive);
      // Zero the entry; only the draw that found it positive counts it (weights are positive, so
      // a nonzero bit pattern is a positive weight).
      const unsigned long long before = atomicExch(reinterpret_cast<unsigned long long*>(work + k), 0ULL);
      if (before != 0ULL) atomicAdd(&s.chosen_in_round, 1ULL);
    }
    __syncthreads();
    chosen += static_cast<int64_t>(s.chosen_in_round);
    __syncthreads();  // every thread has read the count before the next round resets it
  }
  // The chosen entries (zeroed) in ascending order.
  using CountScan = cub::BlockScan<int64_t, kBlock>;
  constexpr int64_t kTile = int64_t{kBlock} * kRowItems;
  int64_t emitted = 0;
  for (int64_t base = 0; base < n; base += kTile) {
    const int64_t first = base + static_cast<int64_t>(threadIdx.x) * kRowItems;
    int64_t flags[kRowItems];
#pragma unroll
    for (int i = 0; i < kRowItems; ++i) flags[i] = first + i < n && work[first + i] == 0 ? 1 : 0;
    int64_t ranks[kRowItems];
    int64_t tile = 0;
    CountScan(s.count_scan).ExclusiveSum(flags, ranks, tile);
#pragma unroll
    for (int i = 0; i < kRowItems; ++i) {
      if (flags[i] != 0) out[emitted + ranks[i]] = first + i;
    }
    emitted += tile;
    __syncthreads();
  }
  return emitted;
}

}  // namespace graphtier::sample::cuda
