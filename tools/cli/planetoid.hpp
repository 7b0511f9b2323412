// The Python half of `graphtier convert planetoid`. The Planetoid pickles are Python objects
// (scipy sparse matrices, numpy arrays, a defaultdict), so python/graphtier/convert/planetoid.py
// extracts them into .npy files, which the library's converter (graph::convert_planetoid_arrays)
// turns into a dataset. The script, not this file, holds PyG's semantics; the library runs no
// Python and does not know where the script lives: finding and running it happens here.
#pragma once

#include <string>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::cli {

struct PlanetoidInput {
  std::string root;                // directory holding ind.<name>.*
  std::string name;                // cora, citeseer or pubmed
  std::string python;              // interpreter (looked up on PATH); empty: default_python() (executable.hpp)
};

/// How to run the extraction script: the command line up to its own arguments.
struct PlanetoidScript {
  std::vector<std::string> command;  // {python, path} or {python, "-m", module}
  std::string shown;                 // for messages: the path or "-m module"
};


/// Finds planetoid.py, first match wins: $GRAPHTIER_PYTHON_DIR/graphtier/convert/planetoid.py;
/// beside this executable, in a build tree (<repo>/build/<preset>/graphtier:
/// <repo>/python/graphtier/convert/) or an install tree (<prefix>/bin/graphtier:
/// <prefix>/share/graphtier/python/graphtier/convert/); else `python -m graphtier.convert.planetoid`
/// when `python` can import the graphtier package. Throws Unsupported naming every place tried.
PlanetoidScript find_planetoid_script(const std::string& python);

/// Extracts `input` with the script into a scratch directory beside `out` (removed on success, on
/// failure and on an interrupt, docs/architecture.md Errors; a killed run's leftover is removed by
/// the next writer of `out`, as the dataset writer's own temporaries are) and converts the arrays.
/// The script's process never outlives this one. Throws InvalidArgument before running
/// anything when `out` exists without options.overwrite, Unsupported when python3, numpy or
/// scipy is missing, FormatError when the script rejects the input.
graph::ConvertReport convert_planetoid(const PlanetoidInput& input, const std::string& out,
                                       const graph::ConvertOptions& options, ThreadPool& pool);

}  // namespace graphtier::cli
