// `graphtier convert` end to end: the real Planetoid releases of Cora and Citeseer (counts and
// facts checked against PyG's loader), and tiny edge-list, .npy, OGB and IGB inputs through every
// subcommand's options, inspected with `graphtier --json info` and by opening the dataset.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "graph_convert/convert_test_util.hpp"
#include "graphtier/graph/dataset.hpp"

namespace graphtier {
namespace {

namespace fs = std::filesystem;
using graph::Dataset;
using graph::NpyType;
using graph::Split;
using test::Csc;

/// Runs the CLI quietly; fails the test (with stderr) unless it exits with 0.
nlohmann::json run_json(std::vector<std::string> args) {
  args.insert(args.begin(), {"-q", "--json"});
  const auto r = test::run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return nlohmann::json::object();
  return nlohmann::json::parse(r.out);
}

nlohmann::json info(const std::string& dataset) { return run_json({"info", dataset}); }

void expect_counts(const nlohmann::json& j, int64_t nodes, int64_t edges, int64_t dim, int64_t classes, int64_t train,
                   int64_t valid, int64_t test) {
  EXPECT_EQ(j.value("num_nodes", -1), nodes);
  EXPECT_EQ(j.value("num_edges", -1), edges);
  EXPECT_EQ(j.value("feature_dim", -1), dim);
  EXPECT_EQ(j.value("num_classes", -1), classes);
  EXPECT_EQ(j["splits"].value("train", -1), train);
  EXPECT_EQ(j["splits"].value("valid", -1), valid);
  EXPECT_EQ(j["splits"].value("test", -1), test);
}

std::vector<int64_t> in_neighbours(const Dataset& d, int64_t v) {
  const Csc csc = test::read_csc(d);
  return {csc.indices.begin() + csc.indptr[v], csc.indices.begin() + csc.indptr[v + 1]};
}

/// True when every CSC entry u -> v has its reverse v -> u.
bool is_symmetric(const Csc& csc) {
  std::set<std::pair<int64_t, int64_t>> edges;
  for (std::size_t v = 0; v + 1 < csc.indptr.size(); ++v) {
    for (int64_t k = csc.indptr[v]; k < csc.indptr[v + 1]; ++k) edges.emplace(csc.indices[k], static_cast<int64_t>(v));
  }
  return std::all_of(edges.begin(), edges.end(), [&](const auto& e) { return edges.count({e.second, e.first}) != 0; });
}

float feature(const Dataset& d, int64_t v, int64_t j) {
  float x;
  std::memcpy(&x, d.feature_bytes().data() + v * d.manifest().features.row_stride + j * 4, 4);
  return x;
}

class ConvertCliTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return tmp_ / name; }
  test::TempDir tmp_;
};

/// Converts Planetoid `name` from the embedded datasets (datasets/), or skips when Python cannot.
class PlanetoidCliTest : public ConvertCliTest {
 protected:
  nlohmann::json convert(const std::string& name) {
    const std::string root = test::datasets_dir() + "/" + name;
    if (!fs::exists(root + "/ind." + name + ".graph")) {
      // The files ship with the repository, so their absence is a failure; the skip only ends the body.
      ADD_FAILURE() << root << "/ind." << name << ".graph is missing from the checkout";
      skip_reason_ = root + " is missing";
      return {};
    }
    if (!test::python_has_numpy_scipy()) {
      skip_reason_ = "python3 with numpy and scipy is needed to read the Planetoid pickles";
      return {};
    }
    return run_json({"convert", "planetoid", "--root", root, "--name", name, "-o", path(name)});
  }
  std::string skip_reason_;
};

TEST_F(PlanetoidCliTest, Cora) {
  const auto report = convert("cora");
  if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  EXPECT_EQ(report.value("format", ""), "planetoid");
  EXPECT_EQ(report.value("input_edges", -1), 10858);  // entries of the adjacency lists
  EXPECT_EQ(report.value("self_loops_removed", -1), 0);
  const auto j = info(path("cora"));
  expect_counts(j, 2708, 10556, 1433, 7, 140, 500, 1000);
  EXPECT_EQ(j.value("name", ""), "cora");
  EXPECT_EQ(j.value("num_labeled", -1), 2708);

  // Facts of PyG's Planetoid('Cora') (checked with the pickles and PyG's read_planetoid_data).
  const Dataset d = Dataset::open(path("cora"));
  EXPECT_TRUE(is_symmetric(test::read_csc(d)));
  EXPECT_EQ(in_neighbours(d, 0), (std::vector<int64_t>{633, 1862, 2582}));
  EXPECT_EQ(d.labels()[0], 3);
  EXPECT_EQ(std::vector<int32_t>(d.labels().begin(), d.labels().begin() + 5), (std::vector<int32_t>{3, 4, 4, 0, 3}));
  std::vector<int> train_per_class(7, 0);
  for (const int64_t v : d.split(Split::kTrain)) ++train_per_class[static_cast<std::size_t>(d.labels()[v])];
  EXPECT_EQ(train_per_class, std::vector<int>(7, 20));
  const auto train = d.split(Split::kTrain), valid = d.split(Split::kValid), test = d.split(Split::kTest);
  EXPECT_EQ(train.front(), 0);
  EXPECT_EQ(train.back(), 139);
  EXPECT_EQ(valid.front(), 140);
  EXPECT_EQ(valid.back(), 639);
  EXPECT_TRUE(std::is_sorted(test.begin(), test.end()));
  EXPECT_EQ(test.front(), 1708);
  EXPECT_EQ(test.back(), 2707);
  // Bag-of-words features: 0/1 everywhere; paper 0 has 9 words.
  std::vector<int64_t> ones_of_row0;
  bool binary = true;
  for (int64_t v = 0; v < 2708; ++v) {
    for (int64_t k = 0; k < 1433; ++k) {
      const float x = feature(d, v, k);
      binary = binary && (x == 0.0f || x == 1.0f);
      if (v == 0 && x == 1.0f) ones_of_row0.push_back(k);
    }
  }
  EXPECT_TRUE(binary);
  EXPECT_EQ(ones_of_row0, (std::vector<int64_t>{19, 81, 146, 315, 774, 877, 1194, 1247, 1274}));
}

TEST_F(PlanetoidCliTest, Citeseer) {
  const auto report = convert("citeseer");
  if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  EXPECT_EQ(report.value("input_edges", -1), 9464);
  EXPECT_EQ(report.value("self_loops_removed", -1), 248);
  const auto j = info(path("citeseer"));
  expect_counts(j, 3327, 9104, 3703, 6, 120, 500, 1000);
  // The 15 test ids missing from test.index are padded (zero features) and unlabeled.
  EXPECT_EQ(j.value("num_labeled", -1), 3312);

  const Dataset d = Dataset::open(path("citeseer"));
  EXPECT_TRUE(is_symmetric(test::read_csc(d)));
  EXPECT_EQ(in_neighbours(d, 0), (std::vector<int64_t>{628}));
  EXPECT_EQ(std::vector<int32_t>(d.labels().begin(), d.labels().begin() + 5), (std::vector<int32_t>{3, 1, 5, 5, 3}));
  std::set<int64_t> in_splits;
  for (const Split s : {Split::kTrain, Split::kValid, Split::kTest}) in_splits.insert(d.split(s).begin(), d.split(s).end());
  int unlabeled = 0;
  for (int64_t v = 0; v < 3327; ++v) {
    if (d.labels()[v] >= 0) continue;
    ++unlabeled;
    EXPECT_EQ(in_splits.count(v), 0u) << "unlabeled node " << v << " is in a split";
    float sum = 0;
    for (int64_t k = 0; k < 3703; ++k) sum += feature(d, v, k);
    EXPECT_EQ(sum, 0.0f) << "padded node " << v;
  }
  EXPECT_EQ(unlabeled, 15);
}

// ---------------------------------------------------------------------------------------------

// The 5-node graph of the library tests (tests/graph_convert/convert_test.cpp), in-neighbours
// 0 <- {2}, 1 <- {0}, 2 <- {0, 1, 3}, 3 <- {4}, 4 <- {3}; plus the self-loop 2 -> 2.
constexpr const char* kEdges = "# src dst\n0 1\n0,2\n1\t2\n2 0\n3 2\n2 2\n0 1\n4, 3\n3 4\n";

TEST_F(ConvertCliTest, EdgeListOptions) {
  test::write_file(path("e.txt"), kEdges);
  test::write_gzip(path("e.txt.gz"), kEdges);
  const auto r = run_json({"convert", "edge-list", path("e.txt"), "-o", path("plain")});
  EXPECT_EQ(r.value("input_edges", -1), 9);
  EXPECT_EQ(r.value("self_loops_removed", -1), 1);
  EXPECT_EQ(r.value("duplicates_removed", -1), 1);
  EXPECT_EQ(test::read_csc(Dataset::open(path("plain"))), (Csc{{0, 1, 2, 5, 6, 7}, {2, 0, 0, 1, 3, 4, 3}}));

  EXPECT_EQ(run_json({"convert", "edge-list", path("e.txt.gz"), "-o", path("gz")}).value("format", ""), "edge list (gzip)");
  EXPECT_EQ(test::read_csc(Dataset::open(path("gz"))), test::read_csc(Dataset::open(path("plain"))));

  run_json({"convert", "edge-list", path("e.txt.gz"), "-o", path("sym"), "--symmetrize", "--name", "five"});
  EXPECT_EQ(test::read_csc(Dataset::open(path("sym"))), (Csc{{0, 2, 4, 7, 9, 10}, {1, 2, 0, 2, 0, 1, 3, 2, 4, 3}}));
  EXPECT_EQ(info(path("sym")).value("name", ""), "five");

  run_json({"convert", "edge-list", path("e.txt"), "-o", path("loops"), "--keep-self-loops", "--num-nodes", "7"});
  EXPECT_EQ(test::read_csc(Dataset::open(path("loops"))), (Csc{{0, 1, 2, 6, 7, 8, 8, 8}, {2, 0, 0, 1, 2, 3, 4, 3}}));

  // The text form of info reads the same counts.
  const auto text = test::run_cli({"info", path("sym")});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("nodes      5\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("edges      10 (int32 indices)"), std::string::npos) << text.out;
}

TEST_F(ConvertCliTest, EdgeListErrorsNameFileAndLine) {
  test::write_file(path("bad.txt"), "0 1\n1 2\n2 two\n");
  auto r = test::run_cli({"-q", "convert", "edge-list", path("bad.txt"), "-o", path("out")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("graphtier: error: " + path("bad.txt") + ":3: expected two non-negative integer node ids"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(path("out")));

  test::write_file(path("e.txt"), kEdges);
  r = test::run_cli({"-q", "convert", "edge-list", path("e.txt"), "-o", path("out"), "--num-nodes", "4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(path("e.txt") + ":9: node id 4 is out of range [0, 4)"), std::string::npos) << r.err;

  test::write_gzip(path("e.gz"), std::string(kEdges) + std::string(kEdges));
  const std::string gz = test::read_file(path("e.gz"));
  test::write_file(path("cut.gz"), gz.substr(0, gz.size() / 2));
  r = test::run_cli({"-q", "convert", "edge-list", path("cut.gz"), "-o", path("out")});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(path("cut.gz") + ": gzip stream ends early"), std::string::npos) << r.err;

  // An existing output is kept unless --overwrite is given.
  run_json({"convert", "edge-list", path("e.txt"), "-o", path("ds")});
  r = test::run_cli({"-q", "convert", "edge-list", path("e.txt"), "-o", path("ds"), "--symmetrize"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--overwrite"), std::string::npos) << r.err;
  run_json({"convert", "edge-list", path("e.txt"), "-o", path("ds"), "--symmetrize", "--overwrite"});
  EXPECT_EQ(Dataset::open(path("ds")).num_edges(), 10);
}

TEST_F(ConvertCliTest, NpyArrays) {
  // Edges as [E, 2] int32 pairs; a [2, 2]-shaped file would be ambiguous, this one is not.
  test::write_npy_file(path("edges.npy"), NpyType::kInt32, {4, 2}, std::vector<int32_t>{0, 1, 1, 2, 2, 0, 3, 0});
  const std::vector<double> feat{0.5, 1.0, -2.0, 0.25, 3.0, 4.0, 1e-3, 65504.0};
  test::write_npy_file(path("feat.npy"), NpyType::kFloat64, {4, 2}, feat);
  test::write_npy_file(path("labels.npy"), NpyType::kInt64, {4}, std::vector<int64_t>{1, 0, -1, 2});
  test::write_npy_file(path("train.npy"), NpyType::kBool, {4}, std::vector<uint8_t>{1, 1, 0, 0});
  test::write_npy_file(path("test.npy"), NpyType::kInt64, {1}, std::vector<int64_t>{3});
  const auto r = run_json({"convert", "npy", "--edge-index", path("edges.npy"), "--edge-layout", "Ex2", "--features",
                           path("feat.npy"), "--labels", path("labels.npy"), "--train", path("train.npy"), "--test",
                           path("test.npy"), "--dtype", "float16", "--align", "512", "-o", path("out")});
  EXPECT_EQ(r.value("feature_dtype", ""), "float16");
  EXPECT_EQ(r.value("num_labeled", -1), 3);
  const auto j = info(path("out"));
  expect_counts(j, 4, 4, 2, 3, 2, 0, 1);
  EXPECT_EQ(j.value("row_stride", -1), 4);
  EXPECT_EQ(j.value("alignment", -1), 512);
  const Dataset d = Dataset::open(path("out"));
  EXPECT_EQ(test::read_csc(d), (Csc{{0, 2, 3, 4, 4}, {2, 3, 0, 1}}));
  // All these values are exact in float16: 0x3800 0x3C00 | 0xC000 0x3400 | 0x4200 0x4400 | ~1e-3 0x7BFF
  std::vector<uint16_t> halves(8);
  std::memcpy(halves.data(), d.feature_bytes().data(), 16);
  EXPECT_EQ(halves, (std::vector<uint16_t>{0x3800, 0x3C00, 0xC000, 0x3400, 0x4200, 0x4400, 0x1419, 0x7BFF}));

  auto bad = test::run_cli({"-q", "convert", "npy", "--edge-index", path("edges.npy"), "--edge-layout", "3xE", "-o",
                            path("bad")});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--edge-layout must be auto, 2xE or Ex2, got '3xE'"), std::string::npos) << bad.err;
  bad = test::run_cli({"-q", "convert", "npy", "--edge-index", path("edges.npy"), "--edge-layout", "2xE", "-o", path("bad")});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find(path("edges.npy") + ": edge_index has shape (4, 2), not [2, E]"), std::string::npos) << bad.err;
  bad = test::run_cli({"-q", "convert", "npy", "--edge-index", path("edges.npy"), "--dtype", "int8", "-o", path("bad")});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_FALSE(fs::exists(path("bad")));
}

/// A tiny OGB node-property dataset in the raw CSV layout: 4 nodes, edges stored one way.
void write_tiny_ogb(const std::string& root) {
  fs::create_directories(root + "/raw");
  fs::create_directories(root + "/split/species");
  test::write_gzip(root + "/raw/edge.csv.gz", "0,1\n1,2\n2,3\n3,0\n");
  test::write_gzip(root + "/raw/node-feat.csv.gz", "1,2\n3,4\n5,6\n7,8\n");
  test::write_gzip(root + "/raw/node-label.csv.gz", "0\n1\n1\n0\n");
  test::write_gzip(root + "/raw/num-node-list.csv.gz", "4\n");
  test::write_gzip(root + "/raw/num-edge-list.csv.gz", "4\n");
  test::write_gzip(root + "/split/species/train.csv.gz", "0\n1\n");
  test::write_gzip(root + "/split/species/valid.csv.gz", "2\n");
  test::write_gzip(root + "/split/species/test.csv.gz", "3\n");
}

TEST_F(ConvertCliTest, OgbRawCsv) {
  write_tiny_ogb(path("ogbn_tiny"));
  auto r = run_json({"convert", "ogb", "--root", path("ogbn_tiny"), "-o", path("directed")});
  EXPECT_EQ(r.value("format", ""), "ogb (csv)");
  expect_counts(info(path("directed")), 4, 4, 2, 2, 2, 1, 1);
  EXPECT_EQ(test::read_csc(Dataset::open(path("directed"))), (Csc{{0, 1, 2, 3, 4}, {3, 0, 1, 2}}));

  run_json({"convert", "ogb", "--root", path("ogbn_tiny"), "--split", "species", "--symmetrize", "-o", path("sym")});
  const Dataset d = Dataset::open(path("sym"));
  EXPECT_EQ(test::read_csc(d), (Csc{{0, 2, 4, 6, 8}, {1, 3, 0, 2, 1, 3, 0, 2}}));
  EXPECT_EQ(feature(d, 3, 0), 7.0f);
  EXPECT_EQ(feature(d, 3, 1), 8.0f);
  EXPECT_NE(d.manifest().source.find("symmetrized"), std::string::npos) << d.manifest().source;

  auto bad = test::run_cli({"-q", "convert", "ogb", "--root", path("ogbn_tiny"), "--format", "npz", "-o", path("bad")});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find(path("ogbn_tiny") + "/raw/data.npz"), std::string::npos) << bad.err;
  bad = test::run_cli({"-q", "convert", "ogb", "--root", path("ogbn_tiny"), "--split", "time", "-o", path("bad")});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find(path("ogbn_tiny") + "/split/time does not exist"), std::string::npos) << bad.err;
}

TEST_F(ConvertCliTest, IgbNpyLayout) {
  const std::string processed = path("igb") + "/tiny/processed";
  fs::create_directories(processed + "/paper");
  fs::create_directories(processed + "/paper__cites__paper");
  test::write_npy_file(processed + "/paper__cites__paper/edge_index.npy", NpyType::kInt64, {3, 2},
                       std::vector<int64_t>{0, 1, 1, 2, 9, 0});
  std::vector<float> feat(10 * 3);
  for (std::size_t i = 0; i < feat.size(); ++i) feat[i] = static_cast<float>(i);
  test::write_npy_file(processed + "/paper/node_feat.npy", NpyType::kFloat32, {10, 3}, feat);
  test::write_npy_file(processed + "/paper/node_label_19.npy", NpyType::kFloat32, {10},
                       std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 18});
  run_json({"convert", "igb", "--root", path("igb"), "--size", "tiny", "--labeled-nodes", "8", "--train-fraction", "0.5",
            "--valid-fraction", "0.25", "-o", path("out")});
  const auto j = info(path("out"));
  expect_counts(j, 10, 3, 3, 19, 4, 2, 2);
  EXPECT_EQ(j.value("num_labeled", -1), 8);
  const Dataset d = Dataset::open(path("out"));
  EXPECT_EQ(test::read_csc(d), (Csc{{0, 1, 2, 3, 3, 3, 3, 3, 3, 3, 3}, {9, 0, 1}}));
  EXPECT_EQ(std::memcmp(d.feature_bytes().data(), feat.data(), feat.size() * 4), 0);
  EXPECT_EQ(d.labels()[8], -1);
  EXPECT_EQ(d.labels()[9], -1);

  const auto bad = test::run_cli({"-q", "convert", "igb", "--root", path("igb"), "--size", "tiny", "--label-classes", "20",
                                  "-o", path("bad")});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("IGB label classes must be 19 or 2983, got 20"), std::string::npos) << bad.err;
}

TEST_F(ConvertCliTest, TypedEdgeListAcmInfoVerifyAndPrepare) {
  const std::string acm = test::datasets_dir() + "/acm";
  const auto report = run_json({"convert", "typed-edge-list", acm + "/edge.txt.gz", "--labels", acm + "/label.txt.gz",
                                "--split", "0.2,0.1", "--seed", "0", "-o", path("acm")});
  EXPECT_EQ(report.value("node_types", -1), 3);
  EXPECT_EQ(report.value("relations", -1), 4);
  const auto j = info(path("acm"));
  expect_counts(j, 11246, 34852, 0, 3, 803, 401, 2815);
  const auto& typed = j["typed"];
  ASSERT_EQ(typed["node_types"].size(), 3u);
  EXPECT_EQ(typed["node_types"][1]["name"], "a");
  EXPECT_EQ(typed["node_types"][1]["begin"], 4019);
  EXPECT_EQ(typed["node_types"][1]["num_nodes"], 7167);
  ASSERT_EQ(typed["relations"].size(), 4u);
  EXPECT_EQ(typed["relations"][2]["name"], "p:to:s");
  EXPECT_EQ(typed["relations"][2]["num_edges"], 4019);
  EXPECT_EQ(typed["relations"][2]["reverse"], "s:to:p");
  EXPECT_EQ(typed["labelled_type"], "p");

  const auto text = test::run_cli({"-q", "info", path("acm")});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("node types 3 (labelled: p)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("a:to:p"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("13407 edges, reverse p:to:a"), std::string::npos) << text.out;

  const auto verified = test::run_cli({"-q", "verify", path("acm")});
  EXPECT_EQ(verified.exit_code, 0) << verified.err;
  EXPECT_NE(verified.out.find("relations  4"), std::string::npos) << verified.out;
  const auto verified_json = run_json({"verify", path("acm")});
  EXPECT_EQ(verified_json["typed"]["relations"][0]["num_edges"], 13407);

  // prepare keeps the types (renumbering within each type's range).
  const auto prepared = test::run_cli({"-q", "prepare", "-d", path("acm"), "-o", path("acm-degree"), "--hotness", "degree"});
  EXPECT_EQ(prepared.exit_code, 0) << prepared.err;
  EXPECT_EQ(info(path("acm-degree"))["typed"]["relations"], typed["relations"]);

  const auto bad = test::run_cli({"-q", "convert", "typed-edge-list", acm + "/edge.txt.gz", "--split", "0.2", "-o",
                                  path("bad")});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--split must be two fractions TRAIN,VAL"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace graphtier
