#include "graphtier/graph/summary.hpp"

#include <algorithm>
#include <numeric>
#include <variant>

namespace graphtier::graph {

DegreeStats degree_stats(std::vector<int64_t> degrees) {
  DegreeStats s;
  if (degrees.empty()) return s;
  const auto n = static_cast<int64_t>(degrees.size());
  s.mean = static_cast<double>(std::accumulate(degrees.begin(), degrees.end(), int64_t{0})) / n;
  s.zero_count = std::count(degrees.begin(), degrees.end(), 0);
  const auto [lo, hi] = std::minmax_element(degrees.begin(), degrees.end());
  s.min = *lo;
  s.max = *hi;
  auto nth = [&](int64_t k) {
    std::nth_element(degrees.begin(), degrees.begin() + k, degrees.end());
    return degrees[static_cast<std::size_t>(k)];
  };
  s.median = nth(n / 2);
  s.p99 = nth(std::min(n - 1, n * 99 / 100));
  return s;
}

std::vector<int64_t> out_degrees(const Dataset& dataset, ThreadPool& pool) {
  const int64_t n = dataset.num_nodes();
  // Per-part counters, summed afterwards: no atomics, and the result is the same for any pool.
  std::vector<std::vector<int64_t>> partial(static_cast<std::size_t>(pool.size()));
  std::visit(
      [&](auto indices) {
        pool.parallel_parts(0, static_cast<int64_t>(indices.size()), [&](int part, int64_t lo, int64_t hi) {
          auto& counts = partial[static_cast<std::size_t>(part)];
          counts.assign(static_cast<std::size_t>(n), 0);
          for (int64_t e = lo; e < hi; ++e) ++counts[static_cast<std::size_t>(indices[e])];
        });
      },
      dataset.indices());
  std::vector<int64_t> total(static_cast<std::size_t>(n), 0);
  for (const auto& counts : partial) {
    for (std::size_t v = 0; v < counts.size(); ++v) total[v] += counts[v];
  }
  return total;
}

std::vector<int64_t> edges_per_relation(const Dataset& dataset) {
  const HeteroView view = dataset.hetero();
  std::vector<int64_t> counts(static_cast<std::size_t>(view.num_relations()), 0);
  for (const uint8_t r : view.type_per_edge) ++counts[r];  // each < R: checked at open
  return counts;
}

DatasetSummary summarize(const Dataset& dataset, ThreadPool& pool) {
  DatasetSummary s;
  const auto indptr = dataset.indptr();
  std::vector<int64_t> in(static_cast<std::size_t>(dataset.num_nodes()));
  for (std::size_t v = 0; v < in.size(); ++v) in[v] = indptr[v + 1] - indptr[v];
  s.in_degree = degree_stats(std::move(in));
  s.out_degree = degree_stats(out_degrees(dataset, pool));
  s.num_train = static_cast<int64_t>(dataset.split(Split::kTrain).size());
  s.num_valid = static_cast<int64_t>(dataset.split(Split::kValid).size());
  s.num_test = static_cast<int64_t>(dataset.split(Split::kTest).size());
  if (dataset.has_labels()) {
    const auto labels = dataset.labels();
    s.num_labeled = std::count_if(labels.begin(), labels.end(), [](int32_t l) { return l >= 0; });
  }
  for (const auto& [array, entry] : dataset.manifest().files) s.total_bytes += entry.bytes;
  s.edges_per_relation = edges_per_relation(dataset);
  return s;
}

}  // namespace graphtier::graph
