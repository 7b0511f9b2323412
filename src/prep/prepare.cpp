// The `prepare` pipeline: open, score, order, then write every array in the new order through a
// DatasetWriter, whose commit validates and swaps the directory into place.
#include "graphtier/prep/prepare.hpp"
#include "graphtier/prep/link_split.hpp"

#include <chrono>
#include <filesystem>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/test_hook.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/prep/feature_permute.hpp"
#include "graphtier/prep/out_neighbours.hpp"
#include "graphtier/prep/reorder.hpp"

namespace graphtier::prep {
namespace {

using Clock = std::chrono::steady_clock;

bool is_pagerank(HotnessMethod m) {
  return m == HotnessMethod::kReversePageRank || m == HotnessMethod::kWeightedReversePageRank;
}

void check_options(const PrepareOptions& o) {
  const auto name = hotness_method_name(o.method);
  GRAPHTIER_EXPECTS(!o.iterations || is_pagerank(o.method), InvalidArgument,
                    "--iterations applies to rpr and wrpr, not to hotness '", name, "'");
  GRAPHTIER_EXPECTS(!o.iterations || *o.iterations >= 1, InvalidArgument, "--iterations must be >= 1, got ",
                    o.iterations.value_or(0));
  GRAPHTIER_EXPECTS(o.scores_path.empty() || o.method == HotnessMethod::kExternal, InvalidArgument,
                    "a scores file is only read with hotness 'scores', not '", name, "'");
  GRAPHTIER_EXPECTS(!o.scores_path.empty() || o.method != HotnessMethod::kExternal, InvalidArgument,
                    "hotness 'scores' needs a scores file (--scores FILE)");
  GRAPHTIER_EXPECTS(static_cast<bool>(o.presample) == (o.method == HotnessMethod::kPresample), InvalidArgument,
                    "hotness 'presample' and a presampling function go together (hotness '", name, "')");
}

/// Same directory, whichever spelling (symlinks, "./", trailing slashes).
bool same_directory(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec);
}

std::vector<double> compute_scores(const graph::Dataset& in, const PrepareOptions& o, ThreadPool& pool,
                                   PrepareReport& report) {
  const graph::CscView csc = graph::CscView::of(in);
  switch (o.method) {
    case HotnessMethod::kDegree: return degree_scores(csc, pool);
    case HotnessMethod::kInDegree: return in_degree_scores(csc, pool);
    case HotnessMethod::kOutDegree: return out_degree_scores(csc, pool);
    case HotnessMethod::kExternal: return read_scores_file(o.scores_path, in.num_nodes());
    case HotnessMethod::kPresample: {
      std::vector<double> scores = o.presample(in, pool);
      GRAPHTIER_EXPECTS(static_cast<int64_t>(scores.size()) == in.num_nodes(), InvalidArgument, "presampling gave ",
                        scores.size(), " scores for ", in.num_nodes(), " nodes");
      return scores;
    }
    case HotnessMethod::kReversePageRank:
    case HotnessMethod::kWeightedReversePageRank: break;
  }
  const bool weighted = o.method == HotnessMethod::kWeightedReversePageRank;
  const auto train = in.split(graph::Split::kTrain);
  GRAPHTIER_EXPECTS(!weighted || !train.empty(), InvalidArgument, "hotness wrpr weights the train nodes, but ",
                    in.dir(), " has no train split (use rpr)");
  PageRankOptions pr;
  pr.iterations = o.iterations.value_or(weighted ? 5 : 20);
  pr.damping = o.damping;
  pr.tolerance = o.tolerance;
  const OutNeighbours out = OutNeighbours::build(csc, pool);
  PageRankStats stats;
  auto scores = weighted ? weighted_reverse_pagerank(csc, out, train, pr, pool, &stats)
                         : reverse_pagerank(csc, out, pr, pool, &stats);
  report.iterations = stats.iterations;
  report.last_change = stats.last_change;
  return scores;
}

/// The permutation of type t's rows alone (local ids [0, nodes of t)): what its feature table,
/// indexed from the type's first id, needs.
Permutation type_local(const Permutation& perm, const graph::HeteroSchema& schema, int32_t t, ThreadPool& pool) {
  const int64_t begin = schema.node_type_offset[static_cast<std::size_t>(t)];
  std::vector<int64_t> new_to_old(static_cast<std::size_t>(schema.num_nodes_of(t)));
  for (std::size_t i = 0; i < new_to_old.size(); ++i) {
    new_to_old[i] = perm.new_to_old[static_cast<std::size_t>(begin) + i] - begin;
  }
  return from_new_to_old(std::move(new_to_old), pool);
}

}  // namespace

PrepareReport prepare_dataset(const std::string& input_dir, const std::string& output_dir,
                              const PrepareOptions& options, ThreadPool& pool) {
  check_options(options);
  const auto start = Clock::now();
  PrepareReport report;
  report.method = hotness_method_name(options.method);
  report.memory_budget = options.memory_budget > 0 ? options.memory_budget : default_memory_budget();

  auto t = Clock::now();
  const graph::Dataset in = graph::Dataset::open(input_dir);
  const graph::Manifest& m = in.manifest();
  report.num_nodes = m.num_nodes;
  report.num_edges = m.num_edges;
  report.open_seconds = seconds_since(t);
  GRAPHTIER_EXPECTS(options.overwrite || !same_directory(input_dir, output_dir), InvalidArgument, "output ", output_dir,
                    " is the input dataset; pass --overwrite to renumber it in place");
  // The writer checks the output path now, before the expensive work. In place, the input stays
  // mapped and intact until commit() swaps the finished directory in.
  graph::DatasetWriter writer(output_dir, options.overwrite);
  writer.require_free_space("the renumbered features", m.num_nodes, in.has_features() ? m.features.row_stride : 0);
  for (int32_t t = 0; t < in.schema().num_node_types(); ++t) {
    writer.require_free_space("the renumbered features of type " + in.schema().node_types[static_cast<std::size_t>(t)].name,
                              in.schema().num_nodes_of(t), in.schema().node_types[static_cast<std::size_t>(t)].features.row_stride);
  }

  t = Clock::now();
  const std::vector<double> scores = compute_scores(in, options, pool, report);
  report.score_seconds = seconds_since(t);

  t = Clock::now();
  // A typed dataset is renumbered within each type's range (hotness per type), so that every
  // node keeps its type's ids (docs/format.md, Heterogeneous datasets).
  const Permutation perm = order_by_score(scores, pool, in.schema().node_type_offset);
  report.order_seconds = seconds_since(t);

  t = Clock::now();
  {
    Progress progress("relabel", m.num_edges, "edges");
    write_relabeled_csc(graph::CscView::of(in), perm, writer.open_array("indptr"), writer.open_array("indices"), pool,
                        &progress);
    progress.finish();
  }
  // Rows keep their entries' order, so each edge's relation moves with it and stays sorted.
  if (in.is_hetero()) {
    write_relabeled_edge_values(graph::CscView::of(in), in.hetero().type_per_edge, perm, writer.open_array("type_per_edge"));
  }
  if (in.has_edge_time()) write_relabeled_edge_values(graph::CscView::of(in), in.edge_time(), perm, writer.open_array("edge_time"));
  report.relabel_seconds = seconds_since(t);
  park_point("prepare.relabelled");  // test hook: the new topology written

  t = Clock::now();
  if (in.has_features()) {
    FeaturePermuteOptions fo;
    fo.memory_budget = report.memory_budget;
    fo.scratch_dir = writer.temp_dir();
    const std::string source = in.dir() + "/" + m.files.at("features").path;
    const FeaturePermuteReport fr =
        permute_feature_rows(source, m.features.row_stride, perm, writer.open_array("features"), fo, pool);
    report.feature_bytes = fr.bytes;
    report.feature_external = fr.external;
    report.feature_buckets = fr.buckets;
  }
  for (int32_t t = 0; t < in.schema().num_node_types(); ++t) {
    const graph::NodeTypeEntry& type = in.schema().node_types[static_cast<std::size_t>(t)];
    if (type.features.dim == 0) continue;
    FeaturePermuteOptions fo;
    fo.memory_budget = report.memory_budget;
    fo.scratch_dir = writer.temp_dir();
    const std::string array = graph::HeteroSchema::feature_array(type.name);
    const FeaturePermuteReport fr = permute_feature_rows(in.dir() + "/" + m.files.at(array).path, type.features.row_stride,
                                                         type_local(perm, in.schema(), t, pool), writer.open_array(array),
                                                         fo, pool);
    report.feature_bytes += fr.bytes;
    report.feature_external = report.feature_external || fr.external;
    report.feature_buckets += fr.buckets;
  }
  report.feature_seconds = seconds_since(t);

  t = Clock::now();
  if (in.has_labels()) writer.write_array("labels", std::span<const int32_t>(gather_by_new_id(in.labels(), perm, pool)));
  if (in.has_node_time()) {
    writer.write_array("node_time", std::span<const int64_t>(gather_by_new_id(in.node_time(), perm, pool)));
  }
  for (auto split : {graph::Split::kTrain, graph::Split::kValid, graph::Split::kTest}) {
    const std::string name(graph::split_name(split));
    if (m.has(name)) writer.write_array(name, std::span<const int64_t>(map_ids_sorted(in.split(split), perm)));
  }
  if (in.has_link_split()) {
    for (auto split : {graph::Split::kTrain, graph::Split::kValid, graph::Split::kTest}) {
      const LinkEdges edges = renumber_link_edges(in.link_edges(split), in.link_time(split), perm.old_to_new);
      writer.write_array(graph::LinkSplit::array(split), std::span<const int64_t>(edges.pairs));
      if (in.has_link_time()) writer.write_array(graph::LinkSplit::time_array(split), std::span<const int64_t>(edges.times));
    }
  }
  // permutation.bin maps to the ORIGINAL ids: compose with the input's own renumbering.
  report.composed_permutation = in.has_permutation();
  const std::vector<int64_t> to_original =
      in.has_permutation() ? gather_by_new_id(in.permutation(), perm, pool) : perm.new_to_old;
  writer.write_array("permutation", std::span<const int64_t>(to_original));
  const std::vector<double> hotness = gather_by_new_id(std::span<const double>(scores), perm, pool);
  report.top_score = hotness.empty() ? 0.0 : hotness.front();
  writer.write_array("hotness", std::span<const double>(hotness));
  report.node_arrays_seconds = seconds_since(t);

  t = Clock::now();
  graph::Manifest out_manifest = m;
  out_manifest.hotness = report.method;
  out_manifest.source = (m.source.empty() ? std::string() : m.source + "; ") + "prepare --hotness " + report.method;
  writer.commit(out_manifest);
  report.commit_seconds = seconds_since(t);
  report.total_seconds = seconds_since(start);
  return report;
}

}  // namespace graphtier::prep
