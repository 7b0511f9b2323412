// The JSON of a generation's report (`graphtier generate --json`).
#include <nlohmann/json.hpp>

#include "graphtier/graph_generate/generate.hpp"
#include "graphtier/graph/dataset.hpp"
#include "topology_json.hpp"

namespace graphtier::graph {

std::string report_json(const std::string& dir, const GenerateOptions& o, const GenerateReport& r) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["dataset"] = dir;
  j["requested_edges"] = r.requested_edges;
  detail::put_topology_report(j, r);
  if (o.schema) {
    // Typed: the schema as generated (reverse relations under their relation).
    Json& types = j["node_types"] = Json::array();
    for (const NodeTypeSpec& t : o.schema->node_types) {
      const auto layout = FeatureLayout::make(t.feature_dim, t.feature_dtype, o.alignment);
      types.push_back({{"name", t.name}, {"count", t.count}, {"feature_dim", t.feature_dim},
                       {"feature_dtype", dtype_name(t.feature_dtype)}, {"row_stride", layout.row_stride}});
    }
    Json& relations = j["relations"] = Json::array();
    for (const RelationSpec& rel : o.schema->relations) {
      relations.push_back({{"name", rel.src + ":" + rel.name + ":" + rel.dst},
                           {"degree", rel.degree},
                           {"reverse", rel.reverse.empty() ? Json() : Json(rel.dst + ":" + rel.reverse + ":" + rel.src)}});
    }
    j["labelled_type"] = o.schema->labelled_type;
    j["num_classes"] = o.schema->num_classes;
    j["homophily"] = o.homophily;
  } else {
    j["undirected"] = o.undirected;
    j["num_classes"] = o.num_classes;
    j["homophily"] = o.homophily;
    j["measured_homophily"] = r.measured_homophily;
    j["time_steps"] = o.time_steps;
  }
  j["class_separation"] = o.class_separation;
  j["rmat"] = {o.rmat.a, o.rmat.b, o.rmat.c, o.rmat.d()};
  j["seed"] = o.seed;
  if (!o.schema) {
    const auto layout = FeatureLayout::make(o.feature_dim, o.feature_dtype, o.alignment);
    j["feature_dim"] = o.feature_dim;
    j["feature_dtype"] = dtype_name(o.feature_dtype);
    j["alignment"] = o.alignment;
    j["row_stride"] = layout.row_stride;
  } else {
    j["alignment"] = o.alignment;
  }
  j["splits"] = {{"train", r.num_train}, {"valid", r.num_valid}, {"test", r.num_test}};
  j["total_bytes"] = r.total_bytes;
  j["seconds"] = {{"topology", r.topology_seconds},
                  {"labels_and_splits", r.nodes_seconds},
                  {"features", r.feature_seconds},
                  {"total", r.total_seconds}};
  j["edges_per_second"] = r.topology_seconds > 0 ? static_cast<double>(r.requested_edges) / r.topology_seconds : 0.0;
  j["feature_bytes_per_second"] = r.feature_seconds > 0 ? static_cast<double>(r.feature_bytes) / r.feature_seconds : 0.0;
  return j.dump(2);
}

}  // namespace graphtier::graph
