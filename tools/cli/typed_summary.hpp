// The node types and relations of a typed dataset as `graphtier info` and `graphtier verify`
// print them: per type its id range, node count and feature table; per relation its edge count
// and reverse. Nothing is printed for a homogeneous dataset.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "graphtier/graph/dataset.hpp"

namespace graphtier::cli {

/// {"node_types": [...], "relations": [...], "labelled_type": ...}; `edges_per_relation` as
/// graph::edges_per_relation gives it.
nlohmann::ordered_json typed_json(const graph::Dataset& dataset, const std::vector<int64_t>& edges_per_relation);

/// One line per type and per relation, indented, on stdout.
void print_typed(const graph::Dataset& dataset, const std::vector<int64_t>& edges_per_relation);

}  // namespace graphtier::cli
