// The topology fields that `convert --json` and `generate --json` share, written by one function
// so the two reports name them alike (graph::TopologyReport is their one home in the library).
#pragma once

#include <nlohmann/json.hpp>

#include "graphtier/graph/topology_report.hpp"

namespace graphtier::cli {

inline void put_topology_report(nlohmann::ordered_json& j, const graph::TopologyReport& r) {
  j["num_nodes"] = r.num_nodes;
  j["num_edges"] = r.num_edges;
  j["self_loops_removed"] = r.self_loops_removed;
  j["duplicates_removed"] = r.duplicates_removed;
  j["isolated_nodes"] = r.isolated_nodes;
  j["max_in_degree"] = r.max_in_degree;
  j["topology_passes"] = r.topology_passes;
}

}  // namespace graphtier::cli
