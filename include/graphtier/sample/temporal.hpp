// Temporal neighbour sampling (PyG's `time_attr`, `input_time`, `temporal_strategy`; pyg-lib's
// temporal neighbor_sample): every seed carries a time t, and the tree sampled from it reaches only
// neighbours no later than t.
//
//   - The time of a CSC entry is the edge's own (edge_time.bin) or its source node's
//     (node_time.bin): PyG's time_attr on edges or on nodes.
//   - Disjoint trees, as PyG (pyg-lib refuses temporal sampling without disjoint=True): seed i
//     roots tree i, every node reached from it belongs to tree i and inherits its time t_i, and
//     nodes are deduplicated within a tree only. A node reached from two seeds with different
//     times is two nodes of the minibatch: one tree cannot pass another a message from its
//     future. Block::src_trees holds each node's tree (PyG's `batch`).
//   - Within each column the entries are taken in time order (TemporalIndex): the eligible ones,
//     time <= t, are a prefix found by binary search (O(log degree)); strategy kUniform draws up to
//     the fanout of them uniformly without replacement (Floyd, as the untimed sampler) or with
//     replacement, kLast takes the `fanout` most recent (ties: the later CSC position is the more
//     recent). The per-row decision is temporal_steps.hpp's, shared by the host and the device.
//   - Tree i's draws use the stream tree_stream(layer_stream, i), so two trees holding one node
//     draw independently, and a batch does not depend on the pool or the backend.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/csc_view.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph/hetero_view.hpp"

namespace graphtier::sample {

enum class TemporalStrategy : uint8_t { kUniform, kLast };

/// PyG's temporal_strategy values, in TemporalStrategy's order: the one list of them (the
/// binding's `temporal_names()` gives it to Python and its command-line choices).
inline constexpr std::array<std::string_view, 2> kTemporalStrategyNames{"uniform", "last"};

/// "uniform" or "last" (PyG's temporal_strategy values).
std::string_view temporal_strategy_name(TemporalStrategy s) noexcept;
/// Parses temporal_strategy_name's output; throws InvalidArgument naming the choices otherwise.
TemporalStrategy parse_temporal_strategy(std::string_view text);

/// Where a CSC entry's time comes from.
enum class TimeSource : uint8_t { kNode, kEdge };

/// PyG's time_attr values, in TimeSource's order (the dataset arrays node_time.bin and
/// edge_time.bin): the one list of them, as kTemporalStrategyNames.
inline constexpr std::array<std::string_view, 2> kTimeAttrNames{"node_time", "edge_time"};

/// Each column's entries in time order. Built once per graph (a loader builds it when it starts):
/// O(E log degree) time and 16 bytes an edge of host memory, beside the CSC, which it leaves as it
/// is (the format's columns stay in their canonical order, so untimed sampling is unchanged).
struct TemporalIndex {
  /// [E] CSC positions: column v's entries are order[indptr[v] .. indptr[v + 1]), sorted by
  /// (relation, time, position); a typed column's relation segments therefore stay where they are.
  std::vector<int64_t> order;
  /// [E] time[k] is the time of entry order[k]: within a column (and relation) non-decreasing.
  std::vector<int64_t> time;

  /// The index of `csc` with `times`: node times ([N], source = kNode: an entry's time is its
  /// source node's) or edge times ([E], kEdge). `types`: the typed graph's type_per_edge, or empty.
  /// Throws InvalidArgument for times of the wrong length. With a pool, columns are sorted in
  /// parallel; the result does not depend on it.
  static TemporalIndex build(const graph::CscView& csc, std::span<const int64_t> times, TimeSource source,
                             std::span<const uint8_t> types = {}, ThreadPool* pool = nullptr);
  int64_t num_edges() const noexcept { return static_cast<int64_t>(order.size()); }
};

/// What PyG's time_attr names in `dataset`: "node_time" (node_time.bin, kNode) or "edge_time"
/// (edge_time.bin, kEdge). Throws InvalidArgument for another name or a time the dataset lacks.
TimeSource time_source(const graph::Dataset& dataset, std::string_view time_attr);

/// The TemporalIndex of `dataset`'s graph with the times `time_attr` names (time_source), typed
/// columns by relation; what every temporal sampler of a dataset reads.
TemporalIndex temporal_index(const graph::Dataset& dataset, std::string_view time_attr, ThreadPool* pool = nullptr);

}  // namespace graphtier::sample
