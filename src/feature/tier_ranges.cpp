#include "graphtier/feature/tier_ranges.hpp"

#include <algorithm>
#include <queue>
#include <vector>

#include "graphtier/core/error.hpp"

namespace graphtier::feature {

TierRanges tier_ranges(const graph::Manifest& manifest, const Budget& gpu, const Budget& cpu) {
  TierRanges t;
  t.num_nodes = manifest.num_nodes;
  t.row_stride = manifest.features.row_stride;
  if (t.row_stride == 0) return t;
  const int64_t table = manifest.num_nodes * t.row_stride;
  t.gpu_end = std::min(manifest.num_nodes, gpu.resolve(table) / t.row_stride);
  t.cpu_end = std::min(manifest.num_nodes, t.gpu_end + cpu.resolve(table) / t.row_stride);
  return t;
}

namespace {

// Expected reads per byte of row `i` of `table`.
double reads_per_byte(const TypedTable& table, int64_t i) {
  const double reads = table.hotness.empty() ? 1.0 : table.hotness[static_cast<std::size_t>(i)];
  return reads / static_cast<double>(table.row_stride);
}

}  // namespace

std::vector<int64_t> typed_tier_rows(std::span<const TypedTable> tables, std::span<const int64_t> taken,
                                     int64_t budget_bytes) {
  const std::size_t num_types = tables.size();
  GRAPHTIER_EXPECTS(taken.size() == num_types, InvalidArgument, "typed_tier_rows: ", taken.size(),
                    " counts taken for ", num_types, " types");
  GRAPHTIER_EXPECTS(budget_bytes >= 0, InvalidArgument, "typed_tier_rows: a budget of ", budget_bytes, " bytes");
  for (std::size_t t = 0; t < num_types; ++t) {
    const TypedTable& table = tables[t];
    GRAPHTIER_EXPECTS(table.rows >= 0 && table.row_stride >= 0 && taken[t] >= 0 && taken[t] <= table.rows,
                      InvalidArgument, "typed_tier_rows: type ", t, " has ", table.rows, " rows of ", table.row_stride,
                      " bytes, ", taken[t], " taken");
    GRAPHTIER_EXPECTS(table.hotness.empty() || static_cast<int64_t>(table.hotness.size()) == table.rows,
                      InvalidArgument, "typed_tier_rows: type ", t, " has ", table.rows, " rows but ",
                      table.hotness.size(), " hotness scores");
  }
  std::vector<int64_t> out(num_types, 0);
  // The head of each type still open: its next row's reads per byte. Best first, ties to the lower type.
  struct Head {
    double ratio;
    std::size_t type;
  };
  const auto worse = [](const Head& a, const Head& b) {
    return a.ratio < b.ratio || (a.ratio == b.ratio && a.type > b.type);
  };
  std::priority_queue<Head, std::vector<Head>, decltype(worse)> heads(worse);
  for (std::size_t t = 0; t < num_types; ++t) {
    if (tables[t].row_stride > 0 && taken[t] < tables[t].rows) heads.push({reads_per_byte(tables[t], taken[t]), t});
  }
  int64_t left = budget_bytes;
  while (!heads.empty()) {
    const Head head = heads.top();
    heads.pop();
    const TypedTable& table = tables[head.type];
    const int64_t first = taken[head.type] + out[head.type];
    // The rows of this type that come before the next type's head: a run, found by binary search
    // (the ratio does not increase along the type), capped by what the budget still holds.
    int64_t end = table.rows;
    if (!heads.empty()) {
      const Head next = heads.top();
      const auto before_next = [&](int64_t i) {
        const double r = reads_per_byte(table, i);
        return r > next.ratio || (r == next.ratio && head.type < next.type);
      };
      int64_t lo = first + 1;  // row `first` goes before the next head: it is the best
      int64_t hi = table.rows;
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        before_next(mid) ? lo = mid + 1 : hi = mid;
      }
      end = lo;
    }
    const int64_t fits = left / table.row_stride;
    const int64_t rows = std::min(end - first, fits);
    out[head.type] += rows;
    left -= rows * table.row_stride;
    if (rows < end - first) continue;  // the next row does not fit: the type's share ends
    if (first + rows < table.rows) heads.push({reads_per_byte(table, first + rows), head.type});
  }
  return out;
}

std::vector<TierRanges> typed_tier_ranges(std::span<const TypedTable> tables, const Budget& gpu, const Budget& cpu) {
  int64_t total = 0;
  for (const TypedTable& table : tables) total += table.rows * table.row_stride;
  const std::vector<int64_t> none(tables.size(), 0);
  const std::vector<int64_t> on_gpu = typed_tier_rows(tables, none, gpu.resolve(total));
  const std::vector<int64_t> in_host = typed_tier_rows(tables, on_gpu, cpu.resolve(total));
  std::vector<TierRanges> out(tables.size());
  for (std::size_t t = 0; t < tables.size(); ++t) {
    out[t] = {on_gpu[t], on_gpu[t] + in_host[t], tables[t].rows, tables[t].row_stride};
  }
  return out;
}

}  // namespace graphtier::feature
