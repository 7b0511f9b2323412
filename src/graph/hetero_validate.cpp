// Dataset::open's checks of a typed dataset's arrays (docs/format.md, Heterogeneous datasets).
// One pass over the edges, column by column: the column's type is known from node_type_offset
// without a search, and each edge costs a compare or two.
#include "hetero_validate.hpp"

#include "graphtier/graph/csc_view.hpp"

#include <algorithm>
#include <variant>

#include "graphtier/core/error.hpp"

namespace graphtier::graph {

namespace {

// Type and relation names for the messages: the schema's, or numbers.
struct Names {
  const HeteroSchema* schema;
  std::string type(int32_t t) const {
    return schema != nullptr ? schema->node_types[static_cast<std::size_t>(t)].name : detail::concat(t);
  }
  std::string relation(int32_t r) const {
    return schema != nullptr ? schema->relation_name(r) : detail::concat(r);
  }
};

// The type holding node u (offsets non-decreasing, u in [0, N)).
int32_t type_of(std::span<const int64_t> offset, int64_t u) {
  return static_cast<int32_t>(std::upper_bound(offset.begin(), offset.end(), u) - offset.begin()) - 1;
}

template <typename Index>
std::string edges_problem(const HeteroView& view, std::span<const int64_t> indptr, std::span<const Index> indices,
                          const Names& names) {
  const std::span<const int64_t> offset = view.node_type_offset;
  const int32_t num_relations = view.num_relations();
  int32_t column_type = 0;
  const int64_t num_nodes = static_cast<int64_t>(indptr.size()) - 1;
  for (int64_t v = 0; v < num_nodes; ++v) {
    while (v >= offset[static_cast<std::size_t>(column_type) + 1]) ++column_type;
    int32_t previous = 0;
    for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
      const int32_t r = view.type_per_edge[static_cast<std::size_t>(e)];
      if (r >= num_relations) {
        return detail::concat("relation ", r, " of edge ", e, " (column ", v, ") is out of range [0, ", num_relations,
                              ")");
      }
      if (r < previous) {
        return detail::concat("edges of column ", v, " are not sorted by relation: edge ", e, " has relation ", r,
                              " after ", previous);
      }
      previous = r;
      const RelationTypes types = view.relations[static_cast<std::size_t>(r)];
      if (types.dst_type != column_type) {
        return detail::concat("edge ", e, " of relation ", names.relation(r), " ends at node ", v, " of type ",
                              names.type(column_type), ", not of type ", names.type(types.dst_type));
      }
      const auto u = static_cast<int64_t>(indices[static_cast<std::size_t>(e)]);
      if (u < offset[static_cast<std::size_t>(types.src_type)] ||
          u >= offset[static_cast<std::size_t>(types.src_type) + 1]) {
        return detail::concat("edge ", e, " of relation ", names.relation(r), " starts at node ", u, " of type ",
                              names.type(type_of(offset, u)), ", not of type ", names.type(types.src_type));
      }
    }
  }
  return {};
}

}  // namespace

std::string hetero_problem(const HeteroView& view, const CscView& csc, const HeteroSchema* names) {
  const std::span<const int64_t> offset = view.node_type_offset;
  const int32_t types = view.num_node_types();
  if (types < 1) return detail::concat("node_type_offset needs T + 1 >= 2 entries, has ", offset.size());
  if (offset.front() != 0 || offset.back() != csc.num_nodes()) {
    return detail::concat("node_type_offset must run from 0 to the ", csc.num_nodes(), " nodes, runs from ",
                          offset.front(), " to ", offset.back());
  }
  for (int32_t t = 0; t < types; ++t) {
    if (offset[static_cast<std::size_t>(t)] > offset[static_cast<std::size_t>(t) + 1]) {
      return detail::concat("node_type_offset decreases at type ", t);
    }
  }
  const int32_t relations = view.num_relations();
  if (relations < 1 || relations > kMaxRelations) {
    return detail::concat(relations, " relations, expected 1 to ", kMaxRelations);
  }
  for (int32_t r = 0; r < relations; ++r) {
    const RelationTypes rel = view.relations[static_cast<std::size_t>(r)];
    if (rel.src_type < 0 || rel.src_type >= types || rel.dst_type < 0 || rel.dst_type >= types) {
      return detail::concat("relation ", r, " goes from type ", rel.src_type, " to type ", rel.dst_type,
                            ", outside the ", types, " node types");
    }
  }
  if (static_cast<int64_t>(view.type_per_edge.size()) != csc.num_edges()) {
    return detail::concat("type_per_edge has ", view.type_per_edge.size(), " entries for ", csc.num_edges(), " edges");
  }
  const Names n{names};
  return std::visit([&](auto span) { return edges_problem(view, csc.indptr, span, n); }, csc.indices);
}

}  // namespace graphtier::graph

namespace graphtier::graph::detail_manifest {

void check_labels_in_labelled_type(const HeteroSchema& s, std::span<const int32_t> labels, const std::string& path) {
  const int64_t begin = s.node_type_offset[static_cast<std::size_t>(s.labelled_type)];
  const int64_t end = s.node_type_offset[static_cast<std::size_t>(s.labelled_type) + 1];
  for (std::size_t v = 0; v < labels.size(); ++v) {
    const auto id = static_cast<int64_t>(v);
    if (labels[v] != -1 && (id < begin || id >= end)) {
      throw FormatError(path, detail::concat("node ", id, " of type ", s.node_types[static_cast<std::size_t>(s.type_of(id))].name,
                                             " has label ", labels[v], ", but only type ",
                                             s.node_types[static_cast<std::size_t>(s.labelled_type)].name,
                                             " is labelled (expected -1)"));
    }
  }
}

void check_split_in_labelled_type(const HeteroSchema& s, std::span<const int64_t> ids, const std::string& path) {
  if (ids.empty()) return;
  if (s.labelled_type < 0) {
    throw FormatError(path, "a typed dataset's split needs hetero.labelled_type (the type its ids belong to)");
  }
  const int64_t begin = s.node_type_offset[static_cast<std::size_t>(s.labelled_type)];
  const int64_t end = s.node_type_offset[static_cast<std::size_t>(s.labelled_type) + 1];
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < begin || ids[i] >= end) {
      throw FormatError(path, detail::concat("node ", ids[i], " at position ", i, " is of type ",
                                             s.node_types[static_cast<std::size_t>(s.type_of(ids[i]))].name,
                                             ", not of the labelled type ",
                                             s.node_types[static_cast<std::size_t>(s.labelled_type)].name, " [", begin,
                                             ", ", end, ")"));
    }
  }
}

}  // namespace graphtier::graph::detail_manifest
