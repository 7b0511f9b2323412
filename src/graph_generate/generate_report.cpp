// The JSON of a generation's report (`graphtier generate --json`).
#include <nlohmann/json.hpp>

#include "graphtier/graph_generate/generate.hpp"
#include "graphtier/graph/dataset.hpp"
#include "topology_json.hpp"

namespace graphtier::graph {

std::string report_json(const std::string& dir, const GenerateOptions& o, const GenerateReport& r) {
  const auto layout = FeatureLayout::make(o.feature_dim, o.feature_dtype, o.alignment);
  nlohmann::ordered_json j;
  j["dataset"] = dir;
  j["requested_edges"] = r.requested_edges;
  detail::put_topology_report(j, r);
  j["undirected"] = o.undirected;
  j["num_classes"] = o.num_classes;
  j["homophily"] = o.homophily;
  j["measured_homophily"] = r.measured_homophily;
  j["class_separation"] = o.class_separation;
  j["rmat"] = {o.rmat.a, o.rmat.b, o.rmat.c, o.rmat.d()};
  j["seed"] = o.seed;
  j["feature_dim"] = o.feature_dim;
  j["feature_dtype"] = dtype_name(o.feature_dtype);
  j["alignment"] = o.alignment;
  j["row_stride"] = layout.row_stride;
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
