#include "graphtier/sample/sample_graph.hpp"

#include "graphtier/core/error.hpp"
#include "graphtier/sample/random.hpp"
#include "cpu/compact_cpu.hpp"

namespace graphtier::sample {

void check_sample_graph(const SampleGraph& graph, const char* what) {
  graph.csc.check_shape(what);
  GRAPHTIER_EXPECTS(graph.csc.num_nodes() < kMaxSampleNodes, InvalidArgument, what,
                    ": the samplers address fewer than 2^40 nodes, the graph has ", graph.csc.num_nodes());
  if (!graph.hetero.empty()) check_hetero_view(graph.hetero, graph.csc, what);
}

void check_hetero_view(const graph::HeteroView& hetero, const graph::CscView& csc, const char* what) {
  const std::span<const int64_t> offset = hetero.node_type_offset;
  const int32_t types = hetero.num_node_types();
  const int32_t relations = hetero.num_relations();
  GRAPHTIER_EXPECTS(types >= 1, InvalidArgument, what, ": node_type_offset needs T + 1 >= 2 entries, has ",
                    offset.size());
  GRAPHTIER_EXPECTS(offset.front() == 0 && offset.back() == csc.num_nodes(), InvalidArgument, what,
                    ": node_type_offset must run from 0 to the ", csc.num_nodes(), " nodes, runs from ", offset.front(),
                    " to ", offset.back());
  for (int32_t t = 0; t < types; ++t) {
    GRAPHTIER_EXPECTS(offset[t] <= offset[t + 1], InvalidArgument, what, ": node_type_offset decreases at type ", t);
  }
  GRAPHTIER_EXPECTS(relations >= 1 && relations <= graph::kMaxRelations, InvalidArgument, what, ": ", relations,
                    " relations, expected 1 to ", graph::kMaxRelations);
  for (int32_t r = 0; r < relations; ++r) {
    const graph::RelationTypes rel = hetero.relations[r];
    GRAPHTIER_EXPECTS(rel.src_type >= 0 && rel.src_type < types && rel.dst_type >= 0 && rel.dst_type < types,
                      InvalidArgument, what, ": relation ", r, " goes from type ", rel.src_type, " to type ",
                      rel.dst_type, ", outside the ", types, " node types");
  }
  GRAPHTIER_EXPECTS(static_cast<int64_t>(hetero.type_per_edge.size()) == csc.num_edges(), InvalidArgument, what,
                    ": type_per_edge has ", hetero.type_per_edge.size(), " entries for ", csc.num_edges(), " edges");
  const uint8_t* type_of_edge = hetero.type_per_edge.data();
  for (int32_t t = 0; t < types; ++t) {
    for (int64_t v = offset[t]; v < offset[t + 1]; ++v) {
      const int64_t begin = csc.indptr[v], end = csc.indptr[v + 1];
      for (int64_t e = begin; e < end; ++e) {
        const int r = type_of_edge[e];
        GRAPHTIER_EXPECTS(r < relations, InvalidArgument, what, ": edge ", e, " has relation ", r, " of ", relations);
        GRAPHTIER_EXPECTS(e == begin || type_of_edge[e - 1] <= r, InvalidArgument, what, ": column ", v,
                          " is not sorted by relation at edge ", e, " (", static_cast<int>(type_of_edge[e - 1]),
                          " before ", r, ")");
        GRAPHTIER_EXPECTS(hetero.relations[r].dst_type == t, InvalidArgument, what, ": edge ", e, " of relation ", r,
                          " ends at node ", v, " of type ", t, ", the relation's dst type is ",
                          hetero.relations[r].dst_type);
      }
    }
  }
}

void check_seeds(std::span<const int64_t> seeds, int64_t num_nodes) {
  cpu::IdMap seen(static_cast<int64_t>(seeds.size()));
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    GRAPHTIER_EXPECTS(seeds[i] >= 0 && seeds[i] < num_nodes, OutOfRange, "seed ", seeds[i], " (position ", i,
                      ") is outside [0, ", num_nodes, ")");
    GRAPHTIER_EXPECTS(seen.find_or_insert(seeds[i], static_cast<int64_t>(i)) == static_cast<int64_t>(i), InvalidArgument, "seed ", seeds[i], " appears more than once");
  }
}

}  // namespace graphtier::sample
