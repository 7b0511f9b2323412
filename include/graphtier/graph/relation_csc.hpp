// One relation of a typed graph as its own CSC, in the ids of its two node types: what PyG's
// GraphStore holds per edge type (src_type, rel, dst_type), and what the graph-store adapter
// (python/graphtier/pyg_store.py) hands to PyG.
#pragma once

#include <cstdint>
#include <vector>

#include "graphtier/graph/csc_view.hpp"
#include "graphtier/graph/hetero_view.hpp"

namespace graphtier::graph {

/// Relation r's edges: column j (node node_type_offset[dst_type] + j) holds the sources
/// indices[indptr[j] : indptr[j + 1]], ids within the source type, in the order of the typed CSC
/// (its edges of r are one segment of its column, hetero_view.hpp); edge_ids[k] is edge k's
/// position in the typed CSC (PyG's e_id). indptr is int64 [nodes of dst_type + 1].
struct RelationCsc {
  std::vector<int64_t> indptr;
  std::vector<int64_t> indices;
  std::vector<int64_t> edge_ids;
};

/// Relation `relation` of `csc` typed by `types` (checked by Dataset::open or hetero_problem).
/// Throws OutOfRange when `relation` is not one of the view's. O(N_dst log(deg) + E_r).
RelationCsc relation_csc(const CscView& csc, const HeteroView& types, int32_t relation);

}  // namespace graphtier::graph
