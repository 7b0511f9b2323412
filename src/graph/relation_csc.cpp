#include "graphtier/graph/relation_csc.hpp"

#include <algorithm>
#include <variant>

#include "graphtier/core/error.hpp"

namespace graphtier::graph {

RelationCsc relation_csc(const CscView& csc, const HeteroView& types, int32_t relation) {
  GRAPHTIER_EXPECTS(relation >= 0 && relation < types.num_relations(), OutOfRange, "relation ", relation,
                    " is not one of the graph's ", types.num_relations(), " relations");
  const RelationTypes rel = types.relations[static_cast<std::size_t>(relation)];
  const int64_t dst_begin = types.node_type_offset[static_cast<std::size_t>(rel.dst_type)];
  const int64_t dst_end = types.node_type_offset[static_cast<std::size_t>(rel.dst_type) + 1];
  const int64_t src_begin = types.node_type_offset[static_cast<std::size_t>(rel.src_type)];
  const auto r = static_cast<uint8_t>(relation);
  RelationCsc out;
  out.indptr.reserve(static_cast<std::size_t>(dst_end - dst_begin + 1));
  out.indptr.push_back(0);
  std::visit(
      [&](auto indices) {
        for (int64_t v = dst_begin; v < dst_end; ++v) {
          // The column's edges are sorted by relation: r's are the segment equal_range finds.
          const auto column = types.type_per_edge.subspan(static_cast<std::size_t>(csc.indptr[v]),
                                                          static_cast<std::size_t>(csc.in_degree(v)));
          const auto [first, last] = std::equal_range(column.begin(), column.end(), r);
          for (auto it = first; it != last; ++it) {
            const int64_t p = csc.indptr[v] + (it - column.begin());
            out.indices.push_back(static_cast<int64_t>(indices[static_cast<std::size_t>(p)]) - src_begin);
            out.edge_ids.push_back(p);
          }
          out.indptr.push_back(static_cast<int64_t>(out.indices.size()));
        }
      },
      csc.indices);
  return out;
}

}  // namespace graphtier::graph
