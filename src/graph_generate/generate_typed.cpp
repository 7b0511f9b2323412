// Typed graphs from a schema (generate.hpp, GraphSchema): the same stages as a homogeneous
// graph, run per node type and per relation into one typed dataset (docs/format.md,
// Heterogeneous datasets), committed atomically.
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <vector>

#include "csc_builder.hpp"
#include "generate_stages.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/test_hook.hpp"

namespace graphtier::graph::detail::generate {
namespace {

using ::graphtier::detail::concat;

/// The models of one node type: its id order, its communities (one class unless it is the
/// labelled type) and its labels.
struct TypeModels {
  TypeModels(int64_t count, int64_t classes, uint64_t seed)
      : order(count, seed, kNodePermutationStream),
        split_order(count, seed, kSplitPermutationStream),
        communities(count, classes, seed),
        labels(communities, order) {}
  NodePermutation order;
  NodePermutation split_order;
  Communities communities;
  LabelModel labels;
};

int64_t draws_of(const RelationSpec& r, int64_t src_count) {
  return static_cast<int64_t>(std::llround(r.degree * static_cast<double>(src_count)));
}

void validate_schema(const GraphSchema& s) {
  GRAPHTIER_EXPECTS(!s.node_types.empty(), InvalidArgument, "the schema has no node types");
  int64_t total = 0;
  for (const NodeTypeSpec& t : s.node_types) {
    GRAPHTIER_EXPECTS(t.count >= 1, InvalidArgument, "node type ", t.name, " needs at least one node, got ", t.count);
    GRAPHTIER_EXPECTS(t.feature_dim >= 0, InvalidArgument, "node type ", t.name, ": feature dimension must be >= 0, got ",
                      t.feature_dim);
    GRAPHTIER_EXPECTS(t.feature_dtype == DType::kFloat32 || t.feature_dtype == DType::kFloat16 ||
                          t.feature_dtype == DType::kBFloat16,
                      InvalidArgument, "node type ", t.name, ": feature dtype must be float32, float16 or bfloat16, got ",
                      dtype_name(t.feature_dtype));
    GRAPHTIER_EXPECTS(t.count < kTypedKeyMaxNodes - total, InvalidArgument, "the node types add up to 2^",
                      kTypedKeyShift, " nodes or more, the most a typed dataset holds");
    total += t.count;
  }
  const std::string problem = node_count_problem(total, 8, "the in-degree counters");
  GRAPHTIER_EXPECTS(problem.empty(), InvalidArgument, "the schema's nodes: ", problem);
  for (const RelationSpec& r : s.relations) {
    GRAPHTIER_EXPECTS(std::isfinite(r.degree) && r.degree >= 0, InvalidArgument, "relation ", r.src, ":", r.name, ":",
                      r.dst, ": degree must be >= 0, got ", r.degree);
    GRAPHTIER_EXPECTS(r.degree * static_cast<double>(total) < 0x1p62, InvalidArgument, "relation ", r.src, ":", r.name,
                      ":", r.dst, " would draw 2^62 edges or more");
  }
  if (!s.labelled_type.empty()) {
    for (const NodeTypeSpec& t : s.node_types) {
      if (t.name != s.labelled_type) continue;
      GRAPHTIER_EXPECTS(s.num_classes >= 1 && s.num_classes <= t.count &&
                            s.num_classes <= std::numeric_limits<int32_t>::max(),
                        InvalidArgument, "number of classes must be in [1, nodes of the labelled type ", t.name, " = ",
                        t.count, "], got ", s.num_classes);
    }
  }
}

std::string describe(const GenerateOptions& o, const GraphSchema& s) {
  std::string types, relations;
  for (const NodeTypeSpec& t : s.node_types) types += concat(types.empty() ? "" : ", ", t.name, " ", t.count);
  for (const RelationSpec& r : s.relations) {
    relations += concat(relations.empty() ? "" : ", ", r.src, ":", r.name, ":", r.dst, " degree ", r.degree,
                        r.reverse.empty() ? "" : concat(" (reverse ", r.reverse, ")"));
  }
  return concat("graphtier generate --schema: node types ", types, "; relations ", relations, "; ",
                s.labelled_type.empty() ? std::string("no labels") : concat(s.num_classes, " classes on ", s.labelled_type),
                "; R-MAT a=", o.rmat.a, " b=", o.rmat.b, " c=", o.rmat.c, ", homophily ", o.homophily,
                ", class separation ", o.class_separation, ", seed ", o.seed);
}

}  // namespace

GenerateReport generate_typed_dataset(const std::string& dir, const GenerateOptions& options, ThreadPool& pool) {
  const GraphSchema& schema = *options.schema;
  validate_schema(schema);
  const auto start = std::chrono::steady_clock::now();

  HeteroSchema hetero;
  hetero.node_type_offset = {0};
  int32_t labelled = -1;
  for (std::size_t t = 0; t < schema.node_types.size(); ++t) {
    const NodeTypeSpec& spec = schema.node_types[t];
    hetero.node_types.push_back({spec.name, FeatureLayout::make(spec.feature_dim, spec.feature_dtype, options.alignment)});
    hetero.node_type_offset.push_back(hetero.node_type_offset.back() + spec.count);
    if (spec.name == schema.labelled_type) labelled = static_cast<int32_t>(t);
  }
  hetero.labelled_type = labelled;
  const int64_t n = hetero.node_type_offset.back();

  // Stable addresses: the edge and label models hold references to these.
  std::deque<TypeModels> types;
  for (std::size_t t = 0; t < schema.node_types.size(); ++t) {
    const int64_t classes = static_cast<int32_t>(t) == labelled ? schema.num_classes : 1;
    types.emplace_back(schema.node_types[t].count, classes, philox_u64(options.seed, kTypeSeedStream, t));
  }

  // Relation ids: the schema's relations in order, then the reverses in the same order.
  const auto num_forward = static_cast<int>(schema.relations.size());
  std::vector<TypedRelation> relations(schema.relations.size());
  int next_reverse = num_forward;
  int64_t requested = 0;
  std::vector<RelationEntry> entries(schema.relations.size());
  for (int r = 0; r < num_forward; ++r) {
    const RelationSpec& spec = schema.relations[static_cast<std::size_t>(r)];
    const int32_t s = hetero.find_node_type(spec.src), d = hetero.find_node_type(spec.dst);
    GRAPHTIER_EXPECTS(s >= 0 && d >= 0, InvalidArgument, "relation ", spec.src, ":", spec.name, ":", spec.dst,
                      " joins a type the schema does not declare");
    TypedRelation& rel = relations[static_cast<std::size_t>(r)];
    rel.relation = r;
    rel.src_offset = hetero.node_type_offset[static_cast<std::size_t>(s)];
    rel.dst_offset = hetero.node_type_offset[static_cast<std::size_t>(d)];
    rel.num_draws = draws_of(spec, schema.node_types[static_cast<std::size_t>(s)].count);
    const uint64_t seed = philox_u64(options.seed, kRelationSeedStream, static_cast<uint64_t>(r));
    if (s == d) {
      GenerateOptions within = options;
      within.seed = seed;
      within.num_nodes = schema.node_types[static_cast<std::size_t>(s)].count;
      within.num_classes = s == labelled ? schema.num_classes : 1;
      const TypeModels& m = types[static_cast<std::size_t>(s)];
      rel.same_type.emplace(within, m.communities, m.order);
    } else {
      rel.cross_type.emplace(seed, options.rmat, types[static_cast<std::size_t>(s)].order,
                             schema.node_types[static_cast<std::size_t>(s)].count, types[static_cast<std::size_t>(d)].order,
                             schema.node_types[static_cast<std::size_t>(d)].count);
    }
    entries[static_cast<std::size_t>(r)] = {spec.name, {s, d}, -1};
    if (!spec.reverse.empty()) {
      rel.reverse = next_reverse++;
      entries[static_cast<std::size_t>(r)].reverse = rel.reverse;
      entries.push_back({spec.reverse, {d, s}, r});
    }
    requested += rel.num_draws * (rel.reverse >= 0 ? 2 : 1);
  }
  hetero.relations = entries;

  DatasetWriter writer(dir, options.overwrite);
  const DType index_dtype = index_dtype_for(n);
  writer.require_free_space("the offsets (indptr.bin)", n + 1, 8);
  // The requested entries bound the stored ones (self-loops and duplicates are dropped).
  writer.require_free_space("the neighbour ids and relations (indices.bin, type_per_edge.bin)", requested,
                            dtype_size(index_dtype) + 1);
  for (const NodeTypeEntry& t : hetero.node_types) {
    writer.require_free_space(concat("the features of ", t.name), hetero.num_nodes_of(hetero.find_node_type(t.name)),
                              t.features.dim > 0 ? t.features.row_stride : 0);
  }
  GenerateReport report;
  report.num_nodes = n;
  report.requested_edges = requested;
  report.num_node_types = hetero.num_node_types();
  report.num_relations = hetero.num_relations();
  log_info("generating a typed graph of ", n, " nodes (", hetero.num_node_types(), " types), ", requested,
           " edges (", hetero.num_relations(), " relations) into ", dir);

  auto stage = std::chrono::steady_clock::now();
  write_typed_topology(writer, relations, n, index_dtype, options.memory_budget, pool, report);
  report.topology_seconds = seconds_since(stage);

  stage = std::chrono::steady_clock::now();
  if (labelled >= 0) {
    GenerateOptions of_type = options;
    of_type.num_nodes = schema.node_types[static_cast<std::size_t>(labelled)].count;
    const SplitCounts splits = split_counts(of_type);
    const TypeModels& m = types[static_cast<std::size_t>(labelled)];
    write_node_arrays(writer, m.labels, m.split_order,
                      {hetero.node_type_offset[static_cast<std::size_t>(labelled)], of_type.num_nodes, n}, splits, pool);
    report.num_train = splits.train;
    report.num_valid = splits.valid;
    report.num_test = splits.test;
  }
  report.nodes_seconds = seconds_since(stage);
  park_point("generate.nodes_written");  // test hook: topology and node arrays written

  stage = std::chrono::steady_clock::now();
  for (std::size_t t = 0; t < hetero.node_types.size(); ++t) {
    const FeatureLayout& layout = hetero.node_types[t].features;
    if (layout.dim == 0) continue;
    const int64_t classes = static_cast<int32_t>(t) == labelled ? schema.num_classes : 1;
    const FeatureModel features(philox_u64(options.seed, kTypeSeedStream, t), layout.dim, classes,
                                options.class_separation);
    log_info("features of ", hetero.node_types[t].name, ": ", schema.node_types[t].count, " x ", layout.dim, " ",
             dtype_name(layout.dtype));
    report.feature_bytes += write_features(writer.open_array(HeteroSchema::feature_array(hetero.node_types[t].name)),
                                           layout, features, types[t].labels, schema.node_types[t].count,
                                           options.feature_chunk_bytes, pool);
  }
  report.feature_seconds = seconds_since(stage);

  Manifest manifest;
  manifest.name = options.name;
  manifest.num_nodes = n;
  manifest.num_edges = report.num_edges;
  manifest.indices_dtype = index_dtype;
  manifest.num_classes = labelled >= 0 ? schema.num_classes : 0;
  manifest.source = describe(options, schema);
  manifest.hetero = std::move(hetero);
  writer.commit(manifest);

  report.total_bytes = (n + 1) * 8 + report.num_edges * (dtype_size(index_dtype) + 1) + report.feature_bytes +
                       (labelled >= 0 ? n * 4 + (report.num_train + report.num_valid + report.num_test) * 8 : 0);
  report.total_seconds = seconds_since(start);
  return report;
}

}  // namespace graphtier::graph::detail::generate
