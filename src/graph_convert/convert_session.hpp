// One conversion from start to commit: the dataset writer, the manifest and the report filled in
// as each array is written, so that every converter front door is a short list of steps.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "convert_csc.hpp"
#include "convert_nodes.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::graph::detail {

class ConvertSession {
 public:
  /// Validates the options and opens the writer (InvalidArgument if `out` exists and
  /// options.overwrite is false).
  ConvertSession(std::string out, const ConvertOptions& options, std::string format, ThreadPool& pool);

  const ConvertOptions& options() const noexcept { return options_; }
  ThreadPool& pool() noexcept { return pool_; }

  /// Builds the CSC. `num_nodes`: the count the input implies, if any; else options.num_nodes,
  /// else max id + 1.
  /// `num_nodes_from` names the input that set `num_nodes` (e.g. "features.npy (rows)"), for the
  /// message when an edge lies outside it.
  void topology(const EdgeSource& edges, std::optional<int64_t> num_nodes, const std::string& num_nodes_from = {});
  /// For converters that write the topology themselves (typed edge lists): records what
  /// write_csc would have, after indptr and indices (and type_per_edge) are in writer().
  void topology_written(const CscResult& result, double seconds);
  DatasetWriter& writer() noexcept { return writer_; }
  /// The typed layout (HeteroSchema) goes here before commit().
  Manifest& manifest() noexcept { return manifest_; }
  int64_t num_nodes() const noexcept { return report_.num_nodes; }
  const ConvertReport& report() const noexcept { return report_; }

  /// Rows [0, num_nodes()) of a [rows, dim] array; more rows than nodes only with allow_longer.
  void features_npy(const NpyArray& array, bool allow_longer = false);
  void features_csv(const ByteSource& source);
  /// Typed datasets: the feature table of node type `type` (features.<type>.bin), one row per
  /// node of the type; manifest().hetero must hold the types and their offsets.
  void type_features_npy(int32_t type, const NpyArray& array);
  void type_features_csv(int32_t type, const ByteSource& source);
  /// Writes labels unless none is labeled; num_classes from the options, else max + 1.
  void labels(const std::vector<int32_t>& labels, const std::string& name);
  void split(Split split, const std::vector<int64_t>& ids, const std::string& name);
  /// Writes node_time.bin (docs/format.md, Timestamps); FormatError naming `name` unless there is
  /// one time per node.
  void node_time(const std::vector<int64_t>& times, const std::string& name);
  /// Writes edge_time.bin, one time per CSC entry (after topology()); FormatError naming `name`
  /// unless there is one per edge.
  void edge_time(const std::vector<int64_t>& times, const std::string& name);

  /// Writes the manifest, validates and renames the dataset into place; returns the report.
  ConvertReport commit(const std::string& source_description);

 private:
  /// Rows [0, rows) of `array` into `<name>.bin`; returns the layout (dim 0: nothing written).
  /// `type_name`: the node type for messages, "" in a homogeneous dataset.
  FeatureLayout write_npy_table(const std::string& name, const NpyArray& array, int64_t rows, bool allow_longer,
                                const std::string& type_name);
  /// `what` names the table in the free-space message.
  FeatureLayout write_csv_table(const std::string& name, const ByteSource& source, int64_t rows, const std::string& what);

  std::string out_;
  ConvertOptions options_;
  ThreadPool& pool_;
  DatasetWriter writer_;
  Manifest manifest_;
  ConvertReport report_;
  std::chrono::steady_clock::time_point start_;
  bool has_topology_ = false;
};

/// The node count an input implies, checked against --num-nodes when both are known.
std::optional<int64_t> agree_num_nodes(std::optional<int64_t> current, int64_t count, const std::string& what);

}  // namespace graphtier::graph::detail
