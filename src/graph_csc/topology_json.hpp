// The topology fields that the JSON of a conversion's and a generation's report share
// (report_json in convert.hpp and generate.hpp), written by one function so the two name them
// alike; graph::TopologyReport, which the CSC builder fills, is their one home.
#pragma once

#include <nlohmann/json.hpp>

#include "graphtier/graph/topology_report.hpp"

namespace graphtier::graph::detail {

inline void put_topology_report(nlohmann::ordered_json& j, const graph::TopologyReport& r) {
  j["num_nodes"] = r.num_nodes;
  j["num_edges"] = r.num_edges;
  j["self_loops_removed"] = r.self_loops_removed;
  j["duplicates_removed"] = r.duplicates_removed;
  j["isolated_nodes"] = r.isolated_nodes;
  j["max_in_degree"] = r.max_in_degree;
  j["topology_passes"] = r.topology_passes;
}

}  // namespace graphtier::graph::detail
