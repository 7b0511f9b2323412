#include "bulk_matrices.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <variant>

namespace graphtier::sample {
namespace {

void for_ranges(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (pool == nullptr || n < 4096) {
    fn(0, n);
  } else {
    pool->parallel_for(0, n, 4096, fn);
  }
}

/// LADIES' squared entry on the probability grid, at least one unit so that rounding never
/// removes a candidate (nodes of degree above about 2^18 would otherwise round to zero).
double on_grid_square(double x) {
  const double units = std::nearbyint(x * x / kBulkProbabilityUnit);
  return std::max(units, 1.0) * kBulkProbabilityUnit;
}

}  // namespace

BulkMatrices build_bulk_matrices(const SampleGraph& graph, BulkAlgorithm algorithm, ThreadPool* pool) {
  const graph::CscView& csc = graph.csc;
  const int64_t n = csc.num_nodes(), e = csc.num_edges();
  BulkMatrices m;
  m.num_nodes = n;
  // Pass 1: each row's (neighbour, position) pairs sorted and merged in place, at the row's CSC
  // offset; pass 2 packs the rows.
  std::vector<int64_t> cols(static_cast<std::size_t>(e)), first(static_cast<std::size_t>(e));
  std::vector<double> mult(static_cast<std::size_t>(e));
  std::vector<int64_t> distinct(static_cast<std::size_t>(n + 1), 0);
  std::visit(
      [&](auto indices) {
        for_ranges(pool, n, [&](int64_t lo, int64_t hi) {
          std::vector<std::pair<int64_t, int64_t>> row;
          for (int64_t v = lo; v < hi; ++v) {
            const int64_t begin = csc.indptr[v], end = csc.indptr[v + 1];
            row.clear();
            for (int64_t p = begin; p < end; ++p) row.emplace_back(static_cast<int64_t>(indices[p]), p);
            std::sort(row.begin(), row.end());
            int64_t out = begin - 1;
            for (std::size_t i = 0; i < row.size(); ++i) {
              if (i == 0 || row[i].first != row[i - 1].first) {
                ++out;
                cols[out] = row[i].first;
                first[out] = row[i].second;
                mult[out] = 0;
              }
              mult[out] += 1;
            }
            distinct[v + 1] = out - begin + 1;
          }
        });
      },
      csc.indices);
  m.a.rowptr.resize(static_cast<std::size_t>(n + 1));
  m.a.rowptr[0] = 0;
  for (int64_t v = 0; v < n; ++v) m.a.rowptr[v + 1] = m.a.rowptr[v] + distinct[v + 1];
  const int64_t nnz = m.a.rowptr[n];
  m.a.cols.resize(static_cast<std::size_t>(nnz));
  m.a.vals.resize(static_cast<std::size_t>(nnz));
  m.first_position.resize(static_cast<std::size_t>(nnz));
  for_ranges(pool, n, [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) {
      const int64_t from = csc.indptr[v], to = m.a.rowptr[v], count = distinct[v + 1];
      std::copy_n(cols.begin() + from, count, m.a.cols.begin() + to);
      std::copy_n(mult.begin() + from, count, m.a.vals.begin() + to);
      std::copy_n(first.begin() + from, count, m.first_position.begin() + to);
    }
  });
  if (algorithm != BulkAlgorithm::kLadies) return m;

  // (A + I) row-normalised by deg + 1, squared: row v gains the diagonal entry when A has none.
  CsrMatrix& sq = m.ladies_squares;
  sq.rowptr.resize(static_cast<std::size_t>(n + 1));
  sq.rowptr[0] = 0;
  for (int64_t v = 0; v < n; ++v) {
    const int64_t begin = m.a.rowptr[v], end = m.a.rowptr[v + 1];
    const bool has_diagonal = std::binary_search(m.a.cols.begin() + begin, m.a.cols.begin() + end, v);
    sq.rowptr[v + 1] = sq.rowptr[v] + (end - begin) + (has_diagonal ? 0 : 1);
  }
  sq.cols.resize(static_cast<std::size_t>(sq.rowptr[n]));
  sq.vals.resize(static_cast<std::size_t>(sq.rowptr[n]));
  for_ranges(pool, n, [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) {
      const double scale = 1.0 / static_cast<double>(csc.in_degree(v) + 1);
      int64_t out = sq.rowptr[v];
      bool diagonal_done = false;
      for (int64_t i = m.a.rowptr[v]; i < m.a.rowptr[v + 1]; ++i) {
        const int64_t u = m.a.cols[i];
        if (!diagonal_done && u >= v) {
          diagonal_done = true;
          if (u > v) {
            sq.cols[out] = v;
            sq.vals[out++] = on_grid_square(scale);
          }
        }
        sq.cols[out] = u;
        sq.vals[out++] = on_grid_square((m.a.vals[i] + (u == v ? 1.0 : 0.0)) * scale);
      }
      if (!diagonal_done) {
        sq.cols[out] = v;
        sq.vals[out++] = on_grid_square(scale);
      }
    }
  });
  return m;
}

}  // namespace graphtier::sample
