#include "graphtier/sample/hetero_block.hpp"

#include "graphtier/core/error.hpp"
#include "hetero_steps.hpp"

namespace graphtier::sample {

HeteroBlock split_block(const Block& block, const graph::HeteroView& hetero) {
  GRAPHTIER_EXPECTS(!hetero.empty(), InvalidArgument, "split_block: the graph has no node types");
  GRAPHTIER_EXPECTS(static_cast<int64_t>(block.edge_types.size()) == block.num_edges(), InvalidArgument,
                    "split_block: ", block.edge_types.size(), " edge types for ", block.num_edges(),
                    " edges (a block of a typed graph's sampler has one per edge)");
  const int types = hetero.num_node_types();
  const int relations = hetero.num_relations();
  // The view's node types and relations (O(T + R)); the edges' types are checked below.
  GRAPHTIER_EXPECTS(types >= 1 && hetero.node_type_offset.front() == 0, InvalidArgument,
                    "split_block: node_type_offset must start at 0 and name at least one type");
  for (int t = 0; t < types; ++t) {
    GRAPHTIER_EXPECTS(hetero.node_type_offset[t] <= hetero.node_type_offset[t + 1], InvalidArgument,
                      "split_block: node_type_offset decreases at type ", t);
  }
  for (int r = 0; r < relations; ++r) {
    const graph::RelationTypes rel = hetero.relations[r];
    GRAPHTIER_EXPECTS(rel.src_type >= 0 && rel.src_type < types && rel.dst_type >= 0 && rel.dst_type < types,
                      InvalidArgument, "split_block: relation ", r, " goes from type ", rel.src_type, " to type ",
                      rel.dst_type, ", outside the ", types, " node types");
  }
  HeteroBlock out;
  out.num_dst.assign(static_cast<std::size_t>(types), 0);
  out.src_nodes.resize(static_cast<std::size_t>(types));
  // Each src node's type and position in its type's list; dst nodes come first in the block, so
  // they are the prefix of their type's list.
  std::vector<int32_t> type_of(static_cast<std::size_t>(block.num_src()));
  std::vector<int64_t> position(static_cast<std::size_t>(block.num_src()));
  for (int64_t i = 0; i < block.num_src(); ++i) {
    const int64_t v = block.src_nodes[i];
    GRAPHTIER_EXPECTS(v >= 0 && v < hetero.node_type_offset.back(), InvalidArgument, "split_block: node ", v,
                      " is outside the types' ids [0, ", hetero.node_type_offset.back(), ")");
    const int t = typed::node_type_of(hetero.node_type_offset.data(), types, v);
    std::vector<int64_t>& nodes = out.src_nodes[t];
    type_of[i] = t;
    position[i] = static_cast<int64_t>(nodes.size());
    nodes.push_back(v);
    if (i < block.num_dst) ++out.num_dst[t];
  }
  if (!block.src_trees.empty()) {
    out.src_trees.resize(static_cast<std::size_t>(types));
    for (int64_t i = 0; i < block.num_src(); ++i) out.src_trees[type_of[i]].push_back(block.src_trees[i]);
  }
  out.relations.resize(static_cast<std::size_t>(relations));
  for (int r = 0; r < relations; ++r) {
    out.relations[r].indptr.assign(static_cast<std::size_t>(out.num_dst[hetero.relations[r].dst_type] + 1), 0);
  }
  // Count each dst node's edges per relation (checking the types), then place them in block order.
  for (int64_t i = 0; i < block.num_dst; ++i) {
    for (int64_t e = block.indptr[i]; e < block.indptr[i + 1]; ++e) {
      const int r = block.edge_types[e];
      GRAPHTIER_EXPECTS(r < relations, InvalidArgument, "split_block: edge ", e, " has relation ", r, " of ",
                        relations);
      const graph::RelationTypes rel = hetero.relations[r];
      const int64_t u = block.indices[e];
      GRAPHTIER_EXPECTS(rel.dst_type == type_of[i] && rel.src_type == type_of[u], InvalidArgument, "split_block: edge ",
                        e, " of relation ", r, " (type ", rel.src_type, " -> ", rel.dst_type, ") goes from type ",
                        type_of[u], " to type ", type_of[i]);
      ++out.relations[r].indptr[position[i] + 1];
    }
  }
  for (RelationBlock& rb : out.relations) {
    for (std::size_t k = 1; k < rb.indptr.size(); ++k) rb.indptr[k] += rb.indptr[k - 1];
    rb.indices.resize(static_cast<std::size_t>(rb.num_edges()));
    rb.block_edges.resize(static_cast<std::size_t>(rb.num_edges()));
  }
  std::vector<std::vector<int64_t>> next(static_cast<std::size_t>(relations));
  for (int r = 0; r < relations; ++r) next[r].assign(out.relations[r].indptr.begin(), out.relations[r].indptr.end() - 1);
  for (int64_t i = 0; i < block.num_dst; ++i) {
    for (int64_t e = block.indptr[i]; e < block.indptr[i + 1]; ++e) {
      const int r = block.edge_types[e];
      const int64_t slot = next[r][position[i]]++;
      out.relations[r].indices[slot] = position[block.indices[e]];
      out.relations[r].block_edges[slot] = e;
    }
  }
  return out;
}

}  // namespace graphtier::sample
