// The library's half of Planetoid conversion: the .npy arrays that planetoid.py extracted from the
// pickles (the CLI finds and runs the script) become a dataset through the .npy converter, with
// the script's counts of what it read and removed in the report.
#include <fstream>
#include <nlohmann/json.hpp>

#include "convert_npy.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::graph {

ConvertReport convert_planetoid_arrays(const PlanetoidArrays& input, const std::string& out,
                                       const ConvertOptions& options, ThreadPool& pool) {
  using ::graphtier::detail::concat;
  GRAPHTIER_EXPECTS(!input.name.empty(), InvalidArgument, "Planetoid dataset name is required (cora, citeseer, pubmed)");
  const std::string meta_path = input.arrays + "/meta.json";
  std::ifstream meta_file(meta_path);
  if (!meta_file) throw FormatError(meta_path, "cannot be read (is this planetoid.py's output directory?)");
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(meta_file);
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(meta_path, e.what());
  }

  NpyInput npy;
  npy.edge_index = input.arrays + "/edge_index.npy";
  npy.edge_layout = EdgeLayout::kRows;
  npy.features = input.arrays + "/features.npy";
  npy.labels = input.arrays + "/labels.npy";
  npy.train = input.arrays + "/train.npy";
  npy.valid = input.arrays + "/valid.npy";
  npy.test = input.arrays + "/test.npy";
  ConvertOptions o = options;
  if (!o.num_classes) o.num_classes = meta.at("num_classes").get<int64_t>();
  if (o.name.empty()) o.name = input.name;
  ConvertReport report = detail::convert_npy_arrays(
      npy, out, o, pool, "planetoid",
      concat("graphtier convert planetoid: ", input.name, " from ", input.root,
             " (PyG read_planetoid_data semantics; unlabeled rows -1)"));
  // The script cleaned the adjacency lists; report what it read and removed.
  report.input_edges = meta.at("adjacency_entries").get<int64_t>();
  report.self_loops_removed = meta.at("self_loops_removed").get<int64_t>();
  report.duplicates_removed += meta.at("duplicates_removed").get<int64_t>();
  return report;
}

}  // namespace graphtier::graph
