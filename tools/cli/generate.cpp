// `graphtier generate`: a synthetic power-law graph with planted communities, labels, features and
// splits (include/graphtier/graph_generate/generate.hpp), streamed to disk in bounded memory.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "commands.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph_generate/generate.hpp"

namespace graphtier::cli {
namespace {

struct GenerateCliOptions {
  std::string out;
  std::string schema;  // "": a homogeneous graph
  std::string nodes;
  std::string edges;
  std::string feature_dim;
  std::string classes;
  std::string dtype = "float32";
  int64_t align = 0;
  uint64_t seed = 0;
  double homophily = 0.8;
  std::string rmat = "0.57,0.19,0.19";
  double class_separation = 2.0;
  double train_fraction = 0.6;
  double valid_fraction = 0.2;
  std::optional<double> test_fraction;  // none: the rest
  int64_t time_steps = graph::GenerateOptions{}.time_steps;
  bool undirected = true;
  bool no_features = false;
  bool overwrite = false;
  std::string memory_budget = "25%";
  std::string name;
};

/// "a,b,c" or "a,b,c,d" (d must then complete the sum to 1).
graph::RmatParams parse_rmat(const std::string& text) {
  std::vector<double> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    GRAPHTIER_EXPECTS(used > 0 && used == item.size(), InvalidArgument, "--rmat: '", item,
                      "' is not a number (expected a,b,c or a,b,c,d)");
    values.push_back(value);
  }
  GRAPHTIER_EXPECTS(values.size() == 3 || values.size() == 4, InvalidArgument, "--rmat expects a,b,c or a,b,c,d, got '",
                    text, "'");
  graph::RmatParams p{values[0], values[1], values[2]};
  if (values.size() == 4) {
    GRAPHTIER_EXPECTS(std::abs(p.d() - values[3]) < 1e-6, InvalidArgument, "--rmat: a+b+c+d must be 1, got ",
                      values[0] + values[1] + values[2] + values[3]);
  }
  return p;
}

/// Which of the options that a schema also sets were given, so that they override it.
struct GivenOptions {
  bool dtype = false;
  bool directed = false;
};

/// The schema of --schema with --nodes, --feature-dim, --no-features, --dtype and --classes
/// applied over it.
graph::GraphSchema typed_schema(const GenerateCliOptions& c, const GivenOptions& given) {
  GRAPHTIER_EXPECTS(c.edges.empty(), InvalidArgument,
                    "--edges is not for --schema: the schema's relations give the edges (degree per source node)");
  GRAPHTIER_EXPECTS(!given.directed, InvalidArgument,
                    "--directed is not for --schema: each relation of the schema names its reverse, or has none");
  graph::GraphSchema schema = graph::load_graph_schema(c.schema);
  if (!c.nodes.empty()) graph::scale_graph_schema(schema, parse_count(c.nodes));
  for (graph::NodeTypeSpec& t : schema.node_types) {
    if (c.no_features) {
      t.feature_dim = 0;
    } else if (!c.feature_dim.empty()) {
      t.feature_dim = parse_count(c.feature_dim);
    }
    if (given.dtype) t.feature_dtype = parse_dtype(c.dtype);
  }
  if (!c.classes.empty()) {
    GRAPHTIER_EXPECTS(!schema.labelled_type.empty(), InvalidArgument, "--classes: schema ", c.schema,
                      " has no labelled type");
    schema.num_classes = parse_count(c.classes);
  }
  return schema;
}

graph::GenerateOptions to_options(const GenerateCliOptions& c, const GivenOptions& given) {
  graph::GenerateOptions o;
  o.seed = c.seed;
  o.homophily = c.homophily;
  o.rmat = parse_rmat(c.rmat);
  o.alignment = c.align;
  o.class_separation = c.class_separation;
  o.train_fraction = c.train_fraction;
  o.valid_fraction = c.valid_fraction;
  o.test_fraction = c.test_fraction;
  o.time_steps = c.time_steps;
  o.memory_budget = Budget::parse(c.memory_budget).resolve(physical_memory_bytes());
  o.overwrite = c.overwrite;
  o.name = c.name;
  if (!c.schema.empty()) {
    o.schema = typed_schema(c, given);
    return o;
  }
  GRAPHTIER_EXPECTS(!c.nodes.empty(), InvalidArgument, "--nodes is required (or pass --schema)");
  GRAPHTIER_EXPECTS(!c.edges.empty(), InvalidArgument, "--edges is required (or pass --schema)");
  o.num_nodes = parse_count(c.nodes);
  o.num_edges = parse_count(c.edges);
  GRAPHTIER_EXPECTS(!c.classes.empty(), InvalidArgument, "--classes is required");
  o.num_classes = parse_count(c.classes);
  if (!c.no_features) {
    GRAPHTIER_EXPECTS(!c.feature_dim.empty(), InvalidArgument, "--feature-dim is required (or pass --no-features)");
    o.feature_dim = parse_count(c.feature_dim);
    GRAPHTIER_EXPECTS(o.feature_dim > 0, InvalidArgument, "--feature-dim must be positive (or pass --no-features)");
  }
  o.feature_dtype = parse_dtype(c.dtype);
  o.undirected = c.undirected;
  return o;
}

void print_text(const std::string& dir, const graph::GenerateOptions& o, const graph::GenerateReport& r) {
  const auto ll = [](int64_t v) { return static_cast<long long>(v); };
  std::printf("generated  %s\n", dir.c_str());
  if (o.schema) {
    std::string types;
    for (const auto& t : o.schema->node_types) types += (types.empty() ? "" : ", ") + t.name + " " + std::to_string(t.count);
    std::printf("typed      %lld node types (%s), %lld relations\n", ll(r.num_node_types), types.c_str(),
                ll(r.num_relations));
  }
  std::printf("nodes      %lld (%lld classes, %lld without edges)\n", ll(r.num_nodes),
              ll(o.schema ? o.schema->num_classes : o.num_classes), ll(r.isolated_nodes));
  std::printf("edges      %lld stored of %lld requested (%lld self-loop and %lld duplicate entries removed), max degree %lld\n",
              ll(r.num_edges), ll(r.requested_edges), ll(r.self_loops_removed), ll(r.duplicates_removed),
              ll(r.max_in_degree));
  if (!o.schema) {
    std::printf("homophily  %.3f of stored edges within a class (requested %.3f)\n", r.measured_homophily, o.homophily);
  }
  if (o.time_steps > 0) std::printf("times      %lld arrival steps (node_time.bin, edge_time.bin)\n", ll(o.time_steps));
  std::printf("split      train %lld / valid %lld / test %lld\n", ll(r.num_train), ll(r.num_valid), ll(r.num_test));
  std::printf("size       %s\n", format_bytes(static_cast<double>(r.total_bytes)).c_str());
  std::printf("time       %.1f s: topology %.1f s (%s edges/s), labels %.1f s", r.total_seconds, r.topology_seconds,
              format_count(r.topology_seconds > 0 ? r.requested_edges / r.topology_seconds : 0.0).c_str(),
              r.nodes_seconds);
  if (r.feature_bytes > 0) {
    std::printf(", features %.1f s (%s/s)", r.feature_seconds,
                format_bytes(r.feature_seconds > 0 ? r.feature_bytes / r.feature_seconds : 0.0).c_str());
  }
  std::printf("\n");
}

void run_generate(const GenerateCliOptions& c, const GivenOptions& given, const GlobalOptions& global) {
  const graph::GenerateOptions options = to_options(c, given);
  ThreadPool pool(global.threads);
  const graph::GenerateReport report = graph::generate_dataset(c.out, options, pool);
  if (global.json) {
    std::cout << graph::report_json(c.out, options, report) << '\n';
  } else {
    print_text(c.out, options, report);
  }
}

}  // namespace

void register_generate(CLI::App& app, const GlobalOptions& global) {
  auto opt = std::make_shared<GenerateCliOptions>();
  auto* cmd = app.add_subcommand(
      "generate", "Generate a synthetic power-law graph (R-MAT) with planted communities, labels, features and splits");
  cmd->add_option("-o,--out", opt->out, "Output dataset directory")->required();
  cmd->add_option("--schema", opt->schema,
                  "A typed graph: 'igbh' (IGBH's types and relations) or a JSON schema file (docs/format.md, "
                  "Generated typed graphs)");
  cmd->add_option("--nodes", opt->nodes,
                  "Number of nodes (suffixes: 10K, 10M, 1G); with --schema the total, shared by the types in the "
                  "schema's proportions (default: the schema's counts)")
      ->check(kCount);
  cmd->add_option("--edges", opt->edges,
                  "Requested CSC entries, both directions counted when undirected, before removing self-loops and "
                  "duplicates (suffixes as --nodes); not with --schema")
      ->check(kCount);
  cmd->add_option("--feature-dim", opt->feature_dim, "Feature dimension (with --schema: of every type)")->check(kCount);
  cmd->add_option("--classes", opt->classes, "Number of classes (balanced planted communities)")->check(kCount);
  auto* dtype = cmd->add_option("--dtype", opt->dtype, "Feature dtype: float32, float16 or bfloat16 (with --schema: "
                                                       "of every type, default the schema's)")
                    ->check(kDType)
                    ->capture_default_str();
  cmd->add_option("--align", opt->align, "Feature row alignment in bytes: 0 (packed), 512 or 4096")
      ->capture_default_str();
  cmd->add_option("--seed", opt->seed, "Random seed; the output depends on nothing else")
      ->check(kNonNegative)
      ->capture_default_str();
  cmd->add_option("--homophily", opt->homophily, "Expected fraction of edges within a class, in [0, 1]")
      ->capture_default_str();
  cmd->add_option("--rmat", opt->rmat, "R-MAT quadrant probabilities a,b,c (d = 1 - a - b - c)")
      ->capture_default_str();
  cmd->add_option("--class-separation", opt->class_separation,
                  "Distance between class centroids in noise standard deviations (lower: harder for an MLP)")
      ->capture_default_str();
  cmd->add_option("--train-fraction", opt->train_fraction, "Fraction of nodes in the train split")
      ->capture_default_str();
  cmd->add_option("--valid-fraction", opt->valid_fraction, "Fraction of nodes in the valid split")
      ->capture_default_str();
  cmd->add_option("--test-fraction", opt->test_fraction, "Fraction of nodes in the test split (default: the rest)");
  cmd->add_option("--time-steps", opt->time_steps,
                  "A growing graph over this many time steps: nodes arrive in steps, hubs first, and each edge is "
                  "created when its later end arrives; writes node_time.bin and edge_time.bin (0: no times)")
      ->check(kNonNegative)
      ->capture_default_str();
  auto* undirected =
      cmd->add_flag("--undirected,!--directed", opt->undirected, "Store both directions of every edge (default)");
  cmd->add_flag("--no-features", opt->no_features, "Write no feature table");
  cmd->add_flag("--overwrite", opt->overwrite, "Replace an existing dataset at --out");
  cmd->add_option("--memory-budget", opt->memory_budget,
                  "Memory for building the topology: bytes (8GiB) or percent of RAM; more passes if smaller")
      ->check(kBudget)
      ->capture_default_str();
  cmd->add_option("--name", opt->name, "Dataset name in the manifest (default: the directory name)");
  cmd->callback([opt, dtype, undirected, &global] {
    run_generate(*opt, GivenOptions{dtype->count() > 0, undirected->count() > 0 && !opt->undirected}, global);
  });
}

}  // namespace graphtier::cli
