// Front door of .npy-array conversion (also the second half of the Planetoid converter).
#include "convert_npy.hpp"

#include "convert_session.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::graph {
namespace detail {

ConvertReport convert_npy_arrays(const NpyInput& input, const std::string& out, const ConvertOptions& options,
                                 ThreadPool& pool, const std::string& format, const std::string& source_description) {
  GRAPHTIER_EXPECTS(!input.edge_index.empty(), InvalidArgument, "an edge_index array is required");
  const NpyArray edge_index = NpyArray::open(file_source(input.edge_index));
  npy_edge_count(edge_index, input.edge_layout);  // shape errors before anything is written
  std::optional<NpyArray> features, labels;
  std::optional<int64_t> num_nodes = options.num_nodes;
  std::string num_nodes_from;  // the input that set num_nodes, when not the options
  if (!input.features.empty()) {
    features = NpyArray::open(file_source(input.features));
    if (features->ndim() != 2) {
      throw FormatError(input.features, ::graphtier::detail::concat("features have shape ", features->header().shape_string(),
                                                                    ", expected [num_nodes, dim]"));
    }
    num_nodes = agree_num_nodes(num_nodes, features->dim(0), input.features + " (rows)");
    if (num_nodes_from.empty() && !options.num_nodes) num_nodes_from = input.features + " (rows)";
  }
  if (!input.labels.empty()) {
    labels = NpyArray::open(file_source(input.labels));
    if (labels->ndim() >= 1) {
      num_nodes = agree_num_nodes(num_nodes, labels->dim(0), input.labels + " (length)");
      if (num_nodes_from.empty() && !options.num_nodes) num_nodes_from = input.labels + " (length)";
    }
  }

  ConvertSession session(out, options, format, pool);
  session.topology(*npy_edge_source(edge_index, input.edge_layout), num_nodes, num_nodes_from);
  if (features) session.features_npy(*features);
  if (labels) session.labels(read_labels_npy(*labels, session.num_nodes()), input.labels);
  const std::pair<Split, const std::string*> splits[] = {
      {Split::kTrain, &input.train}, {Split::kValid, &input.valid}, {Split::kTest, &input.test}};
  for (const auto& [split, path] : splits) {
    if (path->empty()) continue;
    session.split(split, read_split_npy(NpyArray::open(file_source(*path)), session.num_nodes()), *path);
  }
  return session.commit(source_description);
}

}  // namespace detail

ConvertReport convert_npy(const NpyInput& input, const std::string& out, const ConvertOptions& options,
                          ThreadPool& pool) {
  return detail::convert_npy_arrays(input, out, options, pool, "npy",
                                    "graphtier convert npy: edge_index " + input.edge_index +
                                        (options.symmetrize ? " (symmetrized)" : ""));
}

}  // namespace graphtier::graph
