// The manifest's "hetero" section (docs/format.md, Heterogeneous datasets): node types as id
// ranges, relations `src:rel:dst` with their reverses, the labelled type, a feature table per type.
// Everything that can be checked without reading the arrays is checked here; Dataset::open checks
// the arrays against it (hetero_validate.cpp).
#include <algorithm>
#include <map>
#include <string>
#include <string_view>

#include "graphtier/core/error.hpp"
#include "graphtier/graph/dataset.hpp"
#include "manifest_fields.hpp"

namespace graphtier::graph {

bool is_valid_type_name(std::string_view name) {
  constexpr std::size_t kMaxLength = 64;
  if (name.empty() || name.size() > kMaxLength) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

int32_t HeteroSchema::type_of(int64_t v) const {
  // The first offset above v ends v's type; empty types share an offset and are skipped.
  const auto it = std::upper_bound(node_type_offset.begin(), node_type_offset.end(), v);
  return static_cast<int32_t>(it - node_type_offset.begin()) - 1;
}

std::string HeteroSchema::relation_name(int32_t r) const {
  const RelationEntry& rel = relations.at(static_cast<std::size_t>(r));
  return node_types.at(static_cast<std::size_t>(rel.types.src_type)).name + ":" + rel.name + ":" +
         node_types.at(static_cast<std::size_t>(rel.types.dst_type)).name;
}

int32_t HeteroSchema::find_node_type(std::string_view name) const {
  for (std::size_t t = 0; t < node_types.size(); ++t) {
    if (node_types[t].name == name) return static_cast<int32_t>(t);
  }
  return -1;
}

int32_t HeteroSchema::find_relation(std::string_view name) const {
  for (int32_t r = 0; r < num_relations(); ++r) {
    if (relation_name(r) == name) return r;
  }
  return -1;
}

std::string HeteroSchema::feature_array(std::string_view type_name) { return "features." + std::string(type_name); }

namespace detail_manifest {

namespace {

/// Splits "src:rel:dst" into its three parts; false unless there are exactly two colons.
bool split_relation(const std::string& text, std::string& src, std::string& rel, std::string& dst) {
  const auto a = text.find(':');
  if (a == std::string::npos) return false;
  const auto b = text.find(':', a + 1);
  if (b == std::string::npos || text.find(':', b + 1) != std::string::npos) return false;
  src = text.substr(0, a);
  rel = text.substr(a + 1, b - a - 1);
  dst = text.substr(b + 1);
  return true;
}

}  // namespace

HeteroSchema hetero_from_json(const Json& object, int64_t num_nodes, const std::string& path) {
  const Fields h(object, "hetero.", path);
  HeteroSchema s;
  auto fail = [&](auto&&... parts) -> FormatError {
    return FormatError(path, detail::concat("hetero.", parts...));
  };

  const Json& types = h.array("node_types");
  if (types.empty()) throw fail("node_types is empty (a typed dataset has at least one node type)");
  std::map<std::string, int32_t> type_ids;
  for (std::size_t t = 0; t < types.size(); ++t) {
    const std::string field = detail::concat("hetero.node_types[", t, "]");
    if (!types[t].is_object()) h.wrong(detail::concat("node_types[", t, "]"), "an object", types[t]);
    const Fields f(types[t], field + ".", path);
    NodeTypeEntry entry;
    entry.name = f.string("name");
    if (!is_valid_type_name(entry.name)) {
      throw FormatError(path, detail::concat(field, ".name '", detail::printable(entry.name),
                                             "' is not a valid type name (1 to 64 of A-Z a-z 0-9 _)"));
    }
    if (!type_ids.emplace(entry.name, static_cast<int32_t>(t)).second) {
      throw FormatError(path, detail::concat(field, ".name: node type '", entry.name, "' appears twice"));
    }
    s.node_types.push_back(std::move(entry));
  }

  const Json& offsets = h.array("node_type_offset");
  if (offsets.size() != types.size() + 1) {
    throw fail("node_type_offset has ", offsets.size(), " entries, expected ", types.size() + 1,
               " (one more than node_types)");
  }
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    const Json& v = offsets[i];
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))) {
      h.wrong(detail::concat("node_type_offset[", i, "]"), "a 64-bit integer", v);
    }
    s.node_type_offset.push_back(v.get<int64_t>());
  }
  if (s.node_type_offset.front() != 0) throw fail("node_type_offset[0] is ", s.node_type_offset.front(), ", expected 0");
  for (std::size_t i = 1; i < s.node_type_offset.size(); ++i) {
    if (s.node_type_offset[i] < s.node_type_offset[i - 1]) {
      throw fail("node_type_offset decreases at entry ", i, " (", s.node_type_offset[i - 1], " > ",
                 s.node_type_offset[i], ")");
    }
  }
  if (s.node_type_offset.back() != num_nodes) {
    throw fail("node_type_offset ends at ", s.node_type_offset.back(), ", expected num_nodes = ", num_nodes);
  }
  for (std::size_t t = 0; t < types.size(); ++t) {
    const Fields f(types[t], "", path);
    if (const Json* features = f.find("features"); features != nullptr) {
      const std::string field = detail::concat("hetero.node_types[", t, "].features");
      if (!features->is_object()) throw FormatError(path, detail::concat("field ", field, ": expected an object, got ",
                                                                         describe(*features)));
      s.node_types[t].features = feature_layout_from_json(*features, field, s.num_nodes_of(static_cast<int32_t>(t)), path);
    }
  }

  const Json& relations = h.array("relations");
  if (relations.size() > static_cast<std::size_t>(kMaxRelations)) {
    throw fail("relations has ", relations.size(), " entries, at most ", kMaxRelations,
               " (type_per_edge.bin holds one byte per edge)");
  }
  std::map<std::string, int32_t> relation_ids;
  std::vector<std::string> reverse_names(relations.size());
  for (std::size_t r = 0; r < relations.size(); ++r) {
    const std::string field = detail::concat("hetero.relations[", r, "]");
    if (!relations[r].is_object()) h.wrong(detail::concat("relations[", r, "]"), "an object", relations[r]);
    const Fields f(relations[r], field + ".", path);
    const std::string name = f.string("name");
    std::string src, rel, dst;
    if (!split_relation(name, src, rel, dst) || !is_valid_type_name(rel)) {
      throw FormatError(path, detail::concat(field, ".name '", detail::printable(name),
                                             "' is not written src:rel:dst (rel 1 to 64 of A-Z a-z 0-9 _)"));
    }
    for (const std::string* type : {&src, &dst}) {
      if (type_ids.count(*type) == 0) {
        throw FormatError(path, detail::concat(field, ".name '", name, "': no node type '", detail::printable(*type), "'"));
      }
    }
    RelationEntry entry;
    entry.name = rel;
    entry.types = RelationTypes{type_ids[src], type_ids[dst]};
    if (!relation_ids.emplace(name, static_cast<int32_t>(r)).second) {
      throw FormatError(path, detail::concat(field, ".name: relation '", name, "' appears twice"));
    }
    reverse_names[r] = f.string("reverse", "");
    s.relations.push_back(entry);
  }
  for (std::size_t r = 0; r < relations.size(); ++r) {
    if (reverse_names[r].empty()) continue;
    const auto it = relation_ids.find(reverse_names[r]);
    if (it == relation_ids.end()) {
      throw fail("relations[", r, "].reverse '", detail::printable(reverse_names[r]), "' is not a relation");
    }
    s.relations[r].reverse = it->second;
  }
  for (int32_t r = 0; r < s.num_relations(); ++r) {
    const RelationEntry& rel = s.relations[static_cast<std::size_t>(r)];
    if (rel.reverse < 0) continue;
    const RelationEntry& rev = s.relations[static_cast<std::size_t>(rel.reverse)];
    if (rev.reverse != r) {
      throw fail("relations[", r, "] (", s.relation_name(r), ") has reverse ", s.relation_name(rel.reverse),
                 " whose reverse is ", rev.reverse < 0 ? std::string("not set") : s.relation_name(rev.reverse),
                 " (the reverse map must be symmetric)");
    }
    if (rev.types.src_type != rel.types.dst_type || rev.types.dst_type != rel.types.src_type) {
      throw fail("relations[", r, "] (", s.relation_name(r), ") has reverse ", s.relation_name(rel.reverse),
                 " whose node types are not swapped");
    }
  }

  const std::string labelled = h.string("labelled_type", "");
  if (!labelled.empty()) {
    const auto it = type_ids.find(labelled);
    if (it == type_ids.end()) throw fail("labelled_type '", detail::printable(labelled), "' is not a node type");
    s.labelled_type = it->second;
  }
  return s;
}

nlohmann::ordered_json hetero_to_json(const HeteroSchema& s) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json types = nlohmann::ordered_json::array();
  for (const NodeTypeEntry& t : s.node_types) {
    nlohmann::ordered_json entry = {{"name", t.name}};
    if (t.features.dim > 0) entry["features"] = feature_layout_to_json(t.features);
    types.push_back(entry);
  }
  j["node_types"] = types;
  j["node_type_offset"] = s.node_type_offset;
  nlohmann::ordered_json relations = nlohmann::ordered_json::array();
  for (int32_t r = 0; r < s.num_relations(); ++r) {
    nlohmann::ordered_json entry = {{"name", s.relation_name(r)}};
    const int32_t reverse = s.relations[static_cast<std::size_t>(r)].reverse;
    if (reverse >= 0) entry["reverse"] = s.relation_name(reverse);
    relations.push_back(entry);
  }
  j["relations"] = relations;
  if (s.labelled_type >= 0) j["labelled_type"] = s.node_types[static_cast<std::size_t>(s.labelled_type)].name;
  return j;
}

}  // namespace detail_manifest

}  // namespace graphtier::graph
