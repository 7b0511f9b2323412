// CSC of the generated edge stream without ever holding an edge list: one pass counts the degree
// of every destination, then the shared builder (csc_builder.hpp) places the entries of each
// range of destinations that fits the memory budget in another pass over the same (recomputed)
// stream, and sorts and deduplicates the rows.
#include <algorithm>
#include <atomic>
#include <span>

#include "csc_builder.hpp"
#include "generate_stages.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"

namespace graphtier::graph::detail::generate {
namespace {

// About a millisecond of work per task: fine enough to balance two cores or sixteen.
constexpr int64_t kDrawGrain = int64_t{1} << 14;

// Edges drawn per batch of entries (up to two entries each).
constexpr int kDrawBatch = kCscEntryBatch / 2;

/// Calls consume(entries, count) with every stored entry of edges [0, num_draws), in batches of
/// at most kCscEntryBatch, and returns the number of self-loops skipped (in edges drawn, not
/// entries). Draws are pure arithmetic, so every call yields the same entries.
template <typename Consume>
int64_t for_each_entry(const EdgeModel& edges, int64_t num_draws, bool undirected, ThreadPool& pool,
                       Progress& progress, const Consume& consume) {
  std::atomic<int64_t> self_loops{0};
  pool.parallel_for(0, num_draws, kDrawGrain, [&](int64_t lo, int64_t hi) {
    int64_t loops = 0;
    CscEntry batch[kCscEntryBatch];
    for (int64_t k0 = lo; k0 < hi; k0 += kDrawBatch) {
      const int draws = static_cast<int>(std::min<int64_t>(kDrawBatch, hi - k0));
      int count = 0;
      for (int i = 0; i < draws; ++i) {
        const Edge e = edges.draw(static_cast<uint64_t>(k0 + i));
        if (e.src == e.dst) {
          ++loops;
          continue;
        }
        batch[count++] = CscEntry{e.dst, e.src};  // CSC: row = destination, entry = source (sender)
        if (undirected) batch[count++] = CscEntry{e.src, e.dst};
      }
      consume(batch, count);
    }
    self_loops.fetch_add(loops, std::memory_order_relaxed);
    progress.add(hi - lo);
  });
  progress.finish();
  return self_loops.load();
}

template <typename Count>
void build(DatasetWriter& writer, const EdgeModel& edges, const LabelModel& labels, int64_t n, int64_t num_draws,
           bool undirected, DType index_dtype, int64_t memory_budget, ThreadPool& pool, GenerateReport& report) {
  const int64_t entries_per_draw = undirected ? 2 : 1;
  LargeArray<Count> degree(n);

  int64_t self_loops = 0;
  {
    Progress progress("count degrees", num_draws, " edges");
    // Prefetching a batch's counters before its atomics overlaps their cache misses.
    self_loops = for_each_entry(edges, num_draws, undirected, pool, progress, [&](const CscEntry* batch, int count) {
      for (int i = 0; i < count; ++i) __builtin_prefetch(&degree[batch[i].row], 1);
      for (int i = 0; i < count; ++i) std::atomic_ref<Count>(degree[batch[i].row]).fetch_add(1, std::memory_order_relaxed);
    });
  }

  // The same-class fraction of the stored edges, measured on every row, or on a fixed pseudo-random
  // sixteenth of the rows when there are over 2^24 entries: a label costs an inverse permutation.
  const bool sample_all = num_draws * entries_per_draw <= (int64_t{1} << 24);
  const uint64_t sample_key = mix64(static_cast<uint64_t>(n));
  const auto sampled = [&](int64_t v) { return sample_all || (mix64(static_cast<uint64_t>(v) ^ sample_key) & 15) == 0; };
  std::atomic<int64_t> same_class{0}, sampled_entries{0};
  const auto measure_homophily = [&](int64_t row_lo, int64_t row_hi, const auto& row_of) {
    int64_t same = 0, total = 0;
    for (int64_t v = row_lo; v < row_hi; ++v) {
      const auto row = row_of(v);
      if (row.empty() || !sampled(v)) continue;
      const int32_t label = labels.label(v);
      for (const auto u : row) same += labels.label(static_cast<int64_t>(u)) == label;
      total += static_cast<int64_t>(row.size());
    }
    same_class.fetch_add(same, std::memory_order_relaxed);
    sampled_entries.fetch_add(total, std::memory_order_relaxed);
  };
  const auto scan = [&](Progress& progress, const auto& place) {
    for_each_entry(edges, num_draws, undirected, pool, progress, place);
  };
  build_csc(writer, degree.span(), index_dtype, memory_budget, CscProgress{num_draws, " edges"}, pool, scan,
            measure_homophily, report);

  report.self_loops_removed = self_loops * entries_per_draw;
  report.measured_homophily =
      sampled_entries.load() > 0 ? static_cast<double>(same_class.load()) / static_cast<double>(sampled_entries.load()) : 0.0;
}

/// Calls consume(entries, count) with every entry of the typed relations' edges, as for_each_entry:
/// relation after relation, the rows global ids and the neighbours typed keys. Returns the
/// entries skipped as self-loops.
template <typename Consume>
int64_t for_each_typed_entry(std::span<const TypedRelation> relations, ThreadPool& pool, Progress& progress,
                             const Consume& consume) {
  std::atomic<int64_t> self_loops{0};
  for (const TypedRelation& r : relations) {
    pool.parallel_for(0, r.num_draws, kDrawGrain, [&](int64_t lo, int64_t hi) {
      int64_t loops = 0;
      CscEntry batch[kCscEntryBatch];
      for (int64_t k0 = lo; k0 < hi; k0 += kDrawBatch) {
        const int draws = static_cast<int>(std::min<int64_t>(kDrawBatch, hi - k0));
        int count = 0;
        for (int i = 0; i < draws; ++i) {
          const Edge e = r.draw(static_cast<uint64_t>(k0 + i));
          const int64_t src = r.src_offset + e.src, dst = r.dst_offset + e.dst;
          if (src == dst) {
            loops += r.reverse >= 0 ? 2 : 1;
            continue;
          }
          batch[count++] = CscEntry{dst, typed_key(r.relation, src)};
          if (r.reverse >= 0) batch[count++] = CscEntry{src, typed_key(r.reverse, dst)};
        }
        consume(batch, count);
      }
      self_loops.fetch_add(loops, std::memory_order_relaxed);
      progress.add(hi - lo);
    });
  }
  progress.finish();
  return self_loops.load();
}

template <typename Count>
void build_typed(DatasetWriter& writer, std::span<const TypedRelation> relations, int64_t n, int64_t total_draws,
                 DType index_dtype, int64_t memory_budget, ThreadPool& pool, GenerateReport& report) {
  LargeArray<Count> degree(n);
  int64_t self_loops = 0;
  {
    Progress progress("count degrees", total_draws, " edges");
    self_loops = for_each_typed_entry(relations, pool, progress, [&](const CscEntry* batch, int count) {
      for (int i = 0; i < count; ++i) __builtin_prefetch(&degree[batch[i].row], 1);
      for (int i = 0; i < count; ++i) std::atomic_ref<Count>(degree[batch[i].row]).fetch_add(1, std::memory_order_relaxed);
    });
  }
  const auto scan = [&](Progress& progress, const auto& place) { for_each_typed_entry(relations, pool, progress, place); };
  build_typed_csc(writer, degree.span(), index_dtype, memory_budget, CscProgress{total_draws, " edges"}, pool, scan,
                  report);
  report.self_loops_removed = self_loops;
}

}  // namespace

void write_typed_topology(DatasetWriter& writer, std::span<const TypedRelation> relations, int64_t num_nodes,
                          DType index_dtype, int64_t memory_budget, ThreadPool& pool, GenerateReport& report) {
  int64_t draws = 0, entries = 0;
  for (const TypedRelation& r : relations) {
    draws += r.num_draws;
    entries += r.num_draws * (r.reverse >= 0 ? 2 : 1);
  }
  if (entries > int64_t{UINT32_MAX}) {
    build_typed<uint64_t>(writer, relations, num_nodes, draws, index_dtype, memory_budget, pool, report);
  } else {
    build_typed<uint32_t>(writer, relations, num_nodes, draws, index_dtype, memory_budget, pool, report);
  }
}

void write_topology(DatasetWriter& writer, const EdgeModel& edges, const LabelModel& labels, int64_t num_nodes,
                    int64_t num_draws, bool undirected, DType index_dtype, int64_t memory_budget, ThreadPool& pool,
                    GenerateReport& report) {
  // 32-bit counters whenever no row can reach 2^32 entries: half the memory of the only array
  // that must cover every node.
  const bool wide_counts = num_draws * (undirected ? 2 : 1) > int64_t{UINT32_MAX};
  if (wide_counts) {
    build<uint64_t>(writer, edges, labels, num_nodes, num_draws, undirected, index_dtype, memory_budget, pool, report);
  } else {
    build<uint32_t>(writer, edges, labels, num_nodes, num_draws, undirected, index_dtype, memory_budget, pool, report);
  }
}

}  // namespace graphtier::graph::detail::generate
