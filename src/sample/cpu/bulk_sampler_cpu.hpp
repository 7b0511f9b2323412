// Host backend of bulk sampling: step 1 (SpGEMM), step 2 (inverse-transform draws) and step 3
// (extraction) of one layer for all stacked batches (bulk_sampler.hpp).
#pragma once

#include <cstdint>

#include "graphtier/core/thread_pool.hpp"
#include "sample/bulk_layers.hpp"
#include "sample/bulk_matrices.hpp"

namespace graphtier::sample::cpu {

/// C = Q * M by Gustavson's row-wise algorithm with a dense accumulator per part; output columns
/// ascending. Rows of Q are spread over the pool. Values of M are summed in Q's column order
/// (exact on the kBulkProbabilityUnit grid, so any order would give the same bits).
CsrMatrix spgemm(const CsrMatrix& q, const CsrMatrix& m, int64_t num_cols, ThreadPool* pool);

/// GraphSAGE layer. Q is one-hot per row, so row (b, v) of Q * A is row v of A: the product is
/// read in place rather than copied (what Gustavson's algorithm reduces to for one-hot rows).
bulk::StackedDraws graphsage_layer(const BulkMatrices& m, const bulk::StackedFrontier& frontier, int64_t fanout,
                                   bool replace, uint64_t seed, bool edge_ids, ThreadPool* pool);

/// LADIES layer: P = Q * squares by spgemm(), one draw row per batch, then R * A * C_b.
bulk::StackedDraws ladies_layer(const BulkMatrices& m, const bulk::StackedFrontier& frontier, int64_t layer_size,
                                uint64_t seed, bool edge_ids, ThreadPool* pool);

}  // namespace graphtier::sample::cpu
