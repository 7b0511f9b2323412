// `prepare`: score a dataset's nodes, renumber them hottest first, and write the result as a new
// dataset (atomically, through graph::DatasetWriter).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/prep/hotness.hpp"

namespace graphtier::prep {

struct PrepareOptions {
  HotnessMethod method = HotnessMethod::kWeightedReversePageRank;
  /// PageRank iterations; default 20 for rpr and 5 for wrpr (Algorithm 1). Only for those two.
  std::optional<int> iterations;
  double damping = 0.85;
  double tolerance = 0;  // rpr/wrpr early stop (PageRankOptions::tolerance)
  /// Per-node scores for HotnessMethod::kExternal (read_scores_file), indexed by input ids.
  std::string scores_path;
  /// Per-node scores for HotnessMethod::kPresample, computed from the opened input dataset. prep
  /// comes before the samplers in the module order, so the caller hands the sampling in (the CLI
  /// passes sample::presample_hotness).
  std::function<std::vector<double>(const graph::Dataset&, ThreadPool&)> presample;
  int64_t memory_budget = 0;  // FeaturePermuteOptions::memory_budget; 0: default
  /// Replace an existing output; the output may then be the input itself (everything is read
  /// before the new directory is swapped in).
  bool overwrite = false;
};

struct PrepareReport {
  std::string method;  // manifest name of the score
  int64_t num_nodes = 0;
  int64_t num_edges = 0;
  int iterations = 0;  // PageRank iterations run
  double last_change = 0;
  bool composed_permutation = false;  // the input was already renumbered
  double top_score = 0;               // hotness of new id 0
  int64_t feature_bytes = 0;
  bool feature_external = false;
  int64_t feature_buckets = 0;
  int64_t memory_budget = 0;  // as resolved
  // Wall-clock seconds per stage.
  double open_seconds = 0;      // open and validate the input
  double score_seconds = 0;     // scores, including the transpose for PageRank
  double order_seconds = 0;     // sort by score and invert
  double relabel_seconds = 0;   // indptr and indices written
  double feature_seconds = 0;
  double node_arrays_seconds = 0;  // labels, splits, permutation, hotness
  double commit_seconds = 0;       // close, fsync, validate, rename
  double total_seconds = 0;
};

/// Reads the dataset at `input_dir`, scores and renumbers it, and writes the renumbered dataset
/// to `output_dir`: indptr/indices relabeled, features, labels and hotness.bin (non-increasing) in
/// new order, split ids mapped and sorted ascending, permutation.bin mapping new ids to the
/// original ids (composed with the input's permutation if it had one), manifest hotness = the
/// method name. A typed dataset is renumbered within each node type's range (hotness.bin is
/// non-increasing within each), its type_per_edge moves with the edges and its per-type feature
/// tables with their rows (docs/format.md, Heterogeneous datasets). Throws InvalidArgument for bad options (e.g. wrpr on a dataset without a train
/// split, output == input without overwrite), FormatError/IoError from the files.
PrepareReport prepare_dataset(const std::string& input_dir, const std::string& output_dir,
                              const PrepareOptions& options, ThreadPool& pool);

}  // namespace graphtier::prep
