// The JSON of a conversion's report: one writer for `graphtier convert --json` and graphtier.convert.
#include <nlohmann/json.hpp>

#include "graphtier/graph_convert/convert.hpp"
#include "topology_json.hpp"

namespace graphtier::graph {

std::string report_json(const ConvertReport& r) {
  nlohmann::ordered_json j;
  j["dataset"] = r.dataset;
  j["format"] = r.format;
  j["input_edges"] = r.input_edges;
  detail::put_topology_report(j, r);
  j["feature_dim"] = r.feature_dim;
  j["feature_dtype"] = dtype_name(r.feature_dtype);
  j["alignment"] = r.alignment;
  j["row_stride"] = r.row_stride;
  j["num_classes"] = r.num_classes;
  j["num_labeled"] = r.num_labeled;
  j["splits"] = {{"train", r.num_train}, {"valid", r.num_valid}, {"test", r.num_test}};
  if (r.num_node_types > 0) {
    j["node_types"] = r.num_node_types;
    j["relations"] = r.num_relations;
    j["type_feature_tables"] = r.type_feature_tables;
    j["added_reverses"] = r.added_reverses;
  }
  j["total_bytes"] = r.total_bytes;
  j["seconds"] = {{"topology", r.topology_seconds}, {"features", r.features_seconds}, {"total", r.total_seconds}};
  return j.dump(2);
}

}  // namespace graphtier::graph
