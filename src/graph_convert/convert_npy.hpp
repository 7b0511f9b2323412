// The .npy-array converter with a caller-chosen format name and provenance, for converters that
// first extract their input into .npy files (Planetoid).
#pragma once

#include <string>

#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::graph::detail {

ConvertReport convert_npy_arrays(const NpyInput& input, const std::string& out, const ConvertOptions& options,
                                 ThreadPool& pool, const std::string& format, const std::string& source_description);

}  // namespace graphtier::graph::detail
