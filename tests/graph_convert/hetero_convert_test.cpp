// Typed datasets from per-relation inputs: OGB-MAG's raw layout (convert_ogb on a tree with
// raw/num-node-dict.csv.gz) and IGBH's processed layout (convert_igb with IgbInput::hetero), each
// on a tiny tree written here whose typed CSC is worked out by hand, with reverses added, and the
// malformed inputs refused with the file and what is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "graph_convert/convert_test_util.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::graph {
namespace {

using test::error_of;
using test::expect_mentions;
using test::write_gzip;
using test::write_npy_file;

namespace fs = std::filesystem;

/// (relation, global src, global dst) of every stored edge, in CSC order.
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

std::vector<std::string> relation_names(const Dataset& d) {
  std::vector<std::string> names;
  for (int r = 0; r < d.schema().num_relations(); ++r) names.push_back(d.schema().relation_name(r));
  return names;
}

/// Every reverse holds exactly its relation's edges reversed.
void expect_reverses_exact(const Dataset& d) {
  const HeteroSchema& s = d.schema();
  std::vector<std::set<std::pair<int64_t, int64_t>>> by_relation(static_cast<std::size_t>(s.num_relations()));
  for (const auto& [r, src, dst] : typed_edges(d)) by_relation[static_cast<std::size_t>(r)].emplace(src, dst);
  for (int r = 0; r < s.num_relations(); ++r) {
    const int q = s.relations[static_cast<std::size_t>(r)].reverse;
    ASSERT_GE(q, 0) << s.relation_name(r);
    std::set<std::pair<int64_t, int64_t>> reversed;
    for (const auto& [src, dst] : by_relation[static_cast<std::size_t>(r)]) reversed.emplace(dst, src);
    EXPECT_EQ(reversed, by_relation[static_cast<std::size_t>(q)]) << s.relation_name(r);
  }
}

class HeteroConvertTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return tmp_ / name; }
  std::string out() { return tmp_ / ("out" + std::to_string(outputs_++)); }
  ConvertReport convert_ogb_at(const std::string& root, const std::string& to) {
    ThreadPool pool(2);
    OgbInput in;
    in.root = root;
    return convert_ogb(in, to, ConvertOptions{}, pool);
  }

  // ---- OGB-MAG ----
  // Types listed out of order; sorted: author 0..2, field_of_study 3..4, institution 5,
  // paper 6..9. Relations sorted, then their reverses: 0 author:affiliated_with:institution,
  // 1 author:writes:paper, 2 paper:cites:paper, 3 paper:has_topic:field_of_study, 4..7 rev_*.
  std::string write_mag() {
    const std::string root = path("ogbn_mag"), raw = root + "/raw";
    const auto relation = [&](const std::string& name, const std::string& edges, int count) {
      fs::create_directories(raw + "/relations/" + name);
      write_gzip(raw + "/relations/" + name + "/edge.csv.gz", edges);
      write_gzip(raw + "/relations/" + name + "/num-edge-list.csv.gz", std::to_string(count) + "\n");
      write_gzip(raw + "/relations/" + name + "/edge_reltype.csv.gz", std::string(static_cast<std::size_t>(count), '0'));
    };
    fs::create_directories(raw);
    write_gzip(raw + "/num-node-dict.csv.gz", "paper,author,institution,field_of_study\n4,3,1,2\n");
    write_gzip(raw + "/triplet-type-list.csv.gz",
               "author,affiliated_with,institution\nauthor,writes,paper\npaper,cites,paper\npaper,has_topic,field_of_study\n");
    relation("author___affiliated_with___institution", "0,0\n1,0\n", 2);
    relation("author___writes___paper", "0,0\n0,1\n2,3\n", 3);
    relation("paper___cites___paper", "0,1\n1,2\n3,0\n", 3);
    relation("paper___has_topic___field_of_study", "0,0\n1,1\n3,1\n", 3);
    fs::create_directories(raw + "/node-feat/paper");
    write_gzip(raw + "/node-feat/paper/node-feat.csv.gz", "0.5,1\n2,3\n4,5\n6,7.25\n");
    fs::create_directories(raw + "/node-label/paper");
    write_gzip(raw + "/node-label/paper/node-label.csv.gz", "0\n1\n2\n1\n");
    fs::create_directories(raw + "/node_year/paper");
    fs::create_directories(root + "/split/time/paper");
    write_gzip(root + "/split/time/paper/train.csv.gz", "1\n0\n");
    write_gzip(root + "/split/time/paper/valid.csv.gz", "2\n");
    write_gzip(root + "/split/time/paper/test.csv.gz", "3\n");
    return root;
  }

  // ---- IGBH ----
  // Types sorted: author 0..2, fos 3..4, institute 5, paper 6..9; relation directories sorted:
  // 0 author__affiliated_to__institute, 1 paper__cites__paper, 2 paper__topic__fos,
  // 3 paper__written_by__author, then 4..7 their reverses.
  std::string write_igbh() {
    const std::string root = path("igb"), processed = root + "/tiny/processed";
    const auto feat = [&](const std::string& type, int64_t rows, int64_t dim) {
      fs::create_directories(processed + "/" + type);
      std::vector<float> values(static_cast<std::size_t>(rows * dim));
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) + 0.5f;
      write_npy_file(processed + "/" + type + "/node_feat.npy", NpyType::kFloat32, {rows, dim}, values);
    };
    const auto relation = [&](const std::string& name, const std::vector<int64_t>& pairs) {
      fs::create_directories(processed + "/" + name);
      write_npy_file(processed + "/" + name + "/edge_index.npy", NpyType::kInt64,
                     {static_cast<int64_t>(pairs.size() / 2), 2}, pairs);
    };
    feat("paper", 4, 3);
    feat("author", 3, 2);
    feat("institute", 1, 2);
    feat("fos", 2, 2);
    relation("paper__cites__paper", {0, 1, 1, 2, 3, 0, 2, 2});  // (2, 2) is a self-loop
    relation("paper__written_by__author", {0, 0, 1, 0, 3, 2});
    relation("author__affiliated_to__institute", {0, 0, 1, 0});
    relation("paper__topic__fos", {0, 0, 1, 1, 3, 1, 3, 1});  // (3, 1) twice
    write_npy_file(processed + "/paper/node_label_19.npy", NpyType::kFloat32, {4}, std::vector<float>{3, 1, 18, 0});
    return root;
  }
  ConvertReport convert_igbh_at(const std::string& root, const std::string& to) {
    ThreadPool pool(2);
    IgbInput in;
    in.root = root;
    in.size = "tiny";
    in.hetero = true;
    return convert_igb(in, to, ConvertOptions{}, pool);
  }

  test::TempDir tmp_;
  int outputs_ = 0;
};

TEST_F(HeteroConvertTest, OgbMagBecomesATypedDatasetWithReverses) {
  const std::string root = write_mag(), to = out();
  const ConvertReport report = convert_ogb_at(root, to);
  EXPECT_EQ(report.format, "ogb heterogeneous (csv)");
  EXPECT_EQ(report.num_node_types, 4);
  EXPECT_EQ(report.num_relations, 8);
  EXPECT_EQ(report.type_feature_tables, 1);
  const Dataset d = Dataset::open(to);
  const HeteroSchema& s = d.schema();
  ASSERT_EQ(s.num_node_types(), 4);
  EXPECT_EQ(s.node_types[0].name, "author");
  EXPECT_EQ(s.node_types[3].name, "paper");
  EXPECT_EQ(s.node_type_offset, (std::vector<int64_t>{0, 3, 5, 6, 10}));
  EXPECT_EQ(relation_names(d),
            (std::vector<std::string>{"author:affiliated_with:institution", "author:writes:paper", "paper:cites:paper",
                                      "paper:has_topic:field_of_study", "institution:rev_affiliated_with:author",
                                      "paper:rev_writes:author", "paper:rev_cites:paper",
                                      "field_of_study:rev_has_topic:paper"}));
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(s.relations[static_cast<std::size_t>(r)].reverse, r + 4);
    EXPECT_EQ(s.relations[static_cast<std::size_t>(r + 4)].reverse, r);
  }
  EXPECT_EQ(d.num_edges(), 2 * 11);
  expect_reverses_exact(d);
  // Column of paper 0 (global 6), by relation: author 0 writes it, paper 3 cites it, it cites
  // paper 1 (reversed), field 0 (global 3) is its topic (reversed).
  const auto indptr = d.indptr();
  std::vector<std::pair<int, int64_t>> column;
  for (const auto& [r, src, dst] : typed_edges(d)) {
    if (dst == 6) column.emplace_back(r, src);
  }
  EXPECT_EQ(column, (std::vector<std::pair<int, int64_t>>{{1, 0}, {2, 9}, {6, 7}, {7, 3}}));
  // Column of author 0: its papers 0 and 1 (rev_writes), its institution (rev_affiliated_with).
  column.clear();
  for (const auto& [r, src, dst] : typed_edges(d)) {
    if (dst == 0) column.emplace_back(r, src);
  }
  EXPECT_EQ(column, (std::vector<std::pair<int, int64_t>>{{4, 5}, {5, 6}, {5, 7}}));
  EXPECT_EQ(indptr.back(), d.num_edges());

  // Features on paper only, labels on paper, the time split in global ids.
  EXPECT_EQ(s.node_types[3].features.dim, 2);
  EXPECT_EQ(s.node_types[0].features.dim, 0);
  std::vector<float> paper_rows(8);
  ASSERT_EQ(d.type_feature_bytes(3).size(), 32u);
  std::memcpy(paper_rows.data(), d.type_feature_bytes(3).data(), 32);
  EXPECT_EQ(paper_rows, (std::vector<float>{0.5f, 1, 2, 3, 4, 5, 6, 7.25f}));
  EXPECT_EQ(s.labelled_type, 3);
  EXPECT_EQ(d.manifest().num_classes, 3);
  const auto labels = d.labels();
  EXPECT_EQ(std::vector<int32_t>(labels.begin(), labels.end()), (std::vector<int32_t>{-1, -1, -1, -1, -1, -1, 0, 1, 2, 1}));
  const auto train = d.split(Split::kTrain);
  EXPECT_EQ(std::vector<int64_t>(train.begin(), train.end()), (std::vector<int64_t>{7, 6}));
  EXPECT_EQ(d.split(Split::kValid)[0], 8);
  EXPECT_EQ(d.split(Split::kTest)[0], 9);

  // Without triplet-type-list.csv.gz the relations come from raw/relations/: the same dataset.
  fs::remove(root + "/raw/triplet-type-list.csv.gz");
  const std::string again = out();
  convert_ogb_at(root, again);
  EXPECT_EQ(Dataset::open(again).manifest().files.at("type_per_edge").xxh3, d.manifest().files.at("type_per_edge").xxh3);
  EXPECT_EQ(Dataset::open(again).manifest().files.at("indices").xxh3, d.manifest().files.at("indices").xxh3);
}

TEST_F(HeteroConvertTest, OgbMagMalformedInputsAreNamed) {
  const std::string root = write_mag(), raw = root + "/raw";
  const auto fails = [&](const std::string& what, std::initializer_list<std::string> parts) {
    const std::string to = out();
    const std::string message = error_of<std::invalid_argument>([&] { convert_ogb_at(root, to); });
    expect_mentions(message, parts);
    EXPECT_FALSE(fs::exists(to)) << what;
    fs::remove_all(root);  // restore
    write_mag();
  };
  write_gzip(raw + "/relations/author___writes___paper/edge.csv.gz", "0,0\n0,4\n");
  fails("id", {"author___writes___paper/edge.csv.gz", "edge 1 (0 -> 4)", "destination id 4 is out of range [0, 4)",
               "node type paper"});
  write_gzip(raw + "/relations/paper___cites___paper/edge.csv.gz", "0,1\n1;2\n");
  fails("syntax", {"paper___cites___paper/edge.csv.gz:2"});
  write_gzip(raw + "/num-node-dict.csv.gz", "paper,author,institution,field_of_study\n4,x,1,2\n");
  fails("count", {"num-node-dict.csv.gz", "the count of author is 'x'"});
  write_gzip(raw + "/num-node-dict.csv.gz", "paper,author\n4,3\n5,3\n");
  fails("graphs", {"num-node-dict.csv.gz", "has 3 lines"});
  write_gzip(raw + "/num-node-dict.csv.gz", "paper,author,institution\n4,3,1\n");
  fails("undeclared", {"relation paper:has_topic:field_of_study joins node type field_of_study",
                       "num-node-dict.csv.gz does not list"});
  write_gzip(raw + "/triplet-type-list.csv.gz", "author,writes\n");
  fails("triplet", {"triplet-type-list.csv.gz:1", "expected 'src_type,relation,dst_type'"});
  fs::remove(raw + "/relations/paper___cites___paper/edge.csv.gz");
  fails("missing", {"paper___cites___paper/edge.csv.gz does not exist"});
  fs::create_directories(raw + "/node-label/author");
  write_gzip(raw + "/node-label/author/node-label.csv.gz", "0\n0\n0\n");
  fails("two labelled types", {"node-label", "labels node types author and paper"});
  write_gzip(root + "/split/time/paper/valid.csv.gz", "4\n");
  fails("split id", {"split/time/paper/valid.csv.gz", "node id 4", "out of range [0, 4)"});
  write_gzip(raw + "/node-feat/paper/node-feat.csv.gz", "1,2\n3,4\n");
  fails("feature rows", {"node-feat.csv.gz"});
  ThreadPool pool(1);
  ConvertOptions symmetric;
  symmetric.symmetrize = true;
  OgbInput in;
  in.root = root;
  EXPECT_NE(error_of<InvalidArgument>([&] { convert_ogb(in, out(), symmetric, pool); }).find("rev_<relation>"),
            std::string::npos);
}

TEST_F(HeteroConvertTest, IgbhBecomesATypedDatasetWithReverses) {
  const std::string root = write_igbh(), to = out();
  const ConvertReport report = convert_igbh_at(root, to);
  EXPECT_EQ(report.num_node_types, 4);
  EXPECT_EQ(report.type_feature_tables, 4);
  const Dataset d = Dataset::open(to);
  const HeteroSchema& s = d.schema();
  EXPECT_EQ(s.node_type_offset, (std::vector<int64_t>{0, 3, 5, 6, 10}));
  EXPECT_EQ(s.node_types[1].name, "fos");
  EXPECT_EQ(relation_names(d),
            (std::vector<std::string>{"author:affiliated_to:institute", "paper:cites:paper", "paper:topic:fos",
                                      "paper:written_by:author", "institute:rev_affiliated_to:author",
                                      "paper:rev_cites:paper", "fos:rev_topic:paper", "author:rev_written_by:paper"}));
  expect_reverses_exact(d);
  // 2 + 3 (self-loop dropped) + 3 (repeat dropped) + 3 edges, each stored twice.
  EXPECT_EQ(d.num_edges(), 22);
  EXPECT_EQ(report.self_loops_removed, 2);
  EXPECT_EQ(report.duplicates_removed, 2);
  // Column of paper 0 (global 6): cited by paper 3, citing paper 1 (reversed), its topic fos 0
  // (global 3) and its author 0 (both reversed).
  std::vector<std::pair<int, int64_t>> column;
  for (const auto& [r, src, dst] : typed_edges(d)) {
    if (dst == 6) column.emplace_back(r, src);
  }
  EXPECT_EQ(column, (std::vector<std::pair<int, int64_t>>{{1, 9}, {5, 7}, {6, 3}, {7, 0}}));
  // Every type's features, row by row.
  for (const auto& [type, rows, dim] : {std::tuple{0, 3, 2}, std::tuple{1, 2, 2}, std::tuple{2, 1, 2}, std::tuple{3, 4, 3}}) {
    EXPECT_EQ(s.node_types[static_cast<std::size_t>(type)].features.dim, dim);
    std::vector<float> values(static_cast<std::size_t>(rows * dim));
    ASSERT_EQ(d.type_feature_bytes(type).size(), values.size() * 4);
    std::memcpy(values.data(), d.type_feature_bytes(type).data(), values.size() * 4);
    for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(values[i], static_cast<float>(i) + 0.5f);
  }
  // Labels on paper (19 classes); the dataloader's 60/20/20 split by id: 2, 0 and 2 papers.
  EXPECT_EQ(s.labelled_type, 3);
  EXPECT_EQ(d.manifest().num_classes, 19);
  const auto labels = d.labels();
  EXPECT_EQ(std::vector<int32_t>(labels.begin() + 6, labels.end()), (std::vector<int32_t>{3, 1, 18, 0}));
  EXPECT_EQ(labels[0], -1);
  EXPECT_EQ(std::vector<int64_t>(d.split(Split::kTrain).begin(), d.split(Split::kTrain).end()), (std::vector<int64_t>{6, 7}));
  EXPECT_TRUE(d.split(Split::kValid).empty());
  EXPECT_EQ(std::vector<int64_t>(d.split(Split::kTest).begin(), d.split(Split::kTest).end()), (std::vector<int64_t>{8, 9}));

  // Without --hetero the same tree gives the homogeneous projection, as before.
  ThreadPool pool(1);
  IgbInput in;
  in.root = root;
  in.size = "tiny";
  const std::string projection = out();
  convert_igb(in, projection, ConvertOptions{}, pool);
  const Dataset p = Dataset::open(projection);
  EXPECT_FALSE(p.is_hetero());
  EXPECT_EQ(p.num_nodes(), 4);
  EXPECT_EQ(p.num_edges(), 3);
}

TEST_F(HeteroConvertTest, IgbhMalformedInputsAreNamed) {
  const std::string root = write_igbh(), processed = root + "/tiny/processed";
  const auto fails = [&](std::initializer_list<std::string> parts) {
    const std::string to = out();
    expect_mentions(error_of<std::invalid_argument>([&] { convert_igbh_at(root, to); }), parts);
    EXPECT_FALSE(fs::exists(to));
    fs::remove_all(root);
    write_igbh();
  };
  write_npy_file(processed + "/paper__written_by__author/edge_index.npy", NpyType::kInt64, {2, 2},
                 std::vector<int64_t>{0, 0, 1, 3});
  fails({"paper__written_by__author/edge_index.npy", "edge 1 (1 -> 3)", "destination id 3 is out of range [0, 3)",
         "node type author"});
  fs::create_directories(processed + "/paper__venue__conference");
  write_npy_file(processed + "/paper__venue__conference/edge_index.npy", NpyType::kInt64, {1, 2}, std::vector<int64_t>{0, 0});
  fails({"paper__venue__conference", "joins node type conference", "conference/node_feat.npy"});
  fs::create_directories(processed + "/paper__cited");
  fails({"paper__cited", "is not named <src_type>__<relation>__<dst_type>"});
  fs::create_directories(processed + "/paper__cites__fos__x");
  fails({"paper__cites__fos__x", "is not named"});
  fs::create_directories(processed + "/author__knows__author");
  fails({"author__knows__author", "holds no edge_index.npy"});
  write_npy_file(processed + "/paper/node_label_19.npy", NpyType::kFloat32, {3}, std::vector<float>{1, 2, 3});
  fails({"node_label_19.npy", "has 3 labels, expected 4"});
  write_npy_file(processed + "/fos/node_feat.npy", NpyType::kFloat32, {4}, std::vector<float>{1, 2, 3, 4});
  fails({"fos/node_feat.npy", "expected [nodes, dim]"});
}

TEST_F(HeteroConvertTest, CommandLineConvertsBoth) {
  const std::string mag = write_mag(), igbh = write_igbh();
  const auto a = test::run_cli({"--json", "convert", "ogb", "--root", mag, "-o", path("mag")});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("\"relations\": 8"), std::string::npos) << a.out;
  const auto b = test::run_cli({"convert", "igb", "--root", igbh, "--size", "tiny", "--hetero", "-o", path("igbh")});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("typed      4 node types, 8 relations"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("features   a table for 4 of the node types"), std::string::npos) << b.out;
  EXPECT_TRUE(Dataset::open(path("igbh")).is_hetero());
}

}  // namespace
}  // namespace graphtier::graph
