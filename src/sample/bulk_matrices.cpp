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

/// Builds A (and LADIES' squares) with one row per row r of `rows`: rows.node(r) (the id the
/// diagonal of A + I refers to), rows.offset(r) (where the row starts in rows' edge order, dense
/// from 0), rows.degree(r), rows.first(r) (the global CSC position of its first edge) and
/// rows.neighbour(p) (the neighbour at edge offset p). Columns are global ids below num_cols.
template <typename Rows>
BulkMatrices build_from_rows(const Rows& rows, int64_t n, int64_t e, int64_t num_cols, BulkAlgorithm algorithm,
                             ThreadPool* pool) {
  BulkMatrices m;
  m.num_nodes = num_cols;
  // Pass 1: each row's (neighbour, position) pairs sorted and merged in place, at the row's
  // offset; pass 2 packs the rows.
  std::vector<int64_t> cols(static_cast<std::size_t>(e)), first(static_cast<std::size_t>(e));
  std::vector<double> mult(static_cast<std::size_t>(e));
  std::vector<int64_t> distinct(static_cast<std::size_t>(n + 1), 0);
  for_ranges(pool, n, [&](int64_t lo, int64_t hi) {
    std::vector<std::pair<int64_t, int64_t>> row;
    for (int64_t v = lo; v < hi; ++v) {
      const int64_t begin = rows.offset(v), end = begin + rows.degree(v);
      const int64_t to_global = rows.first(v) - begin;
      row.clear();
      for (int64_t p = begin; p < end; ++p) row.emplace_back(rows.neighbour(p), p);
      std::sort(row.begin(), row.end());
      int64_t out = begin - 1;
      for (std::size_t i = 0; i < row.size(); ++i) {
        if (i == 0 || row[i].first != row[i - 1].first) {
          ++out;
          cols[out] = row[i].first;
          first[out] = row[i].second + to_global;
          mult[out] = 0;
        }
        mult[out] += 1;
      }
      distinct[v + 1] = out - begin + 1;
    }
  });
  m.a.rowptr.resize(static_cast<std::size_t>(n + 1));
  m.a.rowptr[0] = 0;
  for (int64_t v = 0; v < n; ++v) m.a.rowptr[v + 1] = m.a.rowptr[v] + distinct[v + 1];
  const int64_t nnz = m.a.rowptr[n];
  m.a.cols.resize(static_cast<std::size_t>(nnz));
  m.a.vals.resize(static_cast<std::size_t>(nnz));
  m.first_position.resize(static_cast<std::size_t>(nnz));
  for_ranges(pool, n, [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) {
      const int64_t from = rows.offset(v), to = m.a.rowptr[v], count = distinct[v + 1];
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
    const bool has_diagonal = std::binary_search(m.a.cols.begin() + begin, m.a.cols.begin() + end, rows.node(v));
    sq.rowptr[v + 1] = sq.rowptr[v] + (end - begin) + (has_diagonal ? 0 : 1);
  }
  sq.cols.resize(static_cast<std::size_t>(sq.rowptr[n]));
  sq.vals.resize(static_cast<std::size_t>(sq.rowptr[n]));
  for_ranges(pool, n, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t v = rows.node(r);
      const double scale = 1.0 / static_cast<double>(rows.degree(r) + 1);
      int64_t out = sq.rowptr[r];
      bool diagonal_done = false;
      for (int64_t i = m.a.rowptr[r]; i < m.a.rowptr[r + 1]; ++i) {
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
