// The re-check of a conversion the directory-layout targets share: the dataset a converter
// committed opens (Dataset::open validates every array) and holds what its report says.
#pragma once

#include <string>

#include "fuzz_common.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::fuzz {

inline void check_converted(const graph::ConvertReport& report, const std::string& out) {
  try {
    const auto ds = graph::Dataset::open(out);
    require(ds.num_nodes() == report.num_nodes && ds.num_edges() == report.num_edges,
            "converted dataset disagrees with the report");
    require(!ds.has_labels() || static_cast<int64_t>(ds.labels().size()) == ds.num_nodes(),
            "label count is not the node count");
  } catch (const std::exception& e) {
    fail(std::string("a converted dataset does not open: ") + e.what());
  }
}

}  // namespace graphtier::fuzz
