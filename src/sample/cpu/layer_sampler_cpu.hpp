// Layer-wise sampling on the host, step by step as layer_sampler.hpp defines it: column weights,
// draws, and the block of one layer. LADIES reads the dst rows from a whole CSC or from fetched
// rows (row_sampling.hpp) with the same code.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cpu/row_access.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/csc_view.hpp"
#include "graphtier/sample/minibatch.hpp"

namespace graphtier::sample::cpu {

/// Nodes in ascending id order with their draw weights w_u.
struct WeightedNodes {
  std::vector<int64_t> ids;
  std::vector<uint64_t> weights;
};

/// LADIES candidates of the rows `dst`: their in-neighbours and themselves, with w_u.
WeightedNodes ladies_candidates(const graph::CscView& csc, std::span<const int64_t> dst);

/// FastGCN's w_u for every node (the column weights of Â over all rows).
std::vector<uint64_t> fastgcn_weights(const graph::CscView& csc);

/// The internal nodes of the race tree of the weights (layer_draws.hpp: RaceTree::internal), built
/// in O(n).
std::vector<uint64_t> race_tree(std::span<const uint64_t> weights);

/// Positions drawn among the candidates with draw weights `weights`: all of them (ascending) when
/// size is -1 or >= their number, else the `size` winners of the race (layer_draws.hpp) in draw
/// order, O(size log n) past the tree. `shared_tree` is race_tree(weights) when the caller keeps
/// one across calls (FastGCN; it is only read); empty to build one.
std::vector<int64_t> draw_positions(std::span<const uint64_t> weights, std::span<const uint64_t> shared_tree,
                                    int64_t size, uint64_t seed, uint64_t layer_stream);

/// The src set of a block (dst ∪ drawn), ascending, with the w_u its weights use.
WeightedNodes ladies_columns(const graph::CscView& csc, std::span<const int64_t> dst, int64_t size, uint64_t seed,
                             uint64_t layer_stream);
WeightedNodes ladies_columns(const FetchedRows& rows, std::span<const int64_t> dst, int64_t size, uint64_t seed,
                             uint64_t layer_stream);
WeightedNodes fastgcn_columns(std::span<const uint64_t> weights, std::span<const uint64_t> tree,
                              std::span<const int64_t> dst, int64_t size, uint64_t seed, uint64_t layer_stream);

/// Block of the rows `dst` over the src set `columns`: edges, row-normalised weights, compaction.
/// With a pool, rows are processed in parallel parts concatenated in order.
Block build_layer_block(const graph::CscView& csc, std::span<const int64_t> dst, const WeightedNodes& columns,
                        ThreadPool* pool);
Block build_layer_block(const FetchedRows& rows, std::span<const int64_t> dst, const WeightedNodes& columns,
                        ThreadPool* pool);

}  // namespace graphtier::sample::cpu
