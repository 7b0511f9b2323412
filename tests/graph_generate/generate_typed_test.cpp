// Tests of `generate --schema`: typed graphs from a schema (generate.hpp, GraphSchema), checked
// against the schema asked for, for determinism, and for their reverse relations; the schema
// reader's errors; and the CLI.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph_generate/generate.hpp"
#include "test_util.hpp"

namespace graphtier::graph {
namespace {

using test::TempDir;

constexpr const char* kSchema = R"({
  "node_types": [
    {"name": "paper", "count": 3000, "feature_dim": 16, "dtype": "float32"},
    {"name": "author", "count": 5000, "feature_dim": 8, "dtype": "float16"},
    {"name": "venue", "count": 40}
  ],
  "relations": [
    {"name": "paper:cites:paper", "degree": 6, "reverse": "rev_cites"},
    {"name": "paper:written_by:author", "degree": 2.5, "reverse": "writes"},
    {"name": "paper:published_in:venue", "degree": 1}
  ],
  "labelled_type": "paper",
  "num_classes": 5
})";

GenerateOptions typed_options(uint64_t seed = 11) {
  GenerateOptions o;
  o.schema = parse_graph_schema(kSchema, "test schema");
  o.seed = seed;
  return o;
}

GenerateReport generate_typed(const std::string& dir, const GenerateOptions& o, int threads = 2) {
  ThreadPool pool(threads);
  return generate_dataset(dir, o, pool);
}

/// (relation, src, dst) of every stored edge.
std::vector<std::tuple<int, int64_t, int64_t>> typed_edges(const Dataset& d) {
  const auto indptr = d.indptr();
  const auto types = d.hetero().type_per_edge;
  std::vector<std::tuple<int, int64_t, int64_t>> edges;
  std::visit(
      [&](auto indices) {
        for (int64_t v = 0; v < d.num_nodes(); ++v) {
          for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) edges.emplace_back(types[e], indices[e], v);
        }
      },
      d.indices());
  return edges;
}

TEST(GenerateTyped, WritesTheTypedDatasetTheSchemaAsks) {
  TempDir tmp;
  const GenerateReport report = generate_typed(tmp / "g", typed_options());
  const Dataset d = Dataset::open(tmp / "g");  // the format's checks of a typed dataset pass
  ASSERT_TRUE(d.is_hetero());
  const HeteroSchema& s = d.schema();
  ASSERT_EQ(s.num_node_types(), 3);
  EXPECT_EQ(s.node_types[0].name, "paper");
  EXPECT_EQ(s.node_types[2].name, "venue");
  EXPECT_EQ(s.node_type_offset, (std::vector<int64_t>{0, 3000, 8000, 8040}));
  EXPECT_EQ(d.num_nodes(), 8040);
  EXPECT_EQ(s.node_types[0].features.dim, 16);
  EXPECT_EQ(s.node_types[1].features.dim, 8);
  EXPECT_EQ(s.node_types[1].features.dtype, DType::kFloat16);
  EXPECT_EQ(s.node_types[2].features.dim, 0);
  EXPECT_EQ(d.type_feature_bytes(0).size(), 3000u * 64);
  EXPECT_EQ(d.type_feature_bytes(1).size(), 5000u * 16);
  EXPECT_TRUE(d.type_feature_bytes(2).empty());
  EXPECT_FALSE(d.has_features());  // no global table in a typed dataset

  // Relations: the schema's in order, then the reverses in the same order.
  ASSERT_EQ(s.num_relations(), 5);
  const std::vector<std::string> names{"paper:cites:paper", "paper:written_by:author", "paper:published_in:venue",
                                       "paper:rev_cites:paper", "author:writes:paper"};
  for (int r = 0; r < 5; ++r) EXPECT_EQ(s.relation_name(r), names[r]);
  EXPECT_EQ(s.relations[0].reverse, 3);
  EXPECT_EQ(s.relations[1].reverse, 4);
  EXPECT_EQ(s.relations[2].reverse, -1);
  EXPECT_EQ(s.relations[4].reverse, 1);

  // Each relation holds about degree * count(src) edges (duplicates removed), and each reverse
  // holds exactly its relation's edges reversed.
  std::vector<std::set<std::pair<int64_t, int64_t>>> by_relation(5);
  for (const auto& [r, src, dst] : typed_edges(d)) by_relation[r].emplace(src, dst);
  const int64_t draws[3] = {18000, 7500, 3000};
  int64_t stored = 0;
  for (int r = 0; r < 3; ++r) {
    EXPECT_LE(static_cast<int64_t>(by_relation[r].size()), draws[r]) << names[r];
    EXPECT_GT(static_cast<int64_t>(by_relation[r].size()), draws[r] / 2) << names[r];
  }
  for (const auto& set : by_relation) stored += static_cast<int64_t>(set.size());
  EXPECT_EQ(stored, d.num_edges());
  EXPECT_EQ(report.num_edges, d.num_edges());
  EXPECT_EQ(report.requested_edges, 2 * 18000 + 2 * 7500 + 3000);
  for (const auto& [fwd, rev] : {std::pair{0, 3}, std::pair{1, 4}}) {
    std::set<std::pair<int64_t, int64_t>> reversed;
    for (const auto& [src, dst] : by_relation[fwd]) reversed.emplace(dst, src);
    EXPECT_EQ(reversed, by_relation[rev]) << names[rev];
  }
  // Degrees are skewed on both ends of a relation between two types.
  std::vector<int64_t> author_degree(5000, 0);
  for (const auto& [paper, author] : by_relation[1]) ++author_degree[author - 3000];
  std::sort(author_degree.begin(), author_degree.end(), std::greater<>());
  EXPECT_GT(author_degree[0], 8 * 7500 / 5000) << "the busiest author has no more papers than the average";

  // Labels on paper only, splits inside it.
  ASSERT_TRUE(d.has_labels());
  EXPECT_EQ(d.manifest().num_classes, 5);
  EXPECT_EQ(s.labelled_type, 0);
  const auto labels = d.labels();
  std::vector<int64_t> per_class(5, 0);
  for (int64_t v = 0; v < d.num_nodes(); ++v) {
    if (v < 3000) {
      ASSERT_GE(labels[v], 0);
      ASSERT_LT(labels[v], 5);
      ++per_class[labels[v]];
    } else {
      ASSERT_EQ(labels[v], -1) << v;
    }
  }
  for (const int64_t c : per_class) EXPECT_EQ(c, 600);  // balanced communities
  EXPECT_EQ(d.split(Split::kTrain).size(), 1800u);
  EXPECT_EQ(d.split(Split::kValid).size(), 600u);
  EXPECT_EQ(d.split(Split::kTest).size(), 600u);
  for (const Split sp : {Split::kTrain, Split::kValid, Split::kTest}) {
    for (const int64_t v : d.split(sp)) ASSERT_LT(v, 3000);
  }
}

TEST(GenerateTyped, SameSeedGivesIdenticalFilesWhateverThreadsAndMemory) {
  TempDir tmp;
  generate_typed(tmp / "a", typed_options(), 1);
  GenerateOptions o = typed_options();
  o.memory_budget = 64 << 10;  // several passes over the edges
  o.feature_chunk_bytes = 1000;
  const GenerateReport r = generate_typed(tmp / "b", o, 2);
  EXPECT_GT(r.topology_passes, 1);
  generate_typed(tmp / "c", typed_options(12), 2);
  const Dataset a = Dataset::open(tmp / "a"), b = Dataset::open(tmp / "b"), c = Dataset::open(tmp / "c");
  for (const auto& [array, entry] : a.manifest().files) {
    EXPECT_EQ(entry.xxh3, b.manifest().files.at(array).xxh3) << array;
  }
  EXPECT_NE(a.manifest().files.at("indices").xxh3, c.manifest().files.at("indices").xxh3);
  EXPECT_NE(a.manifest().files.at("features.paper").xxh3, c.manifest().files.at("features.paper").xxh3);
}

TEST(GenerateTyped, IgbhSchemaScalesToAnySize) {
  GraphSchema s = load_graph_schema("igbh");
  ASSERT_EQ(s.node_types.size(), 4u);
  EXPECT_EQ(s.node_types[0].name, "paper");
  EXPECT_EQ(s.node_types[0].count, 269346174);
  EXPECT_EQ(s.labelled_type, "paper");
  EXPECT_EQ(s.num_classes, 19);
  for (const NodeTypeSpec& t : s.node_types) EXPECT_EQ(t.feature_dim, 1024) << t.name;
  scale_graph_schema(s, 20000);
  int64_t total = 0;
  for (const NodeTypeSpec& t : s.node_types) {
    EXPECT_GE(t.count, 1) << t.name;
    total += t.count;
  }
  EXPECT_NEAR(static_cast<double>(total), 20000.0, 4.0);
  EXPECT_NEAR(static_cast<double>(s.node_types[0].count) / static_cast<double>(s.node_types[1].count),
              269346174.0 / 277220883.0, 0.01);

  for (NodeTypeSpec& t : s.node_types) t.feature_dim = 4;
  TempDir tmp;
  GenerateOptions o;
  o.schema = s;
  generate_typed(tmp / "igbh", o);
  const Dataset d = Dataset::open(tmp / "igbh");
  const HeteroSchema& h = d.schema();
  std::vector<std::string> names;
  for (int r = 0; r < h.num_relations(); ++r) names.push_back(h.relation_name(r));
  EXPECT_EQ(names, (std::vector<std::string>{"paper:cites:paper", "paper:written_by:author",
                                             "author:affiliated_to:institute", "paper:topic:fos",
                                             "paper:rev_cites:paper", "author:rev_written_by:paper",
                                             "institute:rev_affiliated_to:author", "fos:rev_topic:paper"}));
  // Every relation is walkable from paper within two hops: paper's columns hold cites,
  // rev_cites, rev_written_by and rev_topic entries.
  std::set<int> into_paper;
  const auto types = d.hetero().type_per_edge;
  for (int64_t e = 0; e < d.indptr()[h.node_type_offset[1]]; ++e) into_paper.insert(types[e]);
  EXPECT_EQ(into_paper, (std::set<int>{0, 4, 5, 7}));
}

TEST(GenerateTyped, BadSchemasGetNamedErrors) {
  const auto error_of = [](const std::string& text) {
    try {
      parse_graph_schema(text, "s.json");
    } catch (const FormatError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string type = R"({"name": "p", "count": 10})";
  const auto with = [&](const std::string& types, const std::string& relations, const std::string& rest = "") {
    return "{\"node_types\": [" + types + "], \"relations\": [" + relations + "]" + rest + "}";
  };
  const std::vector<std::pair<std::string, std::string>> cases{
      {"{", "s.json: is not valid JSON"},
      {R"({"relations": []})", "s.json: 'node_types' is missing"},
      {with("", ""), "s.json: node_types: must be a non-empty array"},
      {with(R"({"name": "p-q", "count": 10})", ""), "s.json: node_types[0].name: must be a name"},
      {with(R"({"name": "p", "count": 0})", ""), "s.json: node_types[0].count: must be an integer >= 1"},
      {with(R"({"name": "p", "count": 3, "feature_dim": -1})", ""), "node_types[0].feature_dim: must be an integer >= 0"},
      {with(R"({"name": "p", "count": 3, "dtype": "int8"})", ""), "node_types[0].dtype: must be float32, float16"},
      {with(R"({"name": "p", "count": 3, "size": 4})", ""), "node_types[0]: unknown key 'size'"},
      {with(type + "," + type, ""), "node_types[1].name: type 'p' is declared twice"},
      {with(type, R"({"name": "p:q", "degree": 1})"), "relations[0].name: must be written src:rel:dst"},
      {with(type, R"({"name": "p:r:a", "degree": 1})"), "relations[0].name: node type 'a' is not in node_types"},
      {with(type, R"({"name": "p:r:p"})"), "relations[0]: 'degree' is missing"},
      {with(type, R"({"name": "p:r:p", "degree": -2})"), "relations[0].degree: must be a number >= 0"},
      {with(type, R"({"name": "p:r:p", "degree": 1}, {"name": "p:r:p", "degree": 2})"),
       "relations[1].name: relation p:r:p is declared twice"},
      {with(type, R"({"name": "p:r:p", "degree": 1, "reverse": "r"})"),
       "relations[0].reverse: relation p:r:p is declared twice"},
      {with(type, "", R"(, "labelled_type": "x", "num_classes": 2)"), "labelled_type: type 'x' is not in node_types"},
      {with(type, "", R"(, "labelled_type": "p")"), "s.json: 'num_classes' is missing"},
      {with(type, "", R"(, "num_classes": 2)"), "num_classes: is given without a labelled_type"},
  };
  for (const auto& [text, expected] : cases) {
    EXPECT_NE(error_of(text).find(expected), std::string::npos) << text << "\n -> " << error_of(text);
  }
  EXPECT_THROW(load_graph_schema("/nonexistent/schema.json"), InvalidArgument);

  // More classes than labelled nodes: refused before anything is written.
  TempDir tmp;
  GenerateOptions o;
  o.schema = parse_graph_schema(with(type, "", R"(, "labelled_type": "p", "num_classes": 11)"), "s.json");
  EXPECT_THROW(generate_typed(tmp / "g", o), InvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(tmp / "g"));
  // Timestamps are for homogeneous graphs.
  o.schema = parse_graph_schema(with(type, "", R"(, "labelled_type": "p", "num_classes": 2)"), "s.json");
  o.time_steps = 10;
  try {
    generate_typed(tmp / "g", o);
    ADD_FAILURE() << "a typed graph with time steps was generated";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("--time-steps"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(tmp / "g"));
}

TEST(GenerateTypedCli, SchemaFileAndIgbh) {
  TempDir tmp;
  {
    std::ofstream(tmp / "schema.json") << kSchema;
  }
  const auto r = test::run_cli({"--json", "generate", "--schema", tmp / "schema.json", "--out", tmp / "g", "--seed", "4",
                                "--classes", "3", "--dtype", "bfloat16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("num_nodes"), 8040);
  EXPECT_EQ(j.at("num_classes"), 3);
  EXPECT_EQ(j.at("node_types").size(), 3u);
  const Dataset d = Dataset::open(tmp / "g");
  EXPECT_EQ(d.manifest().num_classes, 3);
  EXPECT_EQ(d.schema().node_types[1].features.dtype, DType::kBFloat16);

  const auto igbh = test::run_cli({"generate", "--schema", "igbh", "--nodes", "5K", "--feature-dim", "4", "--out",
                                   tmp / "igbh"});
  ASSERT_EQ(igbh.exit_code, 0) << igbh.err;
  EXPECT_NE(igbh.out.find("typed      4 node types"), std::string::npos) << igbh.out;
  EXPECT_EQ(Dataset::open(tmp / "igbh").schema().num_relations(), 8);

  {
    std::ofstream(tmp / "bad.json") << R"({"node_types": [{"name": "p", "count": 1}], "relations": [{"name": "p:r:q", "degree": 1}]})";
  }
  for (const std::vector<std::string>& args : {
           std::vector<std::string>{"generate", "--schema", tmp / "bad.json", "--out", tmp / "x"},
           std::vector<std::string>{"generate", "--schema", "igbh", "--nodes", "5K", "--edges", "10K", "--out", tmp / "x"},
           std::vector<std::string>{"generate", "--schema", "igbh", "--directed", "--out", tmp / "x"},
           std::vector<std::string>{"generate", "--schema", "nothing-like-it", "--out", tmp / "x"},
       }) {
    const auto bad = test::run_cli(args);
    EXPECT_NE(bad.exit_code, 0) << args[2];
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
    EXPECT_NE(bad.err.find("error"), std::string::npos) << bad.err;
  }
  const auto bad = test::run_cli({"generate", "--schema", tmp / "bad.json", "--out", tmp / "x"});
  EXPECT_NE(bad.err.find("relations[0].name: node type 'q' is not in node_types"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(tmp / "x"));
}

}  // namespace
}  // namespace graphtier::graph
