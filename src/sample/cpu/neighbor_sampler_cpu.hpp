// One layer of neighbour sampling on the host (neighbor_sampler.hpp defines the draws): the draws
// of every dst node, then the compaction into a Block. The same code reads a whole CSC
// (NeighborSampler) or fetched rows (row_sampling.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cpu/neighbor_draws.hpp"
#include "cpu/row_access.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/csc_view.hpp"
#include "graphtier/sample/minibatch.hpp"

namespace graphtier::sample::cpu {

/// One layer's draws before the compaction: per dst node its picks, in draw order.
struct NeighborDraws {
  std::vector<int64_t> indptr;     // [num_dst + 1]
  std::vector<int64_t> positions;  // [indptr[num_dst]] global edge positions
  std::vector<int64_t> ids;        // [indptr[num_dst]] the neighbour at each position
};

/// The draws of `dst` (any ids in [0, csc.num_nodes()), repeats allowed) on a CSC that may be a
/// block row of the graph: its position p is the global position p + edge_offset, which the draws
/// see, so they are the whole graph's. Unweighted (ctx.weights empty).
NeighborDraws neighbor_draws(const graph::CscView& csc, int64_t edge_offset, std::span<const int64_t> dst,
                             const DrawContext& ctx, ThreadPool* pool);

/// The block of `dst` from their draws: the compaction of every neighbour sampler (edge_ids = the
/// positions when `edge_ids`).
Block block_of_draws(std::span<const int64_t> dst, NeighborDraws draws, bool edge_ids);

/// The block of the dst nodes `dst` drawn with `ctx`; edge_ids (global CSC positions) when
/// `edge_ids`. With a pool, dst nodes are drawn in parallel parts concatenated in order. With
/// `relations` (a typed graph), each column is drawn relation by relation (draw_relations) and
/// Block::edge_types is filled.
Block neighbor_layer(const graph::CscView& csc, std::span<const int64_t> dst, const DrawContext& ctx, bool edge_ids,
                     ThreadPool* pool, const RelationDraws& relations = {});
/// The same from fetched rows (unweighted: ctx.weights must be empty); every dst has its row.
Block neighbor_layer(const FetchedRows& rows, std::span<const int64_t> dst, const DrawContext& ctx, bool edge_ids,
                     ThreadPool* pool);

}  // namespace graphtier::sample::cpu
