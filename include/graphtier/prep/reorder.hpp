// Renumbering nodes by hotness (§3.2 of the data tiering paper, docs/references.md): the
// permutation, and the arrays that follow it.
//
// After renumbering, node 0 is the hottest, so every static tier is a prefix range of ids.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "graphtier/core/dtype.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/csc_view.hpp"

namespace graphtier {
class Progress;
}

namespace graphtier::prep {

/// A bijection on [0, N) in both directions, int64 [N] each.
struct Permutation {
  std::vector<int64_t> new_to_old;
  std::vector<int64_t> old_to_new;

  int64_t size() const noexcept { return static_cast<int64_t>(new_to_old.size()); }
};

/// Orders nodes by score, highest first, ties by the lower old id first: a strict total order, so
/// the result is unique and independent of the pool size (parallel merge sort, O(N log N)).
/// With `type_offset` (a typed dataset's node_type_offset, [T + 1]) the order is within each
/// type's id range, which stays where it is: node type t's new ids are [offset[t], offset[t+1])
/// too, hottest first. Throws InvalidArgument if a score is not finite.
Permutation order_by_score(std::span<const double> scores, ThreadPool& pool, std::span<const int64_t> type_offset = {});

/// Inverse of a permutation given new -> old; throws InvalidArgument if it is not a permutation.
Permutation from_new_to_old(std::vector<int64_t> new_to_old, ThreadPool& pool);

/// out[n] = values[perm.new_to_old[n]]: labels, scores, and a previous permutation to compose
/// (new -> previous id -> original id) all follow the nodes this way.
template <typename T>
std::vector<T> gather_by_new_id(std::span<const T> values, const Permutation& perm, ThreadPool& pool) {
  std::vector<T> out(perm.new_to_old.size());
  pool.parallel_for(0, perm.size(), int64_t{1} << 16, [&](int64_t lo, int64_t hi) {
    for (int64_t n = lo; n < hi; ++n) out[n] = values[perm.new_to_old[n]];
  });
  return out;
}

/// Maps a list of node ids to their new ids and sorts them ascending: a split is a set, and
/// ascending new ids put its hottest nodes first and its reads in storage order.
std::vector<int64_t> map_ids_sorted(std::span<const int64_t> ids, const Permutation& perm);

/// Writes the CSC of the renumbered graph: new node n has old node perm.new_to_old[n]'s
/// in-neighbours, in the same order (so a position within a row keeps its meaning), each mapped
/// through perm.old_to_new. indptr goes to `indptr_out` (int64 [N + 1]) and indices to
/// `indices_out` with the input's index width. Rows are built in parallel in windows of about
/// `window_edges` entries, so memory beyond the permutation and the new indptr is bounded.
/// `progress`, if given, is advanced by entries written.
void write_relabeled_csc(const graph::CscView& csc, const Permutation& perm, OutputFile& indptr_out, OutputFile& indices_out,
                         ThreadPool& pool, Progress* progress = nullptr, int64_t window_edges = int64_t{1} << 24);

/// Writes a per-edge array of the renumbered graph (a typed dataset's type_per_edge, edge_time):
/// new row n holds old row perm.new_to_old[n]'s values in the same order, as write_relabeled_csc
/// places its entries, so each value stays with its edge.
void write_relabeled_edge_values(const graph::CscView& csc, std::span<const uint8_t> values, const Permutation& perm,
                                 OutputFile& out);
void write_relabeled_edge_values(const graph::CscView& csc, std::span<const int64_t> values, const Permutation& perm,
                                 OutputFile& out);

}  // namespace graphtier::prep
