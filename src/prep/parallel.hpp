// Deterministic parallel building blocks of the prep module: prefix sums, edge-balanced chunks
// and a merge sort. Chunk boundaries depend only on the data and fixed grains, never on the pool
// size, so anything computed per chunk is reproducible.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "graphtier/core/thread_pool.hpp"

namespace graphtier::prep::impl {

/// Turns counts[0 .. n) into their exclusive prefix sums in place and returns the total.
int64_t exclusive_scan(std::span<int64_t> counts, ThreadPool& pool);

/// Boundaries b_0 = begin < b_1 < ... < b_k = end of node ranges of about `target_cost` each, where
/// node v costs (indptr[v + 1] - indptr[v]) + 1: rows are balanced by entries, yet runs of empty
/// rows still split. A row heavier than the target gets a range of its own.
std::vector<int64_t> balanced_bounds(std::span<const int64_t> indptr, int64_t begin, int64_t end,
                                     int64_t target_cost);

/// Sorts `values` by the strict weak order `less` with one sorted run per pool thread followed by
/// rounds of pairwise merges. With a total order (no two elements equivalent) the result is unique,
/// hence independent of the pool size. Uses a second buffer of the same size.
template <typename T, typename Less>
void parallel_sort(std::vector<T>& values, Less less, ThreadPool& pool) {
  const int64_t n = static_cast<int64_t>(values.size());
  const int64_t runs = std::min<int64_t>(pool.size(), std::max<int64_t>(n / 4096, 1));
  std::vector<int64_t> bounds(runs + 1);
  for (int64_t r = 0; r <= runs; ++r) bounds[r] = n * r / runs;
  pool.parallel_for(0, runs, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) std::sort(values.begin() + bounds[r], values.begin() + bounds[r + 1], less);
  });
  if (runs == 1) return;
  std::vector<T> scratch(values.size());
  std::vector<T>* from = &values;
  std::vector<T>* to = &scratch;
  for (int64_t width = 1; width < runs; width *= 2) {
    const int64_t pairs = (runs + 2 * width - 1) / (2 * width);
    pool.parallel_for(0, pairs, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const int64_t a = bounds[std::min(runs, 2 * width * p)];
        const int64_t m = bounds[std::min(runs, 2 * width * p + width)];
        const int64_t b = bounds[std::min(runs, 2 * width * (p + 1))];
        std::merge(from->begin() + a, from->begin() + m, from->begin() + m, from->begin() + b, to->begin() + a, less);
      }
    });
    std::swap(from, to);
  }
  if (from != &values) values.swap(*from);
}

}  // namespace graphtier::prep::impl
