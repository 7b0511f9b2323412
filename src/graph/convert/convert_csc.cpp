// CSC builder for converted edge inputs: count, prefix-sum, place, sort and deduplicate per row.
// Placement order between threads is arbitrary; sorting each row makes the output canonical.
#include "convert_csc.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <vector>

#include "graphtier/core/error.hpp"

namespace graphtier::graph::detail {

using ::graphtier::detail::concat;

namespace {

constexpr int64_t kEdgeGrain = int64_t{1} << 15;
constexpr int64_t kRowGrain = int64_t{1} << 14;

/// A slice of a chunk for one pool task; `first` is the index of its first edge in the block.
struct Task {
  const EdgeChunk* chunk;
  int64_t lo;
  int64_t hi;
  int64_t first;
};

std::vector<Task> make_tasks(std::span<const EdgeChunk> chunks) {
  std::vector<Task> tasks;
  int64_t first = 0;
  for (const auto& c : chunks) {
    for (int64_t lo = 0; lo < c.count; lo += kEdgeGrain) tasks.push_back({&c, lo, std::min(c.count, lo + kEdgeGrain), first + lo});
    first += c.count;
  }
  return tasks;
}

template <typename Fn>
void for_each_task(ThreadPool& pool, const std::vector<Task>& tasks, const Fn& fn) {
  pool.parallel_for(0, static_cast<int64_t>(tasks.size()), 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) fn(static_cast<std::size_t>(t), tasks[static_cast<std::size_t>(t)]);
  });
}

/// Checks every id of a block (>= 0, and < limit when known) and returns the largest id, or
/// throws for the first bad edge in input order.
int64_t check_block(ThreadPool& pool, const std::vector<Task>& tasks, int64_t limit, int64_t edges_before,
                    const std::string& name) {
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> task_max(tasks.size(), -1);
  std::vector<int64_t> task_bad(tasks.size(), kNone);
  for_each_task(pool, tasks, [&](std::size_t t, const Task& task) {
    int64_t max_id = -1;
    for (int64_t i = task.lo; i < task.hi; ++i) {
      const int64_t s = task.chunk->src[i], d = task.chunk->dst[i];
      if (s < 0 || d < 0 || (limit >= 0 && (s >= limit || d >= limit))) {
        task_bad[t] = task.first + (i - task.lo);
        return;
      }
      max_id = std::max(max_id, std::max(s, d));
    }
    task_max[t] = max_id;
  });
  int64_t max_id = -1;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    if (task_bad[t] != kNone) {
      const Task& task = tasks[t];
      const int64_t i = task.lo + (task_bad[t] - task.first);
      const int64_t s = task.chunk->src[i], d = task.chunk->dst[i];
      const int64_t bad = (s < 0 || (limit >= 0 && s >= limit)) ? s : d;
      const std::string range = limit >= 0 ? concat("out of range [0, ", limit, ")") : std::string("negative");
      throw FormatError(name, concat("edge ", edges_before + task_bad[t], " (", s, " -> ", d, "): node id ", bad, " is ",
                                     range));
    }
    max_id = std::max(max_id, task_max[t]);
  }
  return max_id;
}

template <typename Index>
CscResult build(DatasetWriter& writer, const EdgeSource& edges, const CscOptions& options, std::vector<int64_t> degree,
                CscResult result, ThreadPool& pool) {
  const int64_t n = result.num_nodes;
  const auto count_of = [&](int64_t v) { return std::atomic_ref<int64_t>(degree[static_cast<std::size_t>(v)]); };

  // Rows are built in ranges whose entries (before deduplication) fit the budget; one pass each.
  std::vector<int64_t> bounds{0};
  if (options.memory_budget > 0) {
    const int64_t counters = n * static_cast<int64_t>(sizeof(int64_t));
    GRAPHTIER_EXPECTS(options.memory_budget > counters, InvalidArgument, "memory budget of ",
                      format_bytes(static_cast<double>(options.memory_budget)), " is too small: the degree counters of ",
                      n, " nodes alone take ", format_bytes(static_cast<double>(counters)));
    const int64_t budget = options.memory_budget - counters;
    int64_t used = 0;
    for (int64_t v = 0; v < n; ++v) {
      const int64_t cost = degree[v] * static_cast<int64_t>(sizeof(Index)) + static_cast<int64_t>(sizeof(int64_t));
      if (used + cost > budget && v > bounds.back()) {
        bounds.push_back(v);
        used = 0;
      }
      used += cost;
    }
  }
  bounds.push_back(n);
  result.passes = static_cast<int>(bounds.size() - 1);
  if (result.passes > 1) {
    log_info("building the CSC in ", result.passes, " ranges of rows to stay within ",
             format_bytes(static_cast<double>(options.memory_budget)), " (one pass over the edges each)");
  }

  OutputFile& indices_out = writer.open_array("indices");
  int64_t placed_total = 0;
  for (int part = 0; part < result.passes; ++part) {
    const int64_t lo = bounds[part], hi = bounds[part + 1];
    std::vector<int64_t> offsets(static_cast<std::size_t>(hi - lo + 1), 0);
    for (int64_t v = lo; v < hi; ++v) offsets[v - lo + 1] = offsets[v - lo] + degree[v];
    std::fill(degree.begin() + lo, degree.begin() + hi, 0);  // now fill cursors
    const int64_t entries = offsets.back();
    placed_total += entries;
    auto indices = std::make_unique_for_overwrite<Index[]>(static_cast<std::size_t>(std::max<int64_t>(entries, 1)));

    const auto place = [&](int64_t row, int64_t neighbour) {
      if (row < lo || row >= hi) return;
      const int64_t slot = count_of(row).fetch_add(1, std::memory_order_relaxed);
      indices[offsets[row - lo] + slot] = static_cast<Index>(neighbour);
    };
    const std::string label = result.passes > 1 ? concat("place edges (range ", part + 1, "/", result.passes, ")")
                                                : std::string("place edges");
    Progress progress(label, edges.progress_total(), edges.progress_unit());
    edges.scan(pool, progress, [&](std::span<const EdgeChunk> chunks) {
      for_each_task(pool, make_tasks(chunks), [&](std::size_t, const Task& task) {
        const EdgeChunk& c = *task.chunk;
        for (int64_t i = task.lo; i < task.hi; ++i) {
          const int64_t s = c.src[i], d = c.dst[i];
          if (s == d) {
            if (options.keep_self_loops) place(d, s);
            continue;
          }
          place(d, s);  // CSC: the row of the destination lists the message source
          if (options.symmetrize) place(s, d);
        }
      });
    });
    progress.finish();

    pool.parallel_for(lo, hi, kRowGrain, [&](int64_t row_lo, int64_t row_hi) {
      for (int64_t v = row_lo; v < row_hi; ++v) {
        Index* begin = indices.get() + offsets[v - lo];
        Index* end = indices.get() + offsets[v - lo + 1];
        std::sort(begin, end);
        degree[v] = std::unique(begin, end) - begin;
      }
    });
    // Rows only shrink, so compacting left in row order never overwrites an unread entry.
    int64_t kept = 0;
    for (int64_t v = lo; v < hi; ++v) {
      if (kept != offsets[v - lo]) {
        std::memmove(indices.get() + kept, indices.get() + offsets[v - lo], static_cast<std::size_t>(degree[v]) * sizeof(Index));
      }
      kept += degree[v];
    }
    indices_out.write(indices.get(), static_cast<std::size_t>(kept) * sizeof(Index));
    result.num_edges += kept;
  }

  OutputFile& indptr_out = writer.open_array("indptr");
  constexpr std::size_t kBatch = std::size_t{1} << 16;
  std::vector<int64_t> batch{0};
  batch.reserve(kBatch);
  int64_t offset = 0;
  for (int64_t v = 0; v < n; ++v) {
    result.isolated_nodes += degree[v] == 0;
    result.max_in_degree = std::max(result.max_in_degree, degree[v]);
    offset += degree[v];
    batch.push_back(offset);
    if (batch.size() == kBatch) {
      indptr_out.write_span(std::span<const int64_t>(batch));
      batch.clear();
    }
  }
  indptr_out.write_span(std::span<const int64_t>(batch));
  result.duplicates_removed = placed_total - result.num_edges;
  return result;
}

}  // namespace

CscResult write_csc(DatasetWriter& writer, const EdgeSource& edges, const CscOptions& options, ThreadPool& pool) {
  if (options.num_nodes) {
    GRAPHTIER_EXPECTS(*options.num_nodes >= 1, InvalidArgument, "number of nodes must be >= 1, got ", *options.num_nodes);
  }
  const int64_t limit = options.num_nodes.value_or(-1);
  std::vector<int64_t> degree(static_cast<std::size_t>(std::max<int64_t>(limit, 0)), 0);
  CscResult result;
  int64_t max_id = -1;
  {
    Progress progress("count degrees", edges.progress_total(), edges.progress_unit());
    edges.scan(pool, progress, [&](std::span<const EdgeChunk> chunks) {
      const auto tasks = make_tasks(chunks);
      const int64_t block_max = check_block(pool, tasks, limit, result.input_edges, edges.name());
      if (limit < 0 && block_max > max_id) {
        max_id = block_max;
        // Geometric growth: a stream of ever larger ids costs amortised O(1) per node.
        if (static_cast<std::size_t>(max_id) >= degree.capacity()) degree.reserve(static_cast<std::size_t>(max_id + 1) * 3 / 2);
        degree.resize(static_cast<std::size_t>(max_id + 1), 0);
      }
      std::atomic<int64_t> loops{0};
      for_each_task(pool, tasks, [&](std::size_t, const Task& task) {
        const EdgeChunk& c = *task.chunk;
        int64_t task_loops = 0;
        for (int64_t i = task.lo; i < task.hi; ++i) {
          const int64_t s = c.src[i], d = c.dst[i];
          if (s == d) {
            ++task_loops;
            if (options.keep_self_loops) std::atomic_ref<int64_t>(degree[d]).fetch_add(1, std::memory_order_relaxed);
            continue;
          }
          std::atomic_ref<int64_t>(degree[d]).fetch_add(1, std::memory_order_relaxed);
          if (options.symmetrize) std::atomic_ref<int64_t>(degree[s]).fetch_add(1, std::memory_order_relaxed);
        }
        loops.fetch_add(task_loops, std::memory_order_relaxed);
      });
      for (const auto& c : chunks) result.input_edges += c.count;
      if (!options.keep_self_loops) result.self_loops_removed += loops.load();
    });
    progress.finish();
  }
  result.num_nodes = limit >= 0 ? limit : max_id + 1;
  degree.resize(static_cast<std::size_t>(result.num_nodes));
  result.index_dtype = index_dtype_for(result.num_nodes);
  if (result.index_dtype == DType::kInt32) {
    return build<int32_t>(writer, edges, options, std::move(degree), result, pool);
  }
  return build<int64_t>(writer, edges, options, std::move(degree), result, pool);
}

}  // namespace graphtier::graph::detail
