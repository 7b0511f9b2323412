// Dataset::open's checks of a typed dataset's arrays (docs/format.md, Heterogeneous datasets).
// One pass over the edges, column by column: the column's type is known from node_type_offset
// without a search, and each edge costs a compare or two.
#include "hetero_validate.hpp"

#include <variant>

#include "graphtier/core/error.hpp"

namespace graphtier::graph::detail_manifest {

namespace {

template <typename Index>
void check_edges(const HeteroSchema& s, std::span<const int64_t> indptr, std::span<const Index> indices,
                 std::span<const uint8_t> type_per_edge, const std::string& path) {
  const int32_t num_relations = s.num_relations();
  int32_t column_type = 0;
  const int64_t num_nodes = static_cast<int64_t>(indptr.size()) - 1;
  for (int64_t v = 0; v < num_nodes; ++v) {
    while (v >= s.node_type_offset[static_cast<std::size_t>(column_type) + 1]) ++column_type;
    int32_t previous = 0;
    for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
      const int32_t r = type_per_edge[static_cast<std::size_t>(e)];
      if (r >= num_relations) {
        throw FormatError(path, detail::concat("relation ", r, " of edge ", e, " (column ", v, ") is out of range [0, ",
                                               num_relations, ")"));
      }
      if (r < previous) {
        throw FormatError(path, detail::concat("edges of column ", v, " are not sorted by relation: edge ", e,
                                               " has relation ", r, " after ", previous));
      }
      previous = r;
      const RelationTypes types = s.relations[static_cast<std::size_t>(r)].types;
      if (types.dst_type != column_type) {
        throw FormatError(path, detail::concat("edge ", e, " of relation ", s.relation_name(r), " ends at node ", v,
                                               " of type ", s.node_types[static_cast<std::size_t>(column_type)].name,
                                               ", not of type ",
                                               s.node_types[static_cast<std::size_t>(types.dst_type)].name));
      }
      const auto u = static_cast<int64_t>(indices[static_cast<std::size_t>(e)]);
      if (u < s.node_type_offset[static_cast<std::size_t>(types.src_type)] ||
          u >= s.node_type_offset[static_cast<std::size_t>(types.src_type) + 1]) {
        throw FormatError(path, detail::concat("edge ", e, " of relation ", s.relation_name(r), " starts at node ", u,
                                               " of type ", s.node_types[static_cast<std::size_t>(s.type_of(u))].name,
                                               ", not of type ",
                                               s.node_types[static_cast<std::size_t>(types.src_type)].name));
      }
    }
  }
}

}  // namespace

void check_type_per_edge(const HeteroSchema& schema, std::span<const int64_t> indptr, const IndexSpan& indices,
                         std::span<const uint8_t> type_per_edge, const std::string& path) {
  std::visit([&](auto span) { check_edges(schema, indptr, span, type_per_edge, path); }, indices);
}

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
