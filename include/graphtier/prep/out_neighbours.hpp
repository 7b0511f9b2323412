// The transpose of a CSC graph: each node's out-neighbours (the nodes it sends messages to).
//
// Reverse PageRank pulls along out-edges; with the transpose every node sums its own row, so the
// sum is computed by one thread in a fixed order and the scores do not depend on the thread count
// (a push along in-edges would need atomics or per-thread accumulators, and float addition is not
// associative).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/csc_view.hpp"

namespace graphtier::prep {

/// Out-degree of every node: how often it appears in the CSC's indices (a multi-edge counts each
/// time). int64 [N]. O(E) with relaxed atomic increments, so the counts are exact and
/// deterministic.
std::vector<int64_t> out_degrees(const graph::CscView& csc, ThreadPool& pool);

/// CSR of out-neighbours, owned. Row u lists every X with u among X's in-neighbours, in ascending
/// order of X, once per CSC entry. Indices are int32 when N <= 2^31 (half the memory of int64 on
/// graphs of 200M+ edges), else int64; indptr is int64 [N + 1].
class OutNeighbours {
 public:
  /// O(E) time (scatter) plus sorting each row, O(E) extra memory; deterministic for any pool size.
  static OutNeighbours build(const graph::CscView& csc, ThreadPool& pool);

  int64_t num_nodes() const noexcept { return static_cast<int64_t>(indptr_.size()) - 1; }
  int64_t num_edges() const noexcept { return indptr_.back(); }
  std::span<const int64_t> indptr() const noexcept { return indptr_; }
  bool wide() const noexcept { return wide_; }
  /// Exactly one of these is non-empty (unless there are no edges), as wide() says.
  std::span<const int32_t> indices32() const noexcept { return indices32_; }
  std::span<const int64_t> indices64() const noexcept { return indices64_; }
  /// The transpose seen as a CSC of the reversed graph.
  graph::CscView view() const;

 private:
  std::vector<int64_t> indptr_{0};
  std::vector<int32_t> indices32_;
  std::vector<int64_t> indices64_;
  bool wide_ = false;
};

}  // namespace graphtier::prep
