// Dataset::open's checks of a typed dataset's arrays against its "hetero" section.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "graphtier/graph/dataset.hpp"

namespace graphtier::graph::detail_manifest {

/// Every edge's relation is < R, the relations never decrease within a column, every source lies
/// in its relation's source-type range and every column in its destination-type range. Throws
/// FormatError naming `path` (type_per_edge.bin), the edge and the problem. indptr and indices
/// have been validated already.
void check_type_per_edge(const HeteroSchema& schema, std::span<const int64_t> indptr, const IndexSpan& indices,
                         std::span<const uint8_t> type_per_edge, const std::string& path);

/// Labels are -1 outside the labelled type; split ids lie inside it.
void check_labels_in_labelled_type(const HeteroSchema& schema, std::span<const int32_t> labels, const std::string& path);
void check_split_in_labelled_type(const HeteroSchema& schema, std::span<const int64_t> ids, const std::string& path);

}  // namespace graphtier::graph::detail_manifest
