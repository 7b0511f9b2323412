// Types and relations of a typed dataset for `info` and `verify` (typed_summary.hpp).
#include "typed_summary.hpp"

#include <cstdio>
#include <string>

namespace graphtier::cli {

namespace {

std::string feature_text(const graph::FeatureLayout& f) {
  if (f.dim == 0) return "no features";
  return std::to_string(f.dim) + " x " + std::string(dtype_name(f.dtype)) + ", row stride " +
         std::to_string(f.row_stride) + " B";
}

}  // namespace

nlohmann::ordered_json typed_json(const graph::Dataset& dataset, const std::vector<int64_t>& edges_per_relation) {
  const graph::HeteroSchema& s = dataset.schema();
  nlohmann::ordered_json types = nlohmann::ordered_json::array();
  for (int32_t t = 0; t < s.num_node_types(); ++t) {
    const graph::NodeTypeEntry& type = s.node_types[static_cast<std::size_t>(t)];
    types.push_back({{"name", type.name},
                     {"begin", s.node_type_offset[static_cast<std::size_t>(t)]},
                     {"end", s.node_type_offset[static_cast<std::size_t>(t) + 1]},
                     {"num_nodes", s.num_nodes_of(t)},
                     {"feature_dim", type.features.dim},
                     {"feature_dtype", dtype_name(type.features.dtype)},
                     {"row_stride", type.features.row_stride}});
  }
  nlohmann::ordered_json relations = nlohmann::ordered_json::array();
  for (int32_t r = 0; r < s.num_relations(); ++r) {
    const int32_t reverse = s.relations[static_cast<std::size_t>(r)].reverse;
    relations.push_back({{"name", s.relation_name(r)},
                         {"num_edges", edges_per_relation.at(static_cast<std::size_t>(r))},
                         {"reverse", reverse < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s.relation_name(reverse))}});
  }
  return {{"node_types", types},
          {"relations", relations},
          {"labelled_type", s.labelled_type < 0 ? nlohmann::ordered_json(nullptr)
                                                : nlohmann::ordered_json(s.node_types[static_cast<std::size_t>(s.labelled_type)].name)}};
}

void print_typed(const graph::Dataset& dataset, const std::vector<int64_t>& edges_per_relation) {
  const graph::HeteroSchema& s = dataset.schema();
  if (s.empty()) return;
  std::printf("node types %d%s\n", s.num_node_types(),
              s.labelled_type < 0 ? "" : (" (labelled: " + s.node_types[static_cast<std::size_t>(s.labelled_type)].name + ")").c_str());
  for (int32_t t = 0; t < s.num_node_types(); ++t) {
    const graph::NodeTypeEntry& type = s.node_types[static_cast<std::size_t>(t)];
    std::printf("  %-20s %lld nodes, ids [%lld, %lld), %s\n", type.name.c_str(),
                static_cast<long long>(s.num_nodes_of(t)), static_cast<long long>(s.node_type_offset[static_cast<std::size_t>(t)]),
                static_cast<long long>(s.node_type_offset[static_cast<std::size_t>(t) + 1]), feature_text(type.features).c_str());
  }
  std::printf("relations  %d\n", s.num_relations());
  for (int32_t r = 0; r < s.num_relations(); ++r) {
    const int32_t reverse = s.relations[static_cast<std::size_t>(r)].reverse;
    std::printf("  %-30s %lld edges%s\n", s.relation_name(r).c_str(),
                static_cast<long long>(edges_per_relation.at(static_cast<std::size_t>(r))),
                reverse < 0 ? "" : (", reverse " + s.relation_name(reverse)).c_str());
  }
}

}  // namespace graphtier::cli
