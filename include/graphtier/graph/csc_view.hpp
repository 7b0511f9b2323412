// A borrowed CSC graph, the input of every hotness score and of the relabeling.
#pragma once

#include <cstdint>
#include <span>

#include <string>

#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph/hetero_view.hpp"

namespace graphtier::graph {

/// Non-owning view of a CSC graph as stored in dataset format v1: node v's in-neighbours (message
/// sources) are indices[indptr[v] : indptr[v + 1]]. indptr is int64 [N + 1]; indices int32 or int64
/// [E], all in [0, N). The viewed memory must outlive the view.
struct CscView {
  std::span<const int64_t> indptr;
  IndexSpan indices;

  int64_t num_nodes() const noexcept { return indptr.empty() ? 0 : static_cast<int64_t>(indptr.size()) - 1; }
  int64_t num_edges() const noexcept { return indptr.empty() ? 0 : indptr.back(); }
  int64_t in_degree(int64_t v) const { return indptr[v + 1] - indptr[v]; }

  static CscView of(const Dataset& dataset) { return {dataset.indptr(), dataset.indices()}; }

  /// Cheap shape checks (indptr non-empty, starts at 0, ends at the indices' length); ids are not
  /// scanned, since Dataset::open has validated them. Throws InvalidArgument naming `what`.
  void check_shape(const char* what) const;
};

/// What is wrong with `view` as the types of `csc` (hetero_view.hpp's contract), or "": offsets
/// from 0 to N, never decreasing; 1 to kMaxRelations relations between existing types;
/// type_per_edge of E entries, each < R, sorted within each column; every edge ending at a node of
/// its relation's destination type and starting at one of its source type. O(N + E). Types and
/// relations are named from `names` when given (a dataset's schema), else by number. Dataset::open
/// and the samplers (for views they are handed) check with it.
std::string hetero_problem(const HeteroView& view, const CscView& csc, const HeteroSchema* names = nullptr);

}  // namespace graphtier::graph
