// A typed graph's block split by node type and relation (docs/architecture.md, MiniBatch, typed
// graphs): what PyG's HeteroData and DGL's heterogeneous blocks are built from, so that Python does
// not re-derive the types of a batch's nodes and edges.
#pragma once

#include <cstdint>
#include <vector>

#include "graphtier/graph/hetero_view.hpp"
#include "graphtier/sample/minibatch.hpp"

namespace graphtier::sample {

/// One relation's edges of a block: a CSC from the relation's src type's nodes to its dst type's
/// dst nodes, in positions of the HeteroBlock's per-type lists. Host memory, owned.
struct RelationBlock {
  std::vector<int64_t> indptr;       // [num_dst[dst_type] + 1], 0 .. num_edges
  std::vector<int64_t> indices;      // [num_edges] positions in src_nodes[src_type]
  std::vector<int64_t> block_edges;  // [num_edges] each edge's position in the Block (its edge_ids, weights)

  int64_t num_edges() const noexcept { return indptr.empty() ? 0 : indptr.back(); }
};

/// A Block by node type: type t's src nodes are the block's src nodes of type t in block order, so
/// that its first num_dst[t] are the block's dst nodes of type t, and block l's dst nodes of type t
/// are block l-1's src nodes of type t (the Block contract, per type). Each dst node's edges of a
/// relation keep their block order. Every type and every relation is present, empty ones too
/// (PyG's loaders and layers fail on a missing type: pyg#7060, #7194).
struct HeteroBlock {
  std::vector<int64_t> num_dst;                 // [T]
  std::vector<std::vector<int64_t>> src_nodes;  // [T] global ids; minus node_type_offset[t]: ids within the type
  std::vector<RelationBlock> relations;         // [R]
  /// Temporal blocks (Block::src_trees): [T] each src node's tree, in src_nodes' order; else empty.
  std::vector<std::vector<int64_t>> src_trees;
};

/// Splits `block` of a typed graph (`hetero` well formed: check_hetero_view). O(num_src log T +
/// num_edges). Throws InvalidArgument for an empty view, edge_types without one entry per edge, or
/// an edge whose relation's types are not its nodes' types.
HeteroBlock split_block(const Block& block, const graph::HeteroView& hetero);

}  // namespace graphtier::sample
