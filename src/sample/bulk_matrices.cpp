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

/// Builds A (LADIES: A + I) and LADIES' squares with one row per row r of `rows`: rows.node(r) (the
/// id the diagonal of A + I refers to), rows.offset(r) (where the row starts in rows' edge order,
/// dense from 0), rows.degree(r), rows.first(r) (the global CSC position of its first edge) and
/// rows.neighbour(p) (the neighbour at edge offset p). Columns are global ids below num_cols.
template <typename Rows>
BulkMatrices build_from_rows(const Rows& rows, int64_t n, int64_t e, int64_t num_cols, BulkAlgorithm algorithm,
                             ThreadPool* pool) {
  const bool ladies = algorithm == BulkAlgorithm::kLadies;
  BulkMatrices m;
  m.num_nodes = num_cols;
  // Pass 1: each row's (neighbour, position) pairs sorted and merged in place, at the row's
  // offset (plus one slot per earlier row for LADIES' diagonal); pass 2 packs the rows.
  const int64_t slots = e + (ladies ? n : 0);
  const auto start = [&](int64_t v) { return rows.offset(v) + (ladies ? v : 0); };
  std::vector<int64_t> cols(static_cast<std::size_t>(slots)), first(static_cast<std::size_t>(slots));
  std::vector<double> mult(static_cast<std::size_t>(slots));
  std::vector<int64_t> distinct(static_cast<std::size_t>(n + 1), 0);
  for_ranges(pool, n, [&](int64_t lo, int64_t hi) {
    std::vector<std::pair<int64_t, int64_t>> row;
    for (int64_t v = lo; v < hi; ++v) {
      const int64_t begin = rows.offset(v), end = begin + rows.degree(v);
      const int64_t to_global = rows.first(v) - begin;
      row.clear();
      for (int64_t p = begin; p < end; ++p) row.emplace_back(rows.neighbour(p), p);
      std::sort(row.begin(), row.end());
      const int64_t at = start(v);
      int64_t out = at - 1;
      for (std::size_t i = 0; i < row.size(); ++i) {
        if (i == 0 || row[i].first != row[i - 1].first) {
          ++out;
          cols[out] = row[i].first;
          first[out] = row[i].second + to_global;
          mult[out] = 0;
        }
        mult[out] += 1;
      }
      int64_t count = out - at + 1;
      if (ladies) {
        // The self-loop of A + I: one more on a stored self-loop, else a new entry in column order.
        const int64_t self = rows.node(v);
        const auto c0 = cols.begin() + at, c1 = c0 + count;
        const auto pos = std::lower_bound(c0, c1, self);
        const int64_t k = at + (pos - c0);
        if (pos != c1 && *pos == self) {
          mult[k] += 1;
        } else {
          std::copy_backward(c0 + (k - at), c1, c1 + 1);
          std::copy_backward(mult.begin() + k, mult.begin() + at + count, mult.begin() + at + count + 1);
          cols[k] = self;
          mult[k] = 1;
          ++count;
        }
      }
      distinct[v + 1] = count;
    }
  });
  m.a.rowptr.resize(static_cast<std::size_t>(n + 1));
  m.a.rowptr[0] = 0;
  for (int64_t v = 0; v < n; ++v) m.a.rowptr[v + 1] = m.a.rowptr[v] + distinct[v + 1];
  const int64_t nnz = m.a.rowptr[n];
  m.a.cols.resize(static_cast<std::size_t>(nnz));
  m.a.vals.resize(static_cast<std::size_t>(nnz));
  if (!ladies) m.first_position.resize(static_cast<std::size_t>(nnz));
  for_ranges(pool, n, [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) {
      const int64_t from = start(v), to = m.a.rowptr[v], count = distinct[v + 1];
      std::copy_n(cols.begin() + from, count, m.a.cols.begin() + to);
      std::copy_n(mult.begin() + from, count, m.a.vals.begin() + to);
      if (!ladies) std::copy_n(first.begin() + from, count, m.first_position.begin() + to);
    }
  });
  if (!ladies) return m;

  // (A + I) row-normalised by deg + 1, squared: A + I's pattern, so only the values are new.
  CsrMatrix& sq = m.ladies_squares;
  sq.rowptr = m.a.rowptr;
  sq.cols = m.a.cols;
  sq.vals.resize(static_cast<std::size_t>(nnz));
  for_ranges(pool, n, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const double scale = 1.0 / static_cast<double>(rows.degree(r) + 1);
      for (int64_t i = m.a.rowptr[r]; i < m.a.rowptr[r + 1]; ++i) sq.vals[i] = on_grid_square(m.a.vals[i] * scale);
    }
  });
  return m;
}

/// The whole graph: row v is node v, at its CSC offset.
template <typename Index>
struct GraphRows {
  std::span<const int64_t> indptr;
  std::span<const Index> indices;
  int64_t node(int64_t v) const { return v; }
  int64_t offset(int64_t v) const { return indptr[v]; }
  int64_t degree(int64_t v) const { return indptr[v + 1] - indptr[v]; }
  int64_t first(int64_t v) const { return indptr[v]; }
  int64_t neighbour(int64_t p) const { return static_cast<int64_t>(indices[p]); }
};

/// Fetched rows: row k is rows.nodes[k].
struct FetchedMatrixRows {
  const NeighborRows& rows;
  int64_t node(int64_t k) const { return rows.nodes[k]; }
  int64_t offset(int64_t k) const { return rows.indptr[k]; }
  int64_t degree(int64_t k) const { return rows.indptr[k + 1] - rows.indptr[k]; }
  int64_t first(int64_t k) const { return rows.first_edge[k]; }
  int64_t neighbour(int64_t p) const { return rows.indices[p]; }
};

}  // namespace

BulkMatrices build_bulk_matrices(const SampleGraph& graph, BulkAlgorithm algorithm, ThreadPool* pool) {
  const graph::CscView& csc = graph.csc;
  return std::visit(
      [&](auto indices) {
        using Index = typename decltype(indices)::element_type;
        const GraphRows<std::remove_const_t<Index>> rows{csc.indptr, indices};
        return build_from_rows(rows, csc.num_nodes(), csc.num_edges(), csc.num_nodes(), algorithm, pool);
      },
      csc.indices);
}

BulkMatrices build_bulk_matrices(const NeighborRows& rows, int64_t num_cols, BulkAlgorithm algorithm,
                                 ThreadPool* pool) {
  return build_from_rows(FetchedMatrixRows{rows}, static_cast<int64_t>(rows.nodes.size()), rows.indptr.back(),
                         num_cols, algorithm, pool);
}

}  // namespace graphtier::sample
