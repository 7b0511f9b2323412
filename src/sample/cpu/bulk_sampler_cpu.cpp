#include "cpu/bulk_sampler_cpu.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "graphtier/core/error.hpp"
#include "bulk_row_ops.hpp"

namespace graphtier::sample::cpu {
namespace {

void run_parts(ThreadPool* pool, int64_t n, int64_t min_parallel, const std::function<void(int64_t, int64_t)>& fn) {
  if (pool == nullptr || pool->size() == 1 || n < min_parallel) {
    fn(0, n);
  } else {
    // Small grains balance the skewed cost of power-law rows; results do not depend on them.
    pool->parallel_for(0, n, std::max<int64_t>(1, n / (8 * pool->size())), fn);
  }
}

/// The batch owning stacked row r.
int64_t batch_of(const bulk::StackedFrontier& f, int64_t r) {
  return static_cast<int64_t>(std::upper_bound(f.offsets.begin(), f.offsets.end(), r) - f.offsets.begin()) - 1;
}

/// Scratch of one draw row, grown on demand.
struct RowScratch {
  std::vector<double> work, prefix;
  std::vector<int64_t> picks;
  void fit(int64_t n, int64_t count) {
    if (static_cast<int64_t>(work.size()) < n) {
      work.resize(static_cast<std::size_t>(n));
      prefix.resize(static_cast<std::size_t>(n));
    }
    if (static_cast<int64_t>(picks.size()) < count) picks.resize(static_cast<std::size_t>(count));
  }
};

/// The entry holding the floor-th unit of `row` that lies outside the removed entries (their
/// unit intervals [starts[i], starts[i] + weights[i]), ascending), or row.n if there are fewer
/// units: stepping over each removed interval at or before the position keeps it on the
/// floor-th remaining unit. This is the first entry whose running sum of remaining weights
/// exceeds `floor`, sample_row's upper_bound on the zeroed prefix sums.
int64_t entry_of_unit(const UnitRow& row, const int64_t* starts, const int64_t* weights, int64_t num_removed,
                      int64_t floor) {
  int64_t unit = floor;
  for (int64_t i = 0; i < num_removed && starts[i] <= unit; ++i) unit += weights[i];
  if (unit >= row.units) return row.n;
  return row.unit_entry == nullptr ? unit : row.unit_entry[unit];
}

}  // namespace

void add_row_units(BulkMatrices& m, std::span<const int64_t> csc_indptr, ThreadPool* pool) {
  const int64_t rows = m.a.rows();
  m.a_cumulative.resize(static_cast<std::size_t>(m.a.nnz()));
  m.a_unit_entry.resize(static_cast<std::size_t>(csc_indptr.back()));
  m.a_unit_rowptr = csc_indptr;
  run_parts(pool, rows, 4096, [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) {
      const int64_t begin = m.a.rowptr[v];
      GRAPHTIER_EXPECTS(m.a.rowptr[v + 1] - begin <= INT32_MAX, InvalidArgument, "bulk sampling: node ", v, " has ",
                        m.a.rowptr[v + 1] - begin, " distinct in-neighbours; at most 2^31 - 1 are supported");
      int32_t* units = m.a_unit_entry.data() + csc_indptr[v];
      int64_t sum = 0;
      for (int64_t i = begin; i < m.a.rowptr[v + 1]; ++i) {
        const auto w = static_cast<int64_t>(m.a.vals[i]);
        std::fill_n(units + sum, w, static_cast<int32_t>(i - begin));
        m.a_cumulative[i] = sum += w;
      }
    }
  });
}

UnitRow unit_row(const BulkMatrices& m, int64_t v) {
  const int64_t begin = m.a.rowptr[v], n = m.a.rowptr[v + 1] - begin;
  const int64_t units = m.a_unit_rowptr[v + 1] - m.a_unit_rowptr[v];
  return UnitRow{m.a_cumulative.data() + begin, units == n ? nullptr : m.a_unit_entry.data() + m.a_unit_rowptr[v], n,
                 units};
}

int64_t sample_row_units(const UnitRow& row, int64_t budget, bool replace, uint64_t seed, uint64_t layer_stream,
                         int64_t key, std::vector<int64_t>& scratch, int64_t* out) {
  const int64_t n = row.n;
  const int64_t count = bulk::sampled_count(n, budget, replace);
  if (count == 0) return 0;
  if (budget < 0 || (!replace && budget >= n)) {
    for (int64_t k = 0; k < n; ++k) out[k] = k;
    return n;
  }
  const auto draw_floor = [&](uint64_t stream, int64_t j, double total) {
    // total < 2^53 and the unit double < 1: the product is a non-negative double below 2^53.
    return static_cast<int64_t>(bulk::mul_rn(u64_to_unit_double(node_bits(seed, stream, key, j)), total));
  };
  const int64_t units = row.units;
  if (replace) {
    for (int64_t j = 0; j < budget; ++j) {
      const int64_t k = entry_of_unit(row, nullptr, nullptr, 0, draw_floor(layer_stream, j, static_cast<double>(units)));
      out[j] = k < n ? k : n - 1;
    }
    return budget;
  }
  // out[0, chosen): the entries of earlier rounds, ascending, with their unit intervals in
  // starts/weights; fresh: this round's draws, repeats included until the round ends.
  scratch.resize(static_cast<std::size_t>(4 * budget));
  int64_t* starts = scratch.data();
  int64_t* weights = starts + budget;
  int64_t* fresh = weights + budget;
  int64_t* merged = fresh + budget;
  int64_t chosen = 0, removed_units = 0;
  for (int64_t round = 0; chosen < budget; ++round) {
    const auto total = static_cast<double>(units - removed_units);
    int64_t last_positive = n - 1;
    for (int64_t i = chosen - 1; i >= 0 && out[i] == last_positive; --i) --last_positive;
    const uint64_t rs = bulk::round_stream_of(layer_stream, round);
    const int64_t need = budget - chosen;
    for (int64_t j = 0; j < need; ++j) {
      const int64_t k = entry_of_unit(row, starts, weights, chosen, draw_floor(rs, j, total));
      fresh[j] = k < n ? k : last_positive;
    }
    std::sort(fresh, fresh + need);
    const int64_t distinct = std::unique(fresh, fresh + need) - fresh;
    std::merge(out, out + chosen, fresh, fresh + distinct, merged);
    chosen += distinct;
    std::copy_n(merged, chosen, out);
    if (chosen == budget) break;
    removed_units = 0;
    for (int64_t i = 0; i < chosen; ++i) {
      const int64_t k = out[i];
      starts[i] = row.unit_entry == nullptr ? k : k == 0 ? 0 : row.cumulative[k - 1];
      weights[i] = row.unit_entry == nullptr ? 1 : row.cumulative[k] - starts[i];
      removed_units += weights[i];
    }
  }
  return chosen;
}

CsrMatrix spgemm(const CsrMatrix& q, const CsrMatrix& m, int64_t num_cols, ThreadPool* pool) {
  const int64_t rows = q.rows();
  std::vector<std::vector<int64_t>> row_cols(static_cast<std::size_t>(rows));
  std::vector<std::vector<double>> row_vals(static_cast<std::size_t>(rows));
  run_parts(pool, rows, 2, [&](int64_t lo, int64_t hi) {
    // Every product is positive, so a zero accumulator marks an untouched column.
    std::vector<double> acc(static_cast<std::size_t>(num_cols), 0.0);
    std::vector<int64_t> touched;
    for (int64_t r = lo; r < hi; ++r) {
      touched.clear();
      for (int64_t i = q.rowptr[r]; i < q.rowptr[r + 1]; ++i) {
        const int64_t j = q.cols[i];
        const double qv = q.vals[i];
        for (int64_t t = m.rowptr[j]; t < m.rowptr[j + 1]; ++t) {
          const int64_t c = m.cols[t];
          if (acc[c] == 0) touched.push_back(c);
          acc[c] += qv * m.vals[t];
        }
      }
      std::sort(touched.begin(), touched.end());
      auto& cols = row_cols[r];
      auto& vals = row_vals[r];
      cols = touched;
      vals.resize(touched.size());
      for (std::size_t i = 0; i < touched.size(); ++i) {
        vals[i] = acc[touched[i]];
        acc[touched[i]] = 0;
      }
    }
  });
  CsrMatrix c;
  c.rowptr.assign(static_cast<std::size_t>(rows + 1), 0);
  for (int64_t r = 0; r < rows; ++r) c.rowptr[r + 1] = c.rowptr[r] + static_cast<int64_t>(row_cols[r].size());
  c.cols.reserve(static_cast<std::size_t>(c.rowptr[rows]));
  c.vals.reserve(static_cast<std::size_t>(c.rowptr[rows]));
  for (int64_t r = 0; r < rows; ++r) {
    c.cols.insert(c.cols.end(), row_cols[r].begin(), row_cols[r].end());
    c.vals.insert(c.vals.end(), row_vals[r].begin(), row_vals[r].end());
  }
  return c;
}

bulk::StackedDraws graphsage_layer(const BulkMatrices& m, const bulk::StackedFrontier& frontier, int64_t fanout,
                                   bool replace, uint64_t seed, bool edge_ids, ThreadPool* pool) {
  const int64_t rows = frontier.rows();
  bulk::StackedDraws d;
  d.indptr.assign(static_cast<std::size_t>(rows + 1), 0);
  run_parts(pool, rows, 4096, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t row = frontier.matrix_row(r);
      d.indptr[r + 1] = bulk::sampled_count(m.a.rowptr[row + 1] - m.a.rowptr[row], fanout, replace);
    }
  });
  std::partial_sum(d.indptr.begin(), d.indptr.end(), d.indptr.begin());
  d.nodes.resize(static_cast<std::size_t>(d.indptr[rows]));
  if (edge_ids) d.edge_ids.resize(d.nodes.size());
  run_parts(pool, rows, 256, [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> picks, scratch;
    int64_t b = batch_of(frontier, lo);
    for (int64_t r = lo; r < hi; ++r) {
      while (r >= frontier.offsets[b + 1]) ++b;
      const int64_t v = frontier.nodes[r], row = frontier.matrix_row(r);
      const int64_t begin = m.a.rowptr[row];
      const int64_t out = d.indptr[r], count = d.indptr[r + 1] - out;
      if (count == 0) continue;
      if (static_cast<int64_t>(picks.size()) < count) picks.resize(static_cast<std::size_t>(count));
      sample_row_units(unit_row(m, row), fanout, replace, seed, frontier.layer_streams[b], v, scratch, picks.data());
      for (int64_t i = 0; i < count; ++i) {
        d.nodes[out + i] = m.a.cols[begin + picks[i]];
        if (edge_ids) d.edge_ids[out + i] = m.first_position[begin + picks[i]];
      }
    }
  });
  return d;
}

bulk::StackedDraws ladies_layer(const BulkMatrices& m, const bulk::StackedFrontier& frontier, int64_t layer_size,
                                uint64_t seed, ThreadPool* pool) {
  const int64_t k = frontier.num_batches();
  CsrMatrix q;
  q.rowptr = frontier.offsets;
  q.cols = frontier.matrix_rows.empty() ? frontier.nodes : frontier.matrix_rows;
  q.vals.assign(frontier.nodes.size(), 1.0);
  const CsrMatrix p = spgemm(q, m.ladies_squares, m.num_nodes, pool);

  std::vector<bulk::StackedDraws> per_batch(static_cast<std::size_t>(k));
  run_parts(pool, k, 2, [&](int64_t lo, int64_t hi) {
    RowScratch s;
    std::vector<double> mult, prob;
    for (int64_t b = lo; b < hi; ++b) {
      const int64_t p0 = p.rowptr[b], n = p.rowptr[b + 1] - p0;
      const int64_t count = bulk::sampled_count(n, layer_size, false);
      s.fit(n, count);
      bulk::sample_row(p.vals.data() + p0, n, layer_size, false, seed, frontier.layer_streams[b], 0, s.work.data(),
                       s.prefix.data(), s.picks.data());
      // C_b: the batch's dst nodes and the sampled ones, sorted for the membership tests.
      std::vector<int64_t> kept(frontier.nodes.begin() + frontier.offsets[b], frontier.nodes.begin() + frontier.offsets[b + 1]);
      for (int64_t i = 0; i < count; ++i) kept.push_back(p.cols[p0 + s.picks[i]]);
      std::sort(kept.begin(), kept.end());
      kept.erase(std::unique(kept.begin(), kept.end()), kept.end());

      bulk::StackedDraws& d = per_batch[b];
      d.indptr.push_back(0);
      for (int64_t r = frontier.offsets[b]; r < frontier.offsets[b + 1]; ++r) {
        const int64_t row = frontier.matrix_row(r);
        mult.clear();
        prob.clear();
        for (int64_t i = m.a.rowptr[row]; i < m.a.rowptr[row + 1]; ++i) {
          const int64_t u = m.a.cols[i];
          if (!std::binary_search(kept.begin(), kept.end(), u)) continue;
          d.nodes.push_back(u);
          mult.push_back(m.a.vals[i]);
          prob.push_back(p.vals[p0 + bulk::find_sorted(p.cols.data() + p0, n, u)]);
        }
        const double sum = bulk::ladies_row_sum(mult.data(), prob.data(), static_cast<int64_t>(mult.size()));
        for (std::size_t i = 0; i < mult.size(); ++i) d.weights.push_back(bulk::ladies_weight(mult[i], prob[i], sum));
        d.indptr.push_back(static_cast<int64_t>(d.nodes.size()));
      }
    }
  });
  bulk::StackedDraws d;
  d.indptr.push_back(0);
  for (const auto& part : per_batch) {
    const int64_t base = d.indptr.back();
    for (std::size_t i = 1; i < part.indptr.size(); ++i) d.indptr.push_back(base + part.indptr[i]);
    d.nodes.insert(d.nodes.end(), part.nodes.begin(), part.nodes.end());
    d.weights.insert(d.weights.end(), part.weights.begin(), part.weights.end());
  }
  return d;
}

}  // namespace graphtier::sample::cpu
