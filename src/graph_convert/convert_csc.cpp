// CSC of a converted edge input: the first pass checks every id and counts the in-degrees (and
// finds the node count when it is not given), then the shared builder (csc_builder.hpp) places,
// sorts and deduplicates the rows.
#include "convert_csc.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <vector>

#include "csc_builder.hpp"
#include "graphtier/core/error.hpp"

namespace graphtier::graph::detail {

using ::graphtier::detail::concat;

namespace {

constexpr int64_t kEdgeGrain = int64_t{1} << 15;

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

/// Checks every id of a block (>= 0, and < limit when known, else < cap) and returns the largest
/// id, or throws for the first bad edge in input order.
int64_t check_block(ThreadPool& pool, const std::vector<Task>& tasks, int64_t limit, int64_t cap, int64_t edges_before,
                    const std::string& name, const std::string& limit_from) {
  const int64_t bound = limit >= 0 ? limit : cap;
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> task_max(tasks.size(), -1);
  std::vector<int64_t> task_bad(tasks.size(), kNone);
  for_each_task(pool, tasks, [&](std::size_t t, const Task& task) {
    int64_t max_id = -1;
    for (int64_t i = task.lo; i < task.hi; ++i) {
      const int64_t s = task.chunk->src[i], d = task.chunk->dst[i];
      if (s < 0 || d < 0 || s >= bound || d >= bound) {
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
      const int64_t bad = (s < 0 || s >= bound) ? s : d;
      if (limit < 0 && bad >= 0) {
        throw FormatError(name, concat("edge ", edges_before + task_bad[t], " (", s, " -> ", d, "): ", node_id_problem(bad)));
      }
      const std::string range = limit >= 0 ? concat("out of range [0, ", limit, ")") : std::string("negative");
      // When another input set the number of nodes, either may be wrong: name both counts.
      const std::string disagree = bad >= 0 && !limit_from.empty()
                                       ? concat(": ", limit_from, " says ", limit, " nodes, the edges need at least ",
                                                static_cast<uint64_t>(bad) + 1)  // 2^63 for the largest id
                                       : std::string();
      throw FormatError(name, concat("edge ", edges_before + task_bad[t], " (", s, " -> ", d, "): node id ", bad, " is ",
                                     range, disagree));
    }
    max_id = std::max(max_id, task_max[t]);
  }
  return max_id;
}

}  // namespace

std::string node_id_problem(int64_t id) {
  if (id >= kMaxNodes) {
    return concat("node id ", id, " is beyond the format's limit of ", kMaxNodes,
                  " nodes (indptr.bin holds num_nodes + 1 int64 offsets)");
  }
  const std::string problem = node_count_problem(id + 1, kCscBytesPerNode, "the in-degree counters");
  return problem.empty() ? problem : concat("node id ", id, ": ", problem);
}

CscResult write_csc(DatasetWriter& writer, const EdgeSource& edges, const CscOptions& options, ThreadPool& pool) {
  if (options.num_nodes) {
    GRAPHTIER_EXPECTS(*options.num_nodes >= 1, InvalidArgument, "number of nodes must be >= 1, got ", *options.num_nodes);
  }
  const int64_t limit = options.num_nodes.value_or(-1);
  if (limit >= 0) {
    // Refused before the counters are allocated: a count from a file may claim anything.
    const std::string problem = node_count_problem(limit, kCscBytesPerNode, "the in-degree counters");
    GRAPHTIER_EXPECTS(problem.empty(), InvalidArgument,
                      options.num_nodes_from.empty() ? std::string("number of nodes (--num-nodes)") : options.num_nodes_from,
                      ": ", problem);
    writer.require_free_space("the offsets (indptr.bin)", limit + 1, 8);
  }
  // Ids read without a node count may not exceed what the counters can hold.
  const int64_t cap = limit >= 0 ? limit : max_nodes_for(kCscBytesPerNode);
  std::vector<int64_t> degree(static_cast<std::size_t>(std::max<int64_t>(limit, 0)), 0);
  CscResult result;
  int64_t max_id = -1;
  {
    Progress progress("count degrees", edges.progress_total(), edges.progress_unit());
    edges.scan(pool, progress, [&](std::span<const EdgeChunk> chunks) {
      const auto tasks = make_tasks(chunks);
      const int64_t block_max = check_block(pool, tasks, limit, cap, result.input_edges, edges.name(), options.num_nodes_from);
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

  const auto scan = [&](Progress& progress, const auto& place) {
    edges.scan(pool, progress, [&](std::span<const EdgeChunk> chunks) {
      for_each_task(pool, make_tasks(chunks), [&](std::size_t, const Task& task) {
        const EdgeChunk& c = *task.chunk;
        CscEntry batch[kCscEntryBatch];
        int count = 0;
        for (int64_t i = task.lo; i < task.hi; ++i) {
          if (count > kCscEntryBatch - 2) {
            place(batch, count);
            count = 0;
          }
          const int64_t s = c.src[i], d = c.dst[i];
          if (s == d) {
            if (options.keep_self_loops) batch[count++] = CscEntry{d, s};
            continue;
          }
          batch[count++] = CscEntry{d, s};  // CSC: the row of the destination lists the message source
          if (options.symmetrize) batch[count++] = CscEntry{s, d};
        }
        if (count > 0) place(batch, count);
      });
    });
  };
  build_csc(writer, std::span<int64_t>(degree), result.index_dtype, options.memory_budget,
            CscProgress{edges.progress_total(), edges.progress_unit()}, pool, scan, kIgnoreRows, result);
  return result;
}

CscResult write_typed_csc(DatasetWriter& writer, std::span<const TypedEdgeInput> inputs, int64_t num_nodes,
                          bool keep_self_loops, int64_t memory_budget, ThreadPool& pool) {
  const std::string problem = node_count_problem(num_nodes, kCscBytesPerNode, "the in-degree counters");
  GRAPHTIER_EXPECTS(problem.empty(), InvalidArgument, "the node types' counts: ", problem);
  writer.require_free_space("the offsets (indptr.bin)", num_nodes + 1, 8);
  CscResult result;
  result.num_nodes = num_nodes;
  result.index_dtype = index_dtype_for(num_nodes);
  int64_t progress_total = 0;
  for (const TypedEdgeInput& in : inputs) progress_total += in.edges->progress_total();
  // The inputs' progress units may differ (bytes of text, edges of arrays): shown as one count.
  const std::string unit = inputs.empty() ? std::string(" edges") : inputs.front().edges->progress_unit();

  const auto is_loop = [](const TypedEdgeInput& in, int64_t s, int64_t d) {
    return in.src_offset + s == in.dst_offset + d;
  };
  std::vector<int64_t> degree(static_cast<std::size_t>(num_nodes), 0);
  {
    Progress progress("count degrees", progress_total, unit);
    for (const TypedEdgeInput& in : inputs) {
      int64_t read = 0;
      in.edges->scan(pool, progress, [&](std::span<const EdgeChunk> chunks) {
        const auto tasks = make_tasks(chunks);
        constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
        std::vector<int64_t> task_bad(tasks.size(), kNone);
        std::atomic<int64_t> loops{0};
        for_each_task(pool, tasks, [&](std::size_t t, const Task& task) {
          const EdgeChunk& c = *task.chunk;
          for (int64_t i = task.lo; i < task.hi; ++i) {
            if (c.src[i] < 0 || c.src[i] >= in.src_count || c.dst[i] < 0 || c.dst[i] >= in.dst_count) {
              task_bad[t] = task.first + (i - task.lo);
              return;
            }
          }
          int64_t task_loops = 0;
          for (int64_t i = task.lo; i < task.hi; ++i) {
            const int64_t s = c.src[i], d = c.dst[i];
            if (is_loop(in, s, d)) {
              task_loops += in.reverse >= 0 ? 2 : 1;
              if (!keep_self_loops) continue;
            }
            std::atomic_ref<int64_t>(degree[in.dst_offset + d]).fetch_add(1, std::memory_order_relaxed);
            if (in.reverse >= 0) std::atomic_ref<int64_t>(degree[in.src_offset + s]).fetch_add(1, std::memory_order_relaxed);
          }
          loops.fetch_add(task_loops, std::memory_order_relaxed);
        });
        for (std::size_t t = 0; t < tasks.size(); ++t) {
          if (task_bad[t] == kNone) continue;
          const Task& task = tasks[t];
          const int64_t i = task.lo + (task_bad[t] - task.first);
          const int64_t s = task.chunk->src[i], d = task.chunk->dst[i];
          const bool src_bad = s < 0 || s >= in.src_count;
          throw FormatError(in.edges->name(),
                            concat("edge ", read + task_bad[t], " (", s, " -> ", d, "): ", src_bad ? "source" : "destination",
                                   " id ", src_bad ? s : d, " is out of range [0, ", src_bad ? in.src_count : in.dst_count,
                                   ") of node type ", src_bad ? in.src_type : in.dst_type));
        }
        for (const auto& c : chunks) read += c.count;
        if (!keep_self_loops) result.self_loops_removed += loops.load();
      });
      result.input_edges += read;
    }
    progress.finish();
  }

  const auto scan = [&](Progress& progress, const auto& place) {
    for (const TypedEdgeInput& in : inputs) {
      in.edges->scan(pool, progress, [&](std::span<const EdgeChunk> chunks) {
        for_each_task(pool, make_tasks(chunks), [&](std::size_t, const Task& task) {
          const EdgeChunk& c = *task.chunk;
          CscEntry batch[kCscEntryBatch];
          int count = 0;
          for (int64_t i = task.lo; i < task.hi; ++i) {
            if (count > kCscEntryBatch - 2) {
              place(batch, count);
              count = 0;
            }
            const int64_t s = c.src[i], d = c.dst[i];
            if (is_loop(in, s, d) && !keep_self_loops) continue;
            const int64_t src = in.src_offset + s, dst = in.dst_offset + d;
            batch[count++] = CscEntry{dst, typed_key(in.relation, src)};
            if (in.reverse >= 0) batch[count++] = CscEntry{src, typed_key(in.reverse, dst)};
          }
          if (count > 0) place(batch, count);
        });
      });
    }
  };
  build_typed_csc(writer, std::span<int64_t>(degree), result.index_dtype, memory_budget, CscProgress{progress_total, unit},
                  pool, scan, result);
  return result;
}

}  // namespace graphtier::graph::detail
