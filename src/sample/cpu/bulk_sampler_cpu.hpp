// Host backend of bulk sampling: step 1 (SpGEMM), step 2 (inverse-transform draws) and step 3
// (extraction) of one layer for all stacked batches (bulk_sampler.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "bulk_layers.hpp"
#include "bulk_matrices.hpp"

namespace graphtier::sample::cpu {

/// C = Q * M by Gustavson's row-wise algorithm with a dense accumulator per part; output columns
/// ascending. Rows of Q are spread over the pool. Values of M are summed in Q's column order
/// (exact on the kBulkProbabilityUnit grid, so any order would give the same bits).
CsrMatrix spgemm(const CsrMatrix& q, const CsrMatrix& m, int64_t num_cols, ThreadPool* pool);

/// Fills the unit fields of `m` (BulkMatrices) for graphsage_layer; `csc_indptr` is the graph's,
/// kept by reference.
void add_row_units(BulkMatrices& m, std::span<const int64_t> csc_indptr, ThreadPool* pool);

/// A row of n positive integer weights as their units: running sums `cumulative[k]` = w_0 + ...
/// + w_k, `units` = cumulative[n - 1] (< 2^53), and `unit_entry[u]` = the entry holding unit u
/// (nullptr when every weight is 1: unit u is entry u, and cumulative is not read).
struct UnitRow {
  const int64_t* cumulative;
  const int32_t* unit_entry;
  int64_t n;
  int64_t units;
};

/// Row v of A (add_row_units).
UnitRow unit_row(const BulkMatrices& m, int64_t v);

/// bulk::sample_row on the row's weights: the same entries in the same order, without reading
/// the row. With integer weights, "prefix > target" is "prefix > floor(target)": the draw is the
/// entry holding unit floor(target) among the units not yet chosen, one lookup in unit_entry.
/// O(budget log budget) per round instead of O(n). `out` has room for
/// bulk::sampled_count(n, budget, replace) entries.
int64_t sample_row_units(const UnitRow& row, int64_t budget, bool replace, uint64_t seed, uint64_t layer_stream,
                         int64_t key, std::vector<int64_t>& scratch, int64_t* out);

/// GraphSAGE layer. Q is one-hot per row, so row (b, v) of Q * A is row v of A: the product is
/// read in place rather than copied (what Gustavson's algorithm reduces to for one-hot rows), and
/// drawn from by sample_row_units (needs add_row_units).
bulk::StackedDraws graphsage_layer(const BulkMatrices& m, const bulk::StackedFrontier& frontier, int64_t fanout,
                                   bool replace, uint64_t seed, bool edge_ids, ThreadPool* pool);

/// LADIES layer: P = Q * squares by spgemm(), one draw row per batch, then R * (A + I) * C_b (`m.a`
/// holds A + I for LADIES); no edge ids.
bulk::StackedDraws ladies_layer(const BulkMatrices& m, const bulk::StackedFrontier& frontier, int64_t layer_size,
                                uint64_t seed, ThreadPool* pool);

}  // namespace graphtier::sample::cpu
