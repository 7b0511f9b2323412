// Typed layout and topology of per-relation inputs (convert_typed.hpp).
#include "convert_typed.hpp"

#include <chrono>
#include <set>

#include "graphtier/core/error.hpp"

namespace graphtier::graph::detail {

using ::graphtier::detail::concat;

void write_typed_input_topology(ConvertSession& session, const std::string& source, const std::vector<std::string>& types,
                                const std::vector<int64_t>& counts, const std::vector<RelationInput>& relations) {
  const ConvertOptions& options = session.options();
  GRAPHTIER_EXPECTS(!options.symmetrize, InvalidArgument,
                    "--symmetrize is not for typed inputs: every relation gets its reverse, rev_<relation>");
  GRAPHTIER_EXPECTS(!options.num_nodes, InvalidArgument,
                    "--num-nodes is not for typed inputs: each node type's count comes from the input");
  HeteroSchema& schema = session.manifest().hetero;
  schema = HeteroSchema{};
  schema.node_type_offset = {0};
  for (std::size_t t = 0; t < types.size(); ++t) {
    if (!is_valid_type_name(types[t])) {
      throw FormatError(source, concat("node type '", ::graphtier::detail::printable(types[t]),
                                       "' is not a name of 1 to 64 of A-Z a-z 0-9 _"));
    }
    if (schema.find_node_type(types[t]) >= 0) throw FormatError(source, concat("node type ", types[t], " is listed twice"));
    if (counts[t] < 0 || counts[t] >= kMaxNodes - schema.node_type_offset.back()) {
      throw FormatError(source, concat("node type ", types[t], " has ", counts[t], " nodes"));
    }
    schema.node_types.push_back({types[t], {}});
    schema.node_type_offset.push_back(schema.node_type_offset.back() + counts[t]);
  }
  if (2 * relations.size() > static_cast<std::size_t>(kMaxRelations)) {
    throw FormatError(source, concat(relations.size(), " relations and their reverses are more than ", kMaxRelations));
  }
  const auto num_forward = static_cast<int>(relations.size());
  std::vector<TypedEdgeInput> inputs;
  std::set<std::string> names;
  for (int r = 0; r < num_forward; ++r) {
    const RelationInput& in = relations[static_cast<std::size_t>(r)];
    const std::string name = concat(in.src, ":", in.name, ":", in.dst);
    const int32_t s = schema.find_node_type(in.src), d = schema.find_node_type(in.dst);
    if (!is_valid_type_name(in.name)) {
      throw FormatError(in.edges->name(), concat("relation name '", ::graphtier::detail::printable(in.name),
                                                 "' is not a name of 1 to 64 of A-Z a-z 0-9 _"));
    }
    if (s < 0 || d < 0) {
      throw FormatError(in.edges->name(), concat("relation ", name, " joins node type ", s < 0 ? in.src : in.dst,
                                                 ", which ", source, " does not list"));
    }
    if (!names.insert(name).second) throw FormatError(in.edges->name(), concat("relation ", name, " is listed twice"));
    schema.relations.push_back({in.name, {s, d}, num_forward + r});
    TypedEdgeInput typed;
    typed.edges = in.edges.get();
    typed.relation = r;
    typed.reverse = num_forward + r;
    typed.src_type = in.src;
    typed.dst_type = in.dst;
    typed.src_offset = schema.node_type_offset[static_cast<std::size_t>(s)];
    typed.src_count = schema.num_nodes_of(s);
    typed.dst_offset = schema.node_type_offset[static_cast<std::size_t>(d)];
    typed.dst_count = schema.num_nodes_of(d);
    inputs.push_back(typed);
  }
  for (int r = 0; r < num_forward; ++r) {
    const RelationEntry forward = schema.relations[static_cast<std::size_t>(r)];
    const std::string reverse = kReversePrefix + forward.name;
    const std::string& src = relations[static_cast<std::size_t>(r)].src;
    const std::string& dst = relations[static_cast<std::size_t>(r)].dst;
    if (reverse.size() > 64 || !names.insert(concat(dst, ":", reverse, ":", src)).second) {
      throw FormatError(source, concat("the reverse of relation ", src, ":", forward.name, ":", dst, ", ", dst, ":",
                                       reverse, ":", src, ", cannot be added: its name is ",
                                       reverse.size() > 64 ? "longer than 64 characters" : "taken by another relation"));
    }
    schema.relations.push_back({reverse, {forward.types.dst_type, forward.types.src_type}, r});
  }
  const auto start = std::chrono::steady_clock::now();
  const CscResult result = write_typed_csc(session.writer(), inputs, schema.node_type_offset.back(),
                                           options.keep_self_loops, options.memory_budget, session.pool());
  session.topology_written(result, seconds_since(start));
}

}  // namespace graphtier::graph::detail
