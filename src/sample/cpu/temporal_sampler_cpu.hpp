// One layer of temporal neighbour sampling on the host (temporal.hpp): each dst node's window and
// draws (temporal_steps.hpp), then the compaction of each tree's new nodes into a Block.
#pragma once

#include <cstdint>
#include <span>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/csc_view.hpp"
#include "graphtier/sample/minibatch.hpp"
#include "graphtier/sample/temporal.hpp"

namespace graphtier::sample::cpu {

struct TemporalDrawContext {
  uint64_t seed;
  uint64_t layer_stream;
  int64_t fanout;  // -1 = all
  bool replace;
  TemporalStrategy strategy;
  /// A typed graph's: every edge's relation and this layer's fanout per relation ([R], `fanout`
  /// unused); each relation segment of a column is sampled on its own, from
  /// relation_stream(tree_stream(layer, tree), r), as the untimed typed sampler. Empty: untyped.
  std::span<const uint8_t> type_per_edge{};
  std::span<const int64_t> relation_fanouts{};
};

/// The block of dst nodes `dst`, node i in tree dst_trees[i] of time seed_times[dst_trees[i]]:
/// Block::src_trees gives each src node's tree, the dst nodes' first; edge_ids (global CSC
/// positions) when `edge_ids`, Block::edge_types on a typed graph. With a pool, dst nodes are drawn in parallel parts concatenated in
/// order (the result does not depend on it).
Block temporal_layer(const graph::CscView& csc, const TemporalIndex& index, std::span<const int64_t> dst,
                     std::span<const int64_t> dst_trees, std::span<const int64_t> seed_times,
                     const TemporalDrawContext& ctx, bool edge_ids, ThreadPool* pool);

}  // namespace graphtier::sample::cpu
