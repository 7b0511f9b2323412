// Typed datasets (docs/format.md, Heterogeneous datasets): a golden tiny graph written and read
// back, and every check of Dataset::open and Manifest::from_json refusing its broken input with
// the file and the problem named.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/graph/dataset.hpp"
#include "test_util.hpp"

namespace graphtier::graph {
namespace {

// paper [0, 3), author [3, 5). Relations: 0 paper:cites:paper, 1 author:writes:paper,
// 2 paper:written_by:author (1 and 2 reverse each other). Edges (source -> column):
// cites 1->0 2->0 2->1; writes 3->0 4->0 4->2; written_by 0->3 0->4 2->4.
struct TypedArrays {
  std::vector<int64_t> indptr{0, 4, 5, 6, 7, 9};
  std::vector<int32_t> indices{1, 2, 3, 4, 2, 4, 0, 0, 2};
  std::vector<uint8_t> type_per_edge{0, 0, 1, 1, 0, 1, 2, 2, 2};
  std::vector<float> paper_features{0, 1, 2, 3, 4, 5};  // dim 2
  std::vector<float> author_features{7, 8};             // dim 1
  std::vector<int32_t> labels{0, 1, 0, -1, -1};
  std::vector<int64_t> train{0}, valid{1}, test{2};
  Manifest manifest = tiny_manifest();

  static Manifest tiny_manifest() {
    Manifest m;
    m.num_nodes = 5;
    m.num_edges = 9;
    m.num_classes = 2;
    HeteroSchema& s = m.hetero;
    s.node_types = {{"paper", FeatureLayout::make(2, DType::kFloat32, 0)},
                    {"author", FeatureLayout::make(1, DType::kFloat32, 0)}};
    s.node_type_offset = {0, 3, 5};
    s.relations = {{"cites", {0, 0}, -1}, {"writes", {1, 0}, 2}, {"written_by", {0, 1}, 1}};
    s.labelled_type = 0;
    return m;
  }
};

void write_typed(const std::string& dir, const TypedArrays& a) {
  DatasetWriter w(dir, false);
  w.write_array("indptr", std::span<const int64_t>(a.indptr));
  w.write_array("indices", std::span<const int32_t>(a.indices));
  w.write_array("type_per_edge", std::span<const uint8_t>(a.type_per_edge));
  w.write_array(HeteroSchema::feature_array("paper"), std::span<const float>(a.paper_features));
  w.write_array(HeteroSchema::feature_array("author"), std::span<const float>(a.author_features));
  if (!a.labels.empty()) w.write_array("labels", std::span<const int32_t>(a.labels));
  w.write_array("train", std::span<const int64_t>(a.train));
  w.write_array("valid", std::span<const int64_t>(a.valid));
  w.write_array("test", std::span<const int64_t>(a.test));
  w.commit(a.manifest);
}

/// Expects writing the tiny graph changed by `change` to be refused (the writer's commit opens
/// the dataset) with a FormatError naming `file` and `problem`.
void expect_refused(const std::function<void(TypedArrays&)>& change, const std::string& file,
                    const std::string& problem) {
  test::TempDir tmp;
  TypedArrays a;
  change(a);
  try {
    write_typed(tmp / "ds", a);
    ADD_FAILURE() << "a typed dataset with a bad " << file << " was accepted";
  } catch (const FormatError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(file), std::string::npos) << what;
    EXPECT_NE(what.find(problem), std::string::npos) << what;
  }
}

/// The tiny graph's manifest as JSON, for the manifest-only checks.
nlohmann::json tiny_json() { return nlohmann::json::parse(TypedArrays::tiny_manifest().to_json()); }

void expect_manifest_refused(const nlohmann::json& j, const std::string& problem) {
  try {
    Manifest::from_json(j.dump(), "manifest.json");
    ADD_FAILURE() << "a manifest without " << problem << " was accepted";
  } catch (const FormatError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("manifest.json"), std::string::npos) << what;
    EXPECT_NE(what.find(problem), std::string::npos) << what;
  }
}

TEST(HeteroDataset, GoldenTinyGraphRoundTrips) {
  test::TempDir tmp;
  write_typed(tmp / "ds", TypedArrays{});
  const Dataset d = Dataset::open(tmp / "ds");
  ASSERT_TRUE(d.is_hetero());
  const HeteroView view = d.hetero();
  EXPECT_EQ(view.num_node_types(), 2);
  EXPECT_EQ(view.num_relations(), 3);
  EXPECT_EQ(std::vector<int64_t>(view.node_type_offset.begin(), view.node_type_offset.end()),
            (std::vector<int64_t>{0, 3, 5}));
  EXPECT_EQ(view.relations[1].src_type, 1);
  EXPECT_EQ(view.relations[1].dst_type, 0);
  EXPECT_EQ(std::vector<uint8_t>(view.type_per_edge.begin(), view.type_per_edge.end()),
            (std::vector<uint8_t>{0, 0, 1, 1, 0, 1, 2, 2, 2}));

  const HeteroSchema& s = d.schema();
  EXPECT_EQ(s.relation_name(2), "paper:written_by:author");
  EXPECT_EQ(s.find_relation("author:writes:paper"), 1);
  EXPECT_EQ(s.find_relation("writes"), -1);
  EXPECT_EQ(s.find_node_type("author"), 1);
  EXPECT_EQ(s.find_node_type("venue"), -1);
  EXPECT_EQ(s.relations[1].reverse, 2);
  EXPECT_EQ(s.relations[0].reverse, -1);
  EXPECT_EQ(s.labelled_type, 0);
  EXPECT_EQ(s.type_of(2), 0);
  EXPECT_EQ(s.type_of(3), 1);

  ASSERT_EQ(d.type_feature_bytes(0).size(), 24u);
  EXPECT_EQ(reinterpret_cast<const float*>(d.type_feature_bytes(0).data())[5], 5.0f);
  ASSERT_EQ(d.type_feature_bytes(1).size(), 8u);
  EXPECT_EQ(reinterpret_cast<const float*>(d.type_feature_bytes(1).data())[1], 8.0f);
  EXPECT_THROW(d.type_feature_bytes(2), OutOfRange);
  EXPECT_FALSE(d.has_features());

  // The per-type tables and type_per_edge are listed, so checksums cover them.
  EXPECT_EQ(d.manifest().files.at("features.author").path, "features.author.bin");
  EXPECT_EQ(d.manifest().files.at("type_per_edge").path, "type_per_edge.bin");
  EXPECT_NO_THROW(d.verify_checksums());

  // The section as written, by hand.
  const auto j = nlohmann::json::parse(test::read_file(tmp / "ds/manifest.json"));
  EXPECT_EQ(j["hetero"]["node_type_offset"], nlohmann::json({0, 3, 5}));
  EXPECT_EQ(j["hetero"]["relations"][2]["name"], "paper:written_by:author");
  EXPECT_EQ(j["hetero"]["relations"][2]["reverse"], "author:writes:paper");
  EXPECT_FALSE(j["hetero"]["relations"][0].contains("reverse"));
  EXPECT_EQ(j["hetero"]["labelled_type"], "paper");
  EXPECT_EQ(j["hetero"]["node_types"][1]["features"]["row_stride"], 4);
}

TEST(HeteroDataset, AHomogeneousDatasetIsTheEmptyViewAndItsManifestIsUnchanged) {
  test::TempDir tmp;
  {
    DatasetWriter w(tmp / "ds", false);
    const std::vector<int64_t> indptr{0, 1, 1};
    const std::vector<int32_t> indices{1};
    w.write_array("indptr", std::span<const int64_t>(indptr));
    w.write_array("indices", std::span<const int32_t>(indices));
    Manifest m;
    m.num_nodes = 2;
    m.num_edges = 1;
    w.commit(m);
  }
  const Dataset d = Dataset::open(tmp / "ds");
  EXPECT_FALSE(d.is_hetero());
  EXPECT_TRUE(d.hetero().empty());
  EXPECT_EQ(d.hetero().num_node_types(), 0);
  const std::string text = test::read_file(tmp / "ds/manifest.json");
  EXPECT_EQ(text.find("hetero"), std::string::npos);
  EXPECT_EQ(Manifest::from_json(text, "manifest.json").to_json(), text);
}

TEST(HeteroDataset, OneTypeOneRelationIsAccepted) {
  test::TempDir tmp;
  DatasetWriter w(tmp / "ds", false);
  const std::vector<int64_t> indptr{0, 1, 1};
  const std::vector<int32_t> indices{1};
  const std::vector<uint8_t> type_per_edge{0};
  w.write_array("indptr", std::span<const int64_t>(indptr));
  w.write_array("indices", std::span<const int32_t>(indices));
  w.write_array("type_per_edge", std::span<const uint8_t>(type_per_edge));
  Manifest m;
  m.num_nodes = 2;
  m.num_edges = 1;
  m.hetero.node_types = {{"node", {}}};
  m.hetero.node_type_offset = {0, 2};
  m.hetero.relations = {{"to", {0, 0}, 0}};  // its own reverse
  w.commit(m);
  const Dataset d = Dataset::open(tmp / "ds");
  EXPECT_EQ(d.hetero().num_relations(), 1);
  EXPECT_EQ(d.schema().relation_name(0), "node:to:node");
}

TEST(HeteroDataset, RefusesEdgesThatBreakTheirRelation) {
  expect_refused([](TypedArrays& a) { a.type_per_edge[4] = 3; }, "type_per_edge.bin", "relation 3 of edge 4 (column 1) is out of range [0, 3)");
  // Column 0 with its relations out of order (the sources moved with them).
  expect_refused(
      [](TypedArrays& a) {
        a.indices = {3, 1, 2, 4, 2, 4, 0, 0, 2};
        a.type_per_edge = {1, 0, 0, 1, 0, 1, 2, 2, 2};
      },
      "type_per_edge.bin", "edges of column 0 are not sorted by relation: edge 1 has relation 0 after 1");
  expect_refused([](TypedArrays& a) { a.indices[3] = 0; }, "type_per_edge.bin",
                 "edge 3 of relation author:writes:paper starts at node 0 of type paper, not of type author");
  expect_refused([](TypedArrays& a) { a.type_per_edge[6] = 0; }, "type_per_edge.bin",
                 "edge 6 of relation paper:cites:paper ends at node 3 of type author, not of type paper");
  expect_refused([](TypedArrays& a) { a.type_per_edge.pop_back(); }, "type_per_edge.bin", "expected 9");
}

TEST(HeteroDataset, RefusesLabelsAndSplitsOutsideTheLabelledType) {
  expect_refused([](TypedArrays& a) { a.labels[3] = 1; }, "labels.bin",
                 "node 3 of type author has label 1, but only type paper is labelled");
  expect_refused([](TypedArrays& a) { a.valid = {4}; }, "valid.bin",
                 "node 4 at position 0 is of type author, not of the labelled type paper [0, 3)");
  expect_refused(
      [](TypedArrays& a) {
        a.manifest.num_classes = 0;
        a.manifest.hetero.labelled_type = -1;
        a.labels.clear();
      },
      "train.bin", "needs hetero.labelled_type");
}

TEST(HeteroDataset, RefusesMissingOrMisfitArrays) {
  expect_refused([](TypedArrays& a) { a.paper_features.pop_back(); }, "features.paper.bin", "expected 24");
  expect_refused([](TypedArrays& a) { a.manifest.hetero.node_types[1].features = {}; }, "manifest.json",
                 "unknown array 'features.author'");
  // The writer lists exactly the arrays written: without type_per_edge, or with it and no section.
  test::TempDir tmp;
  {
    DatasetWriter w(tmp / "a", false);
    const TypedArrays a;
    w.write_array("indptr", std::span<const int64_t>(a.indptr));
    w.write_array("indices", std::span<const int32_t>(a.indices));
    Manifest m = a.manifest;
    m.num_classes = 0;
    m.hetero.labelled_type = -1;
    for (auto& t : m.hetero.node_types) t.features = {};
    try {
      w.commit(m);
      ADD_FAILURE() << "a typed dataset without type_per_edge was accepted";
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find("needs a 'type_per_edge' array"), std::string::npos) << e.what();
    }
  }
  {
    DatasetWriter w(tmp / "b", false);
    const TypedArrays a;
    w.write_array("indptr", std::span<const int64_t>(a.indptr));
    w.write_array("indices", std::span<const int32_t>(a.indices));
    w.write_array("type_per_edge", std::span<const uint8_t>(a.type_per_edge));
    Manifest m;
    m.num_nodes = 5;
    m.num_edges = 9;
    try {
      w.commit(m);
      ADD_FAILURE() << "type_per_edge without a hetero section was accepted";
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find("there is no hetero section"), std::string::npos) << e.what();
    }
  }
}

TEST(HeteroManifest, RoundTripsThroughJson) {
  const std::string text = TypedArrays::tiny_manifest().to_json();
  EXPECT_EQ(Manifest::from_json(text, "manifest.json").to_json(), text);
}

TEST(HeteroManifest, RefusesOffsetsThatDoNotCoverTheNodes) {
  auto j = tiny_json();
  j["hetero"]["node_type_offset"] = {0, 3, 4};
  expect_manifest_refused(j, "node_type_offset ends at 4, expected num_nodes = 5");
  j["hetero"]["node_type_offset"] = {0, 6, 5};
  expect_manifest_refused(j, "node_type_offset decreases at entry 2");
  j["hetero"]["node_type_offset"] = {1, 3, 5};
  expect_manifest_refused(j, "node_type_offset[0] is 1");
  j["hetero"]["node_type_offset"] = {0, 5};
  expect_manifest_refused(j, "node_type_offset has 2 entries, expected 3");
  j["hetero"]["node_type_offset"] = {0, "3", 5};
  expect_manifest_refused(j, "field hetero.node_type_offset[1]: expected a 64-bit integer");
}

TEST(HeteroManifest, RefusesUnsafeOrRepeatedNames) {
  for (const char* bad : {"pa/per", "../x", "a.b", "", "a-b", "a:b", "p\xc3\xa9"}) {
    auto j = tiny_json();
    j["hetero"]["node_types"][0]["name"] = bad;
    expect_manifest_refused(j, "is not a valid type name");
  }
  auto j = tiny_json();
  j["hetero"]["node_types"][1]["name"] = "paper";
  expect_manifest_refused(j, "node type 'paper' appears twice");
  j = tiny_json();
  j["hetero"]["relations"][0]["name"] = "paper:cites";
  expect_manifest_refused(j, "is not written src:rel:dst");
  j["hetero"]["relations"][0]["name"] = "paper:ci.tes:paper";
  expect_manifest_refused(j, "is not written src:rel:dst");
  j["hetero"]["relations"][0]["name"] = "paper:cites:venue";
  expect_manifest_refused(j, "no node type 'venue'");
  j["hetero"]["relations"][0]["name"] = "author:writes:paper";
  expect_manifest_refused(j, "relation 'author:writes:paper' appears twice");
}

TEST(HeteroManifest, RefusesABrokenReverseMap) {
  auto j = tiny_json();
  j["hetero"]["relations"][2].erase("reverse");
  expect_manifest_refused(j, "whose reverse is not set (the reverse map must be symmetric)");
  j = tiny_json();
  j["hetero"]["relations"][0]["reverse"] = "author:writes:paper";
  j["hetero"]["relations"][1]["reverse"] = "paper:cites:paper";
  j["hetero"]["relations"][2].erase("reverse");
  expect_manifest_refused(j, "whose node types are not swapped");
  j = tiny_json();
  j["hetero"]["relations"][0]["reverse"] = "paper:cited_by:paper";
  expect_manifest_refused(j, "reverse 'paper:cited_by:paper' is not a relation");
}

TEST(HeteroManifest, RefusesMoreRelationsThanAByteHolds) {
  auto j = tiny_json();
  auto& relations = j["hetero"]["relations"];
  relations = nlohmann::json::array();
  for (int r = 0; r <= kMaxRelations; ++r) relations.push_back({{"name", "paper:r" + std::to_string(r) + ":paper"}});
  expect_manifest_refused(j, "relations has 257 entries, at most 256");
  relations.erase(relations.begin());
  EXPECT_NO_THROW(Manifest::from_json(j.dump(), "manifest.json"));
}

TEST(HeteroManifest, RefusesAGlobalFeatureTableOrAMissingLabelledType) {
  auto j = tiny_json();
  j["features"] = {{"dim", 2}, {"dtype", "float32"}, {"alignment", 0}, {"row_stride", 8}};
  expect_manifest_refused(j, "keeps its features per node type");
  j = tiny_json();
  j["hetero"].erase("labelled_type");
  expect_manifest_refused(j, "num_classes > 0 but hetero.labelled_type is missing");
  j["hetero"]["labelled_type"] = "venue";
  expect_manifest_refused(j, "labelled_type 'venue' is not a node type");
  j = tiny_json();
  j["hetero"]["node_types"][0]["features"]["row_stride"] = 16;
  expect_manifest_refused(j, "hetero.node_types[0].features.row_stride 16 does not match");
  j = tiny_json();
  j["hetero"]["node_types"] = nlohmann::json::array();
  expect_manifest_refused(j, "node_types is empty");
}

}  // namespace
}  // namespace graphtier::graph
