// A borrowed view of a heterogeneous graph's types (docs/format.md, Heterogeneous datasets): the
// layout GraphBolt's FusedCSCSamplingGraph and the scaling systems share, so that format v1's
// arrays, `prepare`'s renumbering and the feature tiers keep working on typed graphs.
//
// - One global id space; node type t holds the contiguous ids [node_type_offset[t],
//   node_type_offset[t + 1]).
// - One CSC over all nodes; edge e (a CSC position) has relation type_per_edge[e], and within each
//   column the edges are sorted by relation id, so column v's edges of relation r are one segment.
// - Relation r goes from node type relations[r].src_type to relations[r].dst_type: the sources
//   (indices) of its edges lie in the first type's range, their columns in the second's.
//
// A homogeneous graph is the empty view (or one type and one relation). Names (the manifest's
// "paper", "paper:cites:paper") are the dataset's business; samplers see only these numbers.
#pragma once

#include <cstdint>
#include <span>

namespace graphtier::graph {

/// The most relations a dataset can hold: type_per_edge is uint8.
inline constexpr int kMaxRelations = 256;

struct RelationTypes {
  int32_t src_type = 0;
  int32_t dst_type = 0;
};

/// Non-owning; the viewed memory must outlive the view.
struct HeteroView {
  std::span<const int64_t> node_type_offset;  // [T + 1], 0 .. num_nodes, non-decreasing
  std::span<const RelationTypes> relations;   // [R], R <= kMaxRelations
  std::span<const uint8_t> type_per_edge;     // [E], each < R, sorted within each column

  bool empty() const noexcept { return node_type_offset.empty(); }
  int32_t num_node_types() const noexcept {
    return node_type_offset.empty() ? 0 : static_cast<int32_t>(node_type_offset.size()) - 1;
  }
  int32_t num_relations() const noexcept { return static_cast<int32_t>(relations.size()); }
};

}  // namespace graphtier::graph
