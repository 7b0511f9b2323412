// The out-of-core CSC builder of `convert` and `generate`: the edge list is never held, only the
// CSC being built. The caller's first pass over its edges counts the entries of every row; then
// each range of destination rows whose entries fit the memory budget takes one more pass, which
// drops every entry into its row. Rows are then sorted and deduplicated, which also makes the
// result independent of the order threads placed entries in (and so of the thread count).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph/topology_report.hpp"
#include "large_array.hpp"

namespace graphtier::graph::detail {

/// One stored CSC entry: `neighbour` goes into the row of `row` (row: the destination of an edge,
/// neighbour: its source, the sender of the message).
struct CscEntry {
  int64_t row;
  int64_t neighbour;
};

/// Typed CSCs (docs/format.md, Heterogeneous datasets) are built with the relation in the top
/// bits of each entry's neighbour: sorting a row by key then orders it by relation, then by
/// source, and deduplication removes repeats of (source, relation) only. Relations below
/// kMaxRelations = 2^8 fill bits 55..62, so keys stay non-negative and sort as unsigned.
inline constexpr int kTypedKeyShift = 55;
inline constexpr int64_t kTypedKeyMaxNodes = int64_t{1} << kTypedKeyShift;
inline int64_t typed_key(int relation, int64_t source) {
  return (static_cast<int64_t>(relation) << kTypedKeyShift) | source;
}

/// The most entries an edge stream hands to the builder at once.
inline constexpr int kCscEntryBatch = 128;

/// How a CSC pass over an edge stream is shown.
struct CscProgress {
  int64_t total = 0;  // in `unit`
  std::string unit;
};

namespace csc {

inline constexpr int64_t kRowGrain = int64_t{1} << 14;

/// Splits [0, n) into ranges of destination rows whose CSC (entries plus one offset per row) fits
/// `budget` bytes (0: one range); a single row larger than the budget gets a range of its own.
template <typename Count>
std::vector<int64_t> partition_rows(std::span<const Count> degree, int64_t index_bytes, int64_t budget) {
  std::vector<int64_t> bounds{0};
  const auto n = static_cast<int64_t>(degree.size());
  int64_t used = 0;
  for (int64_t v = 0; v < n; ++v) {
    const int64_t cost = static_cast<int64_t>(degree[v]) * index_bytes + static_cast<int64_t>(sizeof(int64_t));
    if (budget > 0 && used + cost > budget && v > bounds.back()) {
      bounds.push_back(v);
      used = 0;
    }
    used += cost;
  }
  bounds.push_back(n);
  return bounds;
}

/// Writes a finished range of rows' entries to indices.bin as they are.
template <typename Index>
class PlainSink {
 public:
  explicit PlainSink(DatasetWriter& writer) : indices_(writer.open_array("indices")) {}
  void write(const Index* entries, int64_t count) {
    indices_.write(entries, static_cast<std::size_t>(count) * sizeof(Index));
  }

 private:
  OutputFile& indices_;
};

/// Splits typed keys into indices.bin (of `Index`) and type_per_edge.bin, a block at a time.
template <typename Index>
class TypedSink {
 public:
  explicit TypedSink(DatasetWriter& writer)
      : indices_(writer.open_array("indices")), types_(writer.open_array("type_per_edge")) {}
  void write(const int64_t* keys, int64_t count) {
    constexpr int64_t kBlock = int64_t{1} << 16;
    for (int64_t begin = 0; begin < count; begin += kBlock) {
      const int64_t n = std::min(kBlock, count - begin);
      index_.resize(static_cast<std::size_t>(n));
      type_.resize(static_cast<std::size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const int64_t key = keys[begin + i];
        index_[static_cast<std::size_t>(i)] = static_cast<Index>(key & (kTypedKeyMaxNodes - 1));
        type_[static_cast<std::size_t>(i)] = static_cast<uint8_t>(key >> kTypedKeyShift);
      }
      indices_.write_span(std::span<const Index>(index_));
      types_.write_span(std::span<const uint8_t>(type_));
    }
  }

 private:
  OutputFile& indices_;
  OutputFile& types_;
  std::vector<Index> index_;
  std::vector<uint8_t> type_;
};

template <typename Index, typename Count, typename Sink, typename Scan, typename VisitRows>
void build(Sink& sink, DatasetWriter& writer, std::span<Count> degree, int64_t memory_budget, const CscProgress& shown,
           ThreadPool& pool, const Scan& scan, const VisitRows& visit_rows, TopologyReport& report) {
  const auto n = static_cast<int64_t>(degree.size());
  const auto count_of = [&](int64_t v) { return std::atomic_ref<Count>(degree[v]); };

  int64_t range_budget = 0;
  if (memory_budget > 0) {
    const int64_t counters = n * static_cast<int64_t>(sizeof(Count));
    GRAPHTIER_EXPECTS(memory_budget > counters, InvalidArgument, "memory budget of ",
                      format_bytes(static_cast<double>(memory_budget)), " is too small: the degree counters of ", n,
                      " nodes alone take ", format_bytes(static_cast<double>(counters)));
    range_budget = memory_budget - counters;
  }
  const std::vector<int64_t> bounds =
      partition_rows(std::span<const Count>(degree), static_cast<int64_t>(sizeof(Index)), range_budget);
  const int passes = static_cast<int>(bounds.size() - 1);
  if (passes > 1) {
    log_info("building the CSC in ", passes, " ranges of destination rows to stay within ",
             format_bytes(static_cast<double>(memory_budget)), " (one pass over the edges each)");
  }

  int64_t placed = 0, stored = 0;
  for (int part = 0; part < passes; ++part) {
    const int64_t lo = bounds[part], hi = bounds[part + 1];
    // Offsets of each row's entries before deduplication; the counters become fill cursors.
    LargeArray<int64_t> offsets(hi - lo + 1);
    for (int64_t v = lo; v < hi; ++v) offsets[v - lo + 1] = offsets[v - lo] + static_cast<int64_t>(degree[v]);
    std::fill(degree.begin() + lo, degree.begin() + hi, Count{0});
    const int64_t entries = offsets[hi - lo];
    placed += entries;
    LargeArray<Index> indices(entries);

    // NOTE: producing an entry is cheap while placing it is a cache miss into an array much larger
    // than the caches, behind an atomic that orders memory. Taking entries in batches lets the
    // placement prefetch all of a batch's lines before its atomics, so the misses overlap instead
    // of being met one at a time (about 1.5x faster on generated graphs).
    const auto place = [&](const CscEntry* batch, int count) {
      CscEntry mine[kCscEntryBatch];  // the batch's entries in this range of rows
      int n_mine = 0;
      for (int i = 0; i < count; ++i) {
        if (batch[i].row < lo || batch[i].row >= hi) continue;
        __builtin_prefetch(&degree[batch[i].row], 1);
        __builtin_prefetch(&offsets[batch[i].row - lo], 0);
        mine[n_mine++] = batch[i];
      }
      int64_t position[kCscEntryBatch];
      for (int i = 0; i < n_mine; ++i) {
        const int64_t row = mine[i].row;
        position[i] = offsets[row - lo] + static_cast<int64_t>(count_of(row).fetch_add(1, std::memory_order_relaxed));
        __builtin_prefetch(&indices[position[i]], 1);
      }
      for (int i = 0; i < n_mine; ++i) indices[position[i]] = static_cast<Index>(mine[i].neighbour);
    };
    const std::string label =
        passes > 1 ? ::graphtier::detail::concat("place edges (range ", part + 1, "/", passes, ")") : "place edges";
    Progress progress(label, shown.total, shown.unit);
    scan(progress, place);
    progress.finish();

    pool.parallel_for(lo, hi, kRowGrain, [&](int64_t row_lo, int64_t row_hi) {
      for (int64_t v = row_lo; v < row_hi; ++v) {
        Index* begin = indices.data() + offsets[v - lo];
        Index* end = indices.data() + offsets[v - lo + 1];
        std::sort(begin, end);
        degree[v] = static_cast<Count>(std::unique(begin, end) - begin);
      }
      visit_rows(row_lo, row_hi, [&](int64_t v) {
        return std::span<const Index>(indices.data() + offsets[v - lo], static_cast<std::size_t>(degree[v]));
      });
    });

    // Rows only shrink, so compacting left in row order never overwrites an unread entry.
    int64_t kept = 0;
    for (int64_t v = lo; v < hi; ++v) {
      const auto d = static_cast<int64_t>(degree[v]);
      if (kept != offsets[v - lo]) {
        std::memmove(indices.data() + kept, indices.data() + offsets[v - lo], static_cast<std::size_t>(d) * sizeof(Index));
      }
      kept += d;
    }
    sink.write(indices.data(), kept);
    stored += kept;
  }

  OutputFile& indptr_out = writer.open_array("indptr");
  constexpr std::size_t kBatch = std::size_t{1} << 16;
  std::vector<int64_t> batch{0};
  batch.reserve(kBatch);
  int64_t offset = 0, isolated = 0, max_degree = 0;
  for (int64_t v = 0; v < n; ++v) {
    const auto d = static_cast<int64_t>(degree[v]);
    isolated += d == 0;
    max_degree = std::max(max_degree, d);
    offset += d;
    batch.push_back(offset);
    if (batch.size() == kBatch) {
      indptr_out.write_span(std::span<const int64_t>(batch));
      batch.clear();
    }
  }
  indptr_out.write_span(std::span<const int64_t>(batch));

  report.num_edges = stored;
  report.duplicates_removed = placed - stored;
  report.isolated_nodes = isolated;
  report.max_in_degree = max_degree;
  report.topology_passes = passes;
}

}  // namespace csc

/// Writes indptr.bin and indices.bin of the CSC whose row v holds degree[v] entries before
/// deduplication (counted by the caller's first pass over the same entries). On return degree[v]
/// is the stored degree of v.
///
/// `scan(progress, place)` hands every entry of the stream, the same entries on every call, to
/// place(const CscEntry* entries, int count) with count <= kCscEntryBatch, from any number of
/// pool threads at once, and advances `progress` by `shown.unit`. `visit_rows(lo, hi, row)` sees
/// each finished range of rows [lo, hi) from the thread that sorted it: row(v) is the sorted,
/// deduplicated std::span<const Index> of v (int32_t or int64_t as `index_dtype`).
///
/// Memory: the caller's counters (sizeof(Count) a node) plus the CSC of one range of rows
/// within `memory_budget` bytes (0: no limit); a budget the counters alone exceed throws
/// InvalidArgument. Fills num_edges, duplicates_removed, isolated_nodes, max_in_degree and
/// topology_passes of `report`.
template <typename Count, typename Scan, typename VisitRows>
void build_csc(DatasetWriter& writer, std::span<Count> degree, DType index_dtype, int64_t memory_budget,
               const CscProgress& shown, ThreadPool& pool, const Scan& scan, const VisitRows& visit_rows,
               TopologyReport& report) {
  if (index_dtype == DType::kInt32) {
    csc::PlainSink<int32_t> sink(writer);
    csc::build<int32_t>(sink, writer, degree, memory_budget, shown, pool, scan, visit_rows, report);
  } else {
    csc::PlainSink<int64_t> sink(writer);
    csc::build<int64_t>(sink, writer, degree, memory_budget, shown, pool, scan, visit_rows, report);
  }
}

/// build_csc for a typed dataset: every entry's neighbour is typed_key(relation, source), with
/// sources below kTypedKeyMaxNodes. Rows come out sorted by relation, then source, without
/// repeated (source, relation) pairs; writes indices.bin (as `index_dtype`) and
/// type_per_edge.bin. Memory as build_csc, with 8 bytes an entry whatever the index dtype.
template <typename Count, typename Scan>
void build_typed_csc(DatasetWriter& writer, std::span<Count> degree, DType index_dtype, int64_t memory_budget,
                     const CscProgress& shown, ThreadPool& pool, const Scan& scan, TopologyReport& report) {
  GRAPHTIER_EXPECTS(static_cast<int64_t>(degree.size()) <= kTypedKeyMaxNodes, InvalidArgument,
                    "a typed dataset holds at most 2^", kTypedKeyShift, " nodes, got ", degree.size());
  const auto ignore = [](int64_t, int64_t, const auto&) {};
  if (index_dtype == DType::kInt32) {
    csc::TypedSink<int32_t> sink(writer);
    csc::build<int64_t>(sink, writer, degree, memory_budget, shown, pool, scan, ignore, report);
  } else {
    csc::TypedSink<int64_t> sink(writer);
    csc::build<int64_t>(sink, writer, degree, memory_budget, shown, pool, scan, ignore, report);
  }
}

/// A `visit_rows` for builds that need no look at the rows.
inline constexpr auto kIgnoreRows = [](int64_t, int64_t, const auto&) {};

}  // namespace graphtier::graph::detail
