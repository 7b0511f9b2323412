#include "parallel.hpp"

namespace graphtier::prep::impl {

int64_t exclusive_scan(std::span<int64_t> counts, ThreadPool& pool) {
  const int64_t n = static_cast<int64_t>(counts.size());
  constexpr int64_t kGrain = int64_t{1} << 18;
  const int64_t chunks = (n + kGrain - 1) / kGrain;
  std::vector<int64_t> chunk_sum(chunks + 1, 0);
  pool.parallel_for(0, n, kGrain, [&](int64_t lo, int64_t hi) {
    int64_t sum = 0;
    for (int64_t i = lo; i < hi; ++i) sum += counts[i];
    chunk_sum[lo / kGrain + 1] = sum;
  });
  for (int64_t c = 0; c < chunks; ++c) chunk_sum[c + 1] += chunk_sum[c];
  pool.parallel_for(0, n, kGrain, [&](int64_t lo, int64_t hi) {
    int64_t running = chunk_sum[lo / kGrain];
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t c = counts[i];
      counts[i] = running;
      running += c;
    }
  });
  return chunk_sum[chunks];
}

std::vector<int64_t> balanced_bounds(std::span<const int64_t> indptr, int64_t begin, int64_t end,
                                     int64_t target_cost) {
  // cost(v) = indptr[v] + v is strictly increasing in v, so each boundary is a binary search.
  const auto cost = [&](int64_t v) { return indptr[v] + v; };
  std::vector<int64_t> bounds{begin};
  int64_t at = begin;
  while (at < end) {
    const int64_t goal = cost(at) + std::max<int64_t>(target_cost, 1);
    int64_t lo = at + 1, hi = end;  // first v in (at, end] with cost(v) >= goal, else end
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (cost(mid) >= goal) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    at = lo;
    bounds.push_back(at);
  }
  return bounds;
}

}  // namespace graphtier::prep::impl
