// Dataset::open's checks of a typed dataset's arrays against its "hetero" section.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "graphtier/graph/dataset.hpp"

namespace graphtier::graph::detail_manifest {

/// Labels are -1 outside the labelled type; split ids lie inside it.
void check_labels_in_labelled_type(const HeteroSchema& schema, std::span<const int32_t> labels, const std::string& path);
void check_split_in_labelled_type(const HeteroSchema& schema, std::span<const int64_t> ids, const std::string& path);

}  // namespace graphtier::graph::detail_manifest
