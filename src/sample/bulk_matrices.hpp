// The step-1 right-hand matrices of bulk sampling (bulk_sampler.hpp), built once from the CSC, or
// per layer from fetched neighbour rows (row_sampling.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/sample/bulk_sampler.hpp"
#include "graphtier/sample/row_sampling.hpp"

namespace graphtier::sample {

/// CSR, columns ascending in every row, host memory.
struct CsrMatrix {
  std::vector<int64_t> rowptr;  // [rows + 1]
  std::vector<int64_t> cols;    // [nnz]
  std::vector<double> vals;     // [nnz]

  int64_t rows() const noexcept { return static_cast<int64_t>(rowptr.size()) - 1; }
  int64_t nnz() const noexcept { return rowptr.empty() ? 0 : rowptr.back(); }
};

struct BulkMatrices {
  int64_t num_nodes = 0;  // every column (node id) is below this
  /// A (LADIES: A + I, the matrix its blocks are cut from, so that every dst row keeps its
  /// self-loop): vals = edge multiplicity (plus one on the diagonal for LADIES).
  CsrMatrix a;
  /// GraphSAGE only (empty for LADIES, whose blocks carry no edge ids): the lowest CSC position of
  /// entry i's edges.
  std::vector<int64_t> first_position;
  /// Host GraphSAGE only (empty otherwise; cpu::add_row_units): A's rows as units, one per edge.
  /// a_cumulative[i] = the multiplicities of entry i's row up to entry i; the units of row v are
  /// a_unit_entry[a_unit_rowptr[v], a_unit_rowptr[v + 1]) (a_unit_rowptr is the CSC's indptr),
  /// each the row-local entry it belongs to.
  std::vector<int64_t> a_cumulative;
  std::vector<int32_t> a_unit_entry;
  std::span<const int64_t> a_unit_rowptr;
  /// LADIES only (empty otherwise): the entrywise square of the row-normalised A + I, on the
  /// kBulkProbabilityUnit grid (the pattern of `a`).
  CsrMatrix ladies_squares;
};

BulkMatrices build_bulk_matrices(const SampleGraph& graph, BulkAlgorithm algorithm, ThreadPool* pool);

/// The same rows for the fetched nodes only: matrix row k is the row of rows.nodes[k], with its
/// global first CSC positions (rows.first_edge); columns (neighbour ids) are below `num_cols`.
BulkMatrices build_bulk_matrices(const NeighborRows& rows, int64_t num_cols, BulkAlgorithm algorithm,
                                 ThreadPool* pool);

}  // namespace graphtier::sample
