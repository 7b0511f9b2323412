// CSC of the generated edge stream without ever holding an edge list: one pass counts the degree
// of every destination, then for each range of destinations that fits the memory budget another
// pass over the same (recomputed) stream drops every entry into its row. Rows are then sorted and
// deduplicated, which also makes the result independent of the order threads placed entries in.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "generate_stages.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"

namespace graphtier::graph::detail::generate {
namespace {

// About a millisecond of work per task: fine enough to balance two cores or sixteen.
constexpr int64_t kDrawGrain = int64_t{1} << 14;
constexpr int64_t kRowGrain = int64_t{1} << 14;

/// A zero-filled array in its own mapping, backed by transparent huge pages where the kernel
/// allows. Both passes touch these arrays at random, so with 4 KiB pages nearly every access would
/// also miss the TLB.
template <typename T>
class LargeArray {
 public:
  explicit LargeArray(int64_t size) : size_(static_cast<std::size_t>(size)) {
    bytes_ = std::max<std::size_t>(size_ * sizeof(T), 1);
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      GRAPHTIER_THROW_ERRNO("cannot allocate ", format_bytes(static_cast<double>(bytes_)), " for the CSC: ",
                            std::strerror(errno));
    }
    ::madvise(p, bytes_, MADV_HUGEPAGE);  // a hint: without THP this is ordinary memory
    data_ = static_cast<T*>(p);
  }
  ~LargeArray() { ::munmap(data_, bytes_); }
  LargeArray(const LargeArray&) = delete;
  LargeArray& operator=(const LargeArray&) = delete;

  T* data() { return data_; }
  T& operator[](int64_t i) { return data_[i]; }
  const T& operator[](int64_t i) const { return data_[i]; }
  int64_t size() const { return static_cast<int64_t>(size_); }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t bytes_ = 0;
};

/// One stored CSC entry: `neighbour` goes into the row of `row`.
struct Entry {
  int64_t row;
  int64_t neighbour;
};

// Entries handed to the consumer at a time (up to two per draw).
constexpr int kDrawBatch = 64;
constexpr int kEntryBatch = 2 * kDrawBatch;

/// Calls consume(entries, count) with every stored entry of edges [0, num_draws), in batches, and
/// returns the number of self-loops skipped (in edges drawn, not entries).
///
/// NOTE: draws are pure arithmetic while consuming an entry is a cache miss into an array much
/// larger than the caches, behind an atomic that orders memory. Batching lets the consumer
/// prefetch all of a batch's lines before its atomics, so the misses overlap instead of being
/// met one at a time; this made both passes about 1.5x faster.
template <typename Consume>
int64_t for_each_entry(const EdgeModel& edges, int64_t num_draws, bool undirected, ThreadPool& pool,
                       Progress& progress, const Consume& consume) {
  std::atomic<int64_t> self_loops{0};
  pool.parallel_for(0, num_draws, kDrawGrain, [&](int64_t lo, int64_t hi) {
    int64_t loops = 0;
    Entry batch[kEntryBatch];
    for (int64_t k0 = lo; k0 < hi; k0 += kDrawBatch) {
      const int draws = static_cast<int>(std::min<int64_t>(kDrawBatch, hi - k0));
      int count = 0;
      for (int i = 0; i < draws; ++i) {
        const Edge e = edges.draw(static_cast<uint64_t>(k0 + i));
        if (e.src == e.dst) {
          ++loops;
          continue;
        }
        batch[count++] = Entry{e.dst, e.src};  // CSC: row = destination, entry = source (sender)
        if (undirected) batch[count++] = Entry{e.src, e.dst};
      }
      consume(batch, count);
    }
    self_loops.fetch_add(loops, std::memory_order_relaxed);
    progress.add(hi - lo);
  });
  progress.finish();
  return self_loops.load();
}

/// Splits [0, n) into ranges of destination rows whose CSC (entries plus one offset per row) fits
/// `budget` bytes; a single row larger than the budget gets a range of its own.
template <typename Count>
std::vector<int64_t> partition_rows(const LargeArray<Count>& degree, int64_t index_bytes, int64_t budget) {
  std::vector<int64_t> bounds{0};
  const int64_t n = degree.size();
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

template <typename Index, typename Count>
TopologyResult build(DatasetWriter& writer, const EdgeModel& edges, const LabelModel& labels, int64_t n,
                     int64_t num_draws, bool undirected, int64_t memory_budget, ThreadPool& pool) {
  TopologyResult result;
  const int64_t entries_per_draw = undirected ? 2 : 1;
  LargeArray<Count> degree(n);
  const auto count_of = [&](int64_t v) { return std::atomic_ref<Count>(degree[v]); };

  int64_t self_loops = 0;
  {
    Progress progress("count degrees", num_draws, " edges");
    self_loops = for_each_entry(edges, num_draws, undirected, pool, progress, [&](const Entry* batch, int count) {
      for (int i = 0; i < count; ++i) __builtin_prefetch(&degree[batch[i].row], 1);
      for (int i = 0; i < count; ++i) count_of(batch[i].row).fetch_add(1, std::memory_order_relaxed);
    });
  }
  result.self_loops_removed = self_loops * entries_per_draw;

  int64_t range_budget = 0;
  if (memory_budget > 0) {
    const int64_t counters = n * static_cast<int64_t>(sizeof(Count));
    GRAPHTIER_EXPECTS(memory_budget > counters, InvalidArgument, "memory budget of ", format_bytes(memory_budget),
                      " is too small: the degree counters of ", n, " nodes alone take ", format_bytes(counters));
    range_budget = memory_budget - counters;
  }
  const std::vector<int64_t> bounds = partition_rows(degree, sizeof(Index), range_budget);
  result.passes = static_cast<int>(bounds.size() - 1);
  if (result.passes > 1) {
    log_info("building the CSC in ", result.passes, " ranges of destinations to stay within ",
             format_bytes(memory_budget), " (one pass over the edges each)");
  }

  // The same-class fraction of the stored edges, measured on every row, or on a fixed pseudo-random
  // sixteenth of the rows when there are over 2^24 entries: a label costs an inverse permutation.
  const bool sample_all = num_draws * entries_per_draw <= (int64_t{1} << 24);
  const uint64_t sample_key = mix64(static_cast<uint64_t>(n));
  const auto sampled = [&](int64_t v) { return sample_all || (mix64(static_cast<uint64_t>(v) ^ sample_key) & 15) == 0; };
  std::atomic<int64_t> same_class{0}, sampled_entries{0};

  OutputFile& indices_out = writer.open_array("indices");
  for (int part = 0; part < result.passes; ++part) {
    const int64_t lo = bounds[part], hi = bounds[part + 1];
    // Offsets of each row's entries before deduplication; the counters become fill cursors.
    LargeArray<int64_t> offsets(hi - lo + 1);
    for (int64_t v = lo; v < hi; ++v) offsets[v - lo + 1] = offsets[v - lo] + static_cast<int64_t>(degree[v]);
    std::fill(degree.data() + lo, degree.data() + hi, Count{0});
    const int64_t entries = offsets[hi - lo];
    LargeArray<Index> indices(entries);

    const std::string label =
        result.passes > 1 ? ::graphtier::detail::concat("place edges (range ", part + 1, "/", result.passes, ")") : "place edges";
    Progress progress(label, num_draws, " edges");
    for_each_entry(edges, num_draws, undirected, pool, progress, [&](const Entry* batch, int count) {
      Entry mine[kEntryBatch];  // the batch's entries in this range of rows, `neighbour` -> position
      int n_mine = 0;
      for (int i = 0; i < count; ++i) {
        if (batch[i].row < lo || batch[i].row >= hi) continue;
        __builtin_prefetch(&degree[batch[i].row], 1);
        __builtin_prefetch(&offsets[batch[i].row - lo], 0);
        mine[n_mine++] = batch[i];
      }
      int64_t position[kEntryBatch];
      for (int i = 0; i < n_mine; ++i) {
        const int64_t row = mine[i].row;
        position[i] = offsets[row - lo] + static_cast<int64_t>(count_of(row).fetch_add(1, std::memory_order_relaxed));
        __builtin_prefetch(&indices[position[i]], 1);
      }
      for (int i = 0; i < n_mine; ++i) indices[position[i]] = static_cast<Index>(mine[i].neighbour);
    });

    pool.parallel_for(lo, hi, kRowGrain, [&](int64_t row_lo, int64_t row_hi) {
      int64_t same = 0, total = 0;
      for (int64_t v = row_lo; v < row_hi; ++v) {
        Index* begin = indices.data() + offsets[v - lo];
        Index* end = indices.data() + offsets[v - lo + 1];
        std::sort(begin, end);
        end = std::unique(begin, end);
        degree[v] = static_cast<Count>(end - begin);
        if (begin != end && sampled(v)) {
          const int32_t label = labels.label(v);
          for (const Index* u = begin; u != end; ++u) same += labels.label(static_cast<int64_t>(*u)) == label;
          total += end - begin;
        }
      }
      same_class.fetch_add(same, std::memory_order_relaxed);
      sampled_entries.fetch_add(total, std::memory_order_relaxed);
    });

    // Rows only shrink, so compacting left in row order never overwrites an unread entry.
    int64_t kept = 0;
    for (int64_t v = lo; v < hi; ++v) {
      const int64_t d = static_cast<int64_t>(degree[v]);
      if (kept != offsets[v - lo]) std::memmove(indices.data() + kept, indices.data() + offsets[v - lo], d * sizeof(Index));
      kept += d;
    }
    indices_out.write(indices.data(), static_cast<std::size_t>(kept) * sizeof(Index));
    result.num_edges += kept;
  }

  OutputFile& indptr_out = writer.open_array("indptr");
  constexpr int64_t kBatch = int64_t{1} << 16;
  std::vector<int64_t> batch;
  batch.reserve(kBatch);
  int64_t offset = 0;
  batch.push_back(0);
  for (int64_t v = 0; v < n; ++v) {
    const int64_t d = static_cast<int64_t>(degree[v]);
    result.isolated_nodes += d == 0;
    result.max_degree = std::max(result.max_degree, d);
    offset += d;
    batch.push_back(offset);
    if (static_cast<int64_t>(batch.size()) == kBatch) {
      indptr_out.write_span(std::span<const int64_t>(batch));
      batch.clear();
    }
  }
  indptr_out.write_span(std::span<const int64_t>(batch));
  result.measured_homophily =
      sampled_entries.load() > 0 ? static_cast<double>(same_class.load()) / static_cast<double>(sampled_entries.load()) : 0.0;
  result.duplicates_removed = num_draws * entries_per_draw - result.self_loops_removed - result.num_edges;
  return result;
}

}  // namespace

TopologyResult write_topology(DatasetWriter& writer, const EdgeModel& edges, const LabelModel& labels, int64_t num_nodes,
                              int64_t num_draws, bool undirected, DType index_dtype, int64_t memory_budget,
                              ThreadPool& pool) {
  // 32-bit counters whenever no row can reach 2^32 entries: half the memory of the only array
  // that must cover every node.
  const bool wide_counts = num_draws * (undirected ? 2 : 1) > int64_t{UINT32_MAX};
  if (index_dtype == DType::kInt32) {
    return wide_counts ? build<int32_t, uint64_t>(writer, edges, labels, num_nodes, num_draws, undirected, memory_budget, pool)
                       : build<int32_t, uint32_t>(writer, edges, labels, num_nodes, num_draws, undirected, memory_budget, pool);
  }
  return wide_counts ? build<int64_t, uint64_t>(writer, edges, labels, num_nodes, num_draws, undirected, memory_budget, pool)
                     : build<int64_t, uint32_t>(writer, edges, labels, num_nodes, num_draws, undirected, memory_budget, pool);
}

}  // namespace graphtier::graph::detail::generate
