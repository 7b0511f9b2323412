// How the host samplers read the in-neighbour row of a dst node, whether the graph is a whole CSC
// indexed by global id (the single-process samplers) or rows fetched from other ranks
// (row_sampling.hpp): one sampling code over both, so that both give the same blocks.
#pragma once

#include <cstdint>
#include <span>

#include "cpu/compact_cpu.hpp"
#include "graphtier/sample/row_sampling.hpp"

namespace graphtier::sample::cpu {

/// Node v's in-edges: neighbour ids[0, degree), the first at global CSC position `first`.
template <typename Index>
struct RowOf {
  int64_t first;
  int64_t degree;
  const Index* ids;
};

/// Rows of a CSC indexed by global id (indices int32 or int64). The CSC may be a block row of the
/// graph (a rank of the partitioned mode) whose position p is the global position p + edge_offset.
template <typename Index>
struct CscRows {
  std::span<const int64_t> indptr;
  std::span<const Index> indices;
  int64_t edge_offset = 0;

  RowOf<Index> row(int64_t v) const {
    return {indptr[v] + edge_offset, indptr[v + 1] - indptr[v], indices.data() + indptr[v]};
  }
  /// Starts loading what row(v) reads (dst ids are random: the hardware cannot guess them).
  void prefetch(int64_t v) const { __builtin_prefetch(indptr.data() + v); }
  /// The neighbour at global CSC position p (no row lookup).
  int64_t id_at(int64_t p) const { return static_cast<int64_t>(indices[static_cast<std::size_t>(p - edge_offset)]); }
  void prefetch_at(int64_t p) const { __builtin_prefetch(indices.data() + (p - edge_offset)); }
  /// Every node id the rows can name is below this bound.
  int64_t id_bound() const { return static_cast<int64_t>(indptr.size()) - 1; }
};

/// Rows of a NeighborRows, found by a hash lookup. The constructor checks the shapes and that
/// every id is in [0, 2^40) and every node distinct (InvalidArgument); require() checks that
/// the dst nodes of a layer all have their row.
class FetchedRows {
 public:
  explicit FetchedRows(const NeighborRows& rows);
  /// Throws InvalidArgument naming the first node of `dst` without a row, or repeated.
  void require(std::span<const int64_t> dst) const;

  RowOf<int64_t> row(int64_t v) const {
    const int64_t k = slot_.find(v);
    return {rows_.first_edge[k], rows_.indptr[k + 1] - rows_.indptr[k], rows_.indices.data() + rows_.indptr[k]};
  }
  int64_t id_bound() const { return id_bound_; }
  void prefetch(int64_t) const {}
  /// The index of v's row in the NeighborRows, or -1.
  int64_t slot(int64_t v) const { return slot_.find(v); }

 private:
  const NeighborRows& rows_;
  IdMap slot_;
  int64_t id_bound_ = 0;
};

}  // namespace graphtier::sample::cpu
