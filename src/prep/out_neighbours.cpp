// Transpose of the CSC: a counting pass, a prefix sum, an atomic scatter, then a sort of each row.
// The scatter's order within a row depends on timing; sorting each row (most are short) makes the
// result unique, which is what keeps PageRank sums reproducible.
#include "graphtier/prep/out_neighbours.hpp"

#include <algorithm>
#include <atomic>
#include <variant>

#include "graphtier/core/error.hpp"
#include "parallel.hpp"

namespace graphtier::prep {
namespace {

constexpr int64_t kEdgeGrain = int64_t{1} << 16;

template <typename In, typename Out>
void scatter_and_sort(const graph::CscView& csc, std::span<const In> in, std::span<const int64_t> out_indptr,
                      std::vector<int64_t>& cursor, std::vector<Out>& out, ThreadPool& pool) {
  const int64_t n = csc.num_nodes();
  const auto in_chunks = impl::balanced_bounds(csc.indptr, 0, n, kEdgeGrain);
  pool.parallel_for(0, static_cast<int64_t>(in_chunks.size()) - 1, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t c = lo; c < hi; ++c) {
      for (int64_t x = in_chunks[c]; x < in_chunks[c + 1]; ++x) {
        for (int64_t e = csc.indptr[x]; e < csc.indptr[x + 1]; ++e) {
          const int64_t pos = std::atomic_ref<int64_t>(cursor[static_cast<int64_t>(in[e])]).fetch_add(1, std::memory_order_relaxed);
          out[pos] = static_cast<Out>(x);
        }
      }
    }
  });
  const auto out_chunks = impl::balanced_bounds(out_indptr, 0, n, kEdgeGrain);
  pool.parallel_for(0, static_cast<int64_t>(out_chunks.size()) - 1, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t c = lo; c < hi; ++c) {
      for (int64_t u = out_chunks[c]; u < out_chunks[c + 1]; ++u) {
        if (out_indptr[u + 1] - out_indptr[u] > 1) std::sort(out.begin() + out_indptr[u], out.begin() + out_indptr[u + 1]);
      }
    }
  });
}

}  // namespace

std::vector<int64_t> out_degrees(const graph::CscView& csc, ThreadPool& pool) {
  csc.check_shape("out_degrees");
  std::vector<int64_t> degree(static_cast<std::size_t>(csc.num_nodes()), 0);
  std::visit(
      [&](auto indices) {
        pool.parallel_for(0, static_cast<int64_t>(indices.size()), kEdgeGrain, [&](int64_t lo, int64_t hi) {
          for (int64_t e = lo; e < hi; ++e) {
            std::atomic_ref<int64_t>(degree[static_cast<int64_t>(indices[e])]).fetch_add(1, std::memory_order_relaxed);
          }
        });
      },
      csc.indices);
  return degree;
}

OutNeighbours OutNeighbours::build(const graph::CscView& csc, ThreadPool& pool) {
  const int64_t n = csc.num_nodes();
  OutNeighbours t;
  // Ids of N <= 2^31 nodes fit int32 (the dataset format draws the same line).
  t.wide_ = n > (int64_t{1} << 31);
  std::vector<int64_t> cursor = out_degrees(csc, pool);
  t.indptr_.assign(static_cast<std::size_t>(n) + 1, 0);
  pool.parallel_for(0, n, int64_t{1} << 18, [&](int64_t lo, int64_t hi) {
    std::copy(cursor.begin() + lo, cursor.begin() + hi, t.indptr_.begin() + lo);
  });
  impl::exclusive_scan(t.indptr_, pool);  // the trailing 0 count turns into the total E
  pool.parallel_for(0, n, int64_t{1} << 18, [&](int64_t lo, int64_t hi) {
    std::copy(t.indptr_.begin() + lo, t.indptr_.begin() + hi, cursor.begin() + lo);
  });
  const auto edges = static_cast<std::size_t>(csc.num_edges());
  std::visit(
      [&](auto in) {
        if (t.wide_) {
          t.indices64_.resize(edges);
          scatter_and_sort(csc, in, t.indptr_, cursor, t.indices64_, pool);
        } else {
          t.indices32_.resize(edges);
          scatter_and_sort(csc, in, t.indptr_, cursor, t.indices32_, pool);
        }
      },
      csc.indices);
  return t;
}

graph::CscView OutNeighbours::view() const {
  if (wide_) return {indptr_, graph::IndexSpan(std::span<const int64_t>(indices64_))};
  return {indptr_, graph::IndexSpan(std::span<const int32_t>(indices32_))};
}

}  // namespace graphtier::prep
