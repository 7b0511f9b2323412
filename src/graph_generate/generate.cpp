// Front door of `generate`: validates the options, builds the model and runs the stages into one
// atomically committed dataset.
#include "graphtier/graph_generate/generate.hpp"

#include <chrono>
#include <cmath>
#include <limits>

#include "generate_stages.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/test_hook.hpp"

namespace graphtier::graph {
namespace {

bool is_fraction(double x) { return std::isfinite(x) && x >= 0.0 && x <= 1.0; }

/// The options both kinds of graph use.
void validate_common(const GenerateOptions& o) {
  GRAPHTIER_EXPECTS(is_fraction(o.homophily), InvalidArgument, "homophily must be in [0, 1], got ", o.homophily);
  const RmatParams& r = o.rmat;
  GRAPHTIER_EXPECTS(std::isfinite(r.a) && std::isfinite(r.b) && std::isfinite(r.c) && r.a > 0 && r.b >= 0 &&
                        r.c >= 0 && r.d() >= -1e-9,
                    InvalidArgument, "R-MAT parameters need a > 0, b >= 0, c >= 0 and a + b + c <= 1, got a=", r.a,
                    " b=", r.b, " c=", r.c);
  GRAPHTIER_EXPECTS(std::isfinite(o.class_separation) && o.class_separation >= 0, InvalidArgument,
                    "class separation must be >= 0, got ", o.class_separation);
  GRAPHTIER_EXPECTS(is_fraction(o.train_fraction), InvalidArgument, "train fraction must be in [0, 1], got ",
                    o.train_fraction);
  GRAPHTIER_EXPECTS(is_fraction(o.valid_fraction), InvalidArgument, "valid fraction must be in [0, 1], got ",
                    o.valid_fraction);
  const double test = o.test_fraction.value_or(0.0);
  GRAPHTIER_EXPECTS(is_fraction(test), InvalidArgument, "test fraction must be in [0, 1], got ", test);
  GRAPHTIER_EXPECTS(o.train_fraction + o.valid_fraction + test <= 1.0 + 1e-9, InvalidArgument,
                    "train, valid and test fractions add up to more than 1 (", o.train_fraction, " + ",
                    o.valid_fraction, " + ", test, ")");
  GRAPHTIER_EXPECTS(o.memory_budget >= 0, InvalidArgument, "memory budget must be >= 0, got ", o.memory_budget);
  GRAPHTIER_EXPECTS(o.feature_chunk_bytes >= 1, InvalidArgument, "feature chunk size must be >= 1 byte, got ",
                    o.feature_chunk_bytes);
}

/// The counts of a homogeneous graph.
void validate_counts(const GenerateOptions& o) {
  // Ids, and the permutation's Feistel domain of up to twice their bits, stay within 64 bits.
  constexpr int64_t kMaxCount = int64_t{1} << 62;
  GRAPHTIER_EXPECTS(o.num_nodes >= 1 && o.num_nodes < kMaxCount, InvalidArgument,
                    "number of nodes must be in [1, 2^62), got ", o.num_nodes);
  GRAPHTIER_EXPECTS(o.num_edges >= 0 && o.num_edges < kMaxCount, InvalidArgument,
                    "number of edges must be in [0, 2^62), got ", o.num_edges);
  // The degree counters cover every node in memory (32 bits each unless a row may reach 2^32).
  const std::string nodes_problem =
      node_count_problem(o.num_nodes, o.num_edges >= int64_t{UINT32_MAX} ? 8 : 4, "the in-degree counters");
  GRAPHTIER_EXPECTS(nodes_problem.empty(), InvalidArgument, "number of nodes (--nodes): ", nodes_problem);
  GRAPHTIER_EXPECTS(o.num_classes >= 1 && o.num_classes <= o.num_nodes &&
                        o.num_classes <= std::numeric_limits<int32_t>::max(),
                    InvalidArgument, "number of classes must be in [1, number of nodes = ", o.num_nodes,
                    "], got ", o.num_classes);
  GRAPHTIER_EXPECTS(o.time_steps >= 0 && o.time_steps <= o.num_nodes, InvalidArgument,
                    "time steps (--time-steps) must be in [0, number of nodes = ", o.num_nodes, "], got ", o.time_steps);
  GRAPHTIER_EXPECTS(o.feature_dim >= 0, InvalidArgument, "feature dimension must be >= 0, got ", o.feature_dim);
  GRAPHTIER_EXPECTS(o.feature_dtype == DType::kFloat32 || o.feature_dtype == DType::kFloat16 ||
                        o.feature_dtype == DType::kBFloat16,
                    InvalidArgument, "feature dtype must be float32, float16 or bfloat16, got ",
                    dtype_name(o.feature_dtype));
}

std::string describe(const GenerateOptions& o) {
  return ::graphtier::detail::concat("graphtier generate: R-MAT a=", o.rmat.a, " b=", o.rmat.b, " c=", o.rmat.c,
                                     ", ", o.num_edges, " requested edges, ", o.undirected ? "undirected" : "directed",
                                     ", ", o.num_classes, " classes, homophily ", o.homophily, ", class separation ",
                                     o.class_separation, o.time_steps > 0 ? ", growing over " : "",
                                     o.time_steps > 0 ? std::to_string(o.time_steps) + " time steps" : "", ", seed ",
                                     o.seed);
}

}  // namespace

GenerateReport generate_dataset(const std::string& dir, const GenerateOptions& options, ThreadPool& pool) {
  validate_common(options);
  GRAPHTIER_EXPECTS(!options.schema || options.time_steps == 0, InvalidArgument,
                    "time steps (--time-steps) are for homogeneous graphs, not --schema");
  if (options.schema) return detail::generate::generate_typed_dataset(dir, options, pool);
  validate_counts(options);
  const auto start = std::chrono::steady_clock::now();
  const FeatureLayout layout = FeatureLayout::make(options.feature_dim, options.feature_dtype, options.alignment);
  const int64_t n = options.num_nodes;
  const int64_t num_draws = options.undirected ? (options.num_edges + 1) / 2 : options.num_edges;

  const detail::generate::Communities communities(n, options.num_classes, options.seed);
  const detail::generate::NodePermutation node_order(n, options.seed, detail::generate::kNodePermutationStream);
  const detail::generate::NodePermutation split_order(n, options.seed, detail::generate::kSplitPermutationStream);
  const detail::generate::EdgeModel edges(options, communities, node_order);
  const detail::generate::LabelModel labels(communities, node_order);

  DatasetWriter writer(dir, options.overwrite);
  writer.require_free_space("the offsets (indptr.bin)", n + 1, 8);
  // The requested entries bound the stored ones (self-loops and duplicates are dropped).
  writer.require_free_space("the neighbour ids (indices.bin)", options.num_edges, dtype_size(index_dtype_for(n)));
  writer.require_free_space("the features", n, layout.dim > 0 ? layout.row_stride : 0);
  GenerateReport report;
  report.num_nodes = n;
  report.requested_edges = options.num_edges;
  log_info("generating ", n, " nodes, ", options.num_edges, " edges, ", options.num_classes, " classes, ",
           options.feature_dim, " features (", dtype_name(options.feature_dtype), ") into ", dir);

  auto stage = std::chrono::steady_clock::now();
  const DType index_dtype = index_dtype_for(n);
  detail::generate::write_topology(writer, edges, labels, n, num_draws, options.undirected, index_dtype,
                                   options.memory_budget, pool, report);
  if (options.time_steps > 0) {
    writer.require_free_space("the timestamps", n + report.num_edges, 8);
    detail::generate::write_times(writer, detail::generate::ArrivalTimes(n, options.time_steps, node_order), n,
                                  index_dtype, pool);
  }
  report.topology_seconds = seconds_since(stage);

  stage = std::chrono::steady_clock::now();
  const detail::generate::SplitCounts splits = detail::generate::split_counts(options);
  detail::generate::write_node_arrays(writer, labels, split_order, {0, n, n}, splits, pool);
  report.num_train = splits.train;
  report.num_valid = splits.valid;
  report.num_test = splits.test;
  report.nodes_seconds = seconds_since(stage);
  park_point("generate.nodes_written");  // test hook: topology and node arrays written

  if (layout.dim > 0) {
    stage = std::chrono::steady_clock::now();
    const detail::generate::FeatureModel features(options.seed, layout.dim, options.num_classes, options.class_separation);
    report.feature_bytes = detail::generate::write_features(writer.open_array("features"), layout, features, labels, n,
                                                  options.feature_chunk_bytes, pool);
    report.feature_seconds = seconds_since(stage);
  }

  Manifest manifest;
  manifest.name = options.name;
  manifest.num_nodes = n;
  manifest.num_edges = report.num_edges;
  manifest.indices_dtype = index_dtype;
  manifest.features = layout;
  manifest.num_classes = options.num_classes;
  manifest.source = describe(options);
  writer.commit(manifest);

  const int64_t index_bytes = dtype_size(index_dtype);
  report.total_bytes = (n + 1) * 8 + report.num_edges * index_bytes + n * 4 +
                       (splits.train + splits.valid + splits.test) * 8 + report.feature_bytes +
                       (options.time_steps > 0 ? (n + report.num_edges) * 8 : 0);
  report.total_seconds = seconds_since(start);
  return report;
}

}  // namespace graphtier::graph
