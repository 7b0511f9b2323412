// The decisions of typed (per-relation) neighbour sampling that the host and the device share:
// where a column's relation segments lie and which type a node is. The CPU sampler walks a column
// with them (cpu/neighbor_sampler_cpu.cpp) and the CPU tests call them directly, so that a GPU
// kernel that finds segments differently would have to bypass them.
//
// graph/hetero_view.hpp: within a column, edges are sorted by relation id, so relation r's edges
// are the positions [first with type >= r, first with type > r), found by binary search over the
// column's uint8 types (a hub column of millions of edges costs ~20 reads per segment).
//
// Plain C++ under g++, host/device code under nvcc (like core/rng.hpp).
#pragma once

#include <cstdint>
#include <span>

#include "graphtier/core/rng.hpp"

namespace graphtier::sample::typed {

/// First position p in [begin, end) with type_at(p) > relation, or end (the column's types sorted).
/// `type_at(p)`: edge p's relation, from one array or, on the GPU, from a topology's hot and cold
/// parts.
template <typename TypeAt>
GRAPHTIER_HD int64_t segment_end_at(TypeAt type_at, int64_t begin, int64_t end, int relation) {
  int64_t lo = begin, hi = end;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (static_cast<int>(type_at(mid)) <= relation) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

GRAPHTIER_HD int64_t segment_end(const uint8_t* type_per_edge, int64_t begin, int64_t end, int relation) {
  return segment_end_at([type_per_edge](int64_t p) { return type_per_edge[p]; }, begin, end, relation);
}

/// Relation r's segment [*first, *last) of the column [begin, end) (empty when r has no edges there).
template <typename TypeAt>
GRAPHTIER_HD void relation_segment_at(TypeAt type_at, int64_t begin, int64_t end, int relation, int64_t* first,
                                      int64_t* last) {
  *first = relation == 0 ? begin : segment_end_at(type_at, begin, end, relation - 1);
  *last = segment_end_at(type_at, *first, end, relation);
}

GRAPHTIER_HD void relation_segment(const uint8_t* type_per_edge, int64_t begin, int64_t end, int relation,
                                   int64_t* first, int64_t* last) {
  relation_segment_at([type_per_edge](int64_t p) { return type_per_edge[p]; }, begin, end, relation, first, last);
}

/// The type t of node v: node_type_offset[t] <= v < node_type_offset[t + 1] (offsets [T + 1],
/// non-decreasing; v in [offsets[0], offsets[T])). Empty types are skipped: the last t that fits.
GRAPHTIER_HD int node_type_of(const int64_t* node_type_offset, int num_types, int64_t v) {
  int lo = 0, hi = num_types;  // the answer is the last t with offset[t] <= v
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    if (node_type_offset[mid] <= v) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// The GPU's rows of a typed layer of `relations` relations: row k is relation k % relations of dst
/// node k / relations, so the rows of one dst node are its relation segments in relation order,
/// and the rows' scanned counts read at k = w * relations are the block's indptr (the CPU's
/// draw_relations appends a node's segments in that order; an absent relation's row is empty).
GRAPHTIER_HD void typed_row(int64_t k, int relations, int64_t* w, int* relation) {
  *w = k / relations;
  *relation = static_cast<int>(k - *w * relations);
}

/// What bounds a typed layer's edges per dst node, for the host's sizing by upper bounds
/// (nbr::layer_bound): -1 when some relation keeps all its edges (no bound), else the sum of the
/// relations' fanouts (each segment keeps at most its fanout).
inline int64_t layer_fanout_bound(std::span<const int64_t> relation_fanouts) {
  int64_t sum = 0;
  for (const int64_t f : relation_fanouts) {
    if (f < 0) return -1;
    sum += f;  // fanouts are below 2^24 and relations at most 256: no overflow
  }
  return sum;
}

}  // namespace graphtier::sample::typed
