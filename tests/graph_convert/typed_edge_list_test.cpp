// Typed edge lists (convert.hpp, TypedEdgeListInput): a tiny file whose typed CSC is worked out
// by hand, the seeded split, every malformed input refused with its file (and line), and the
// shipped ACM graph (datasets/acm) against counts taken from its raw files.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "graph_convert/convert_test_util.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::graph {
namespace {

using test::Csc;
using test::read_csc;
using test::error_of;
using test::expect_mentions;
using test::write_file;

TypedEdgeListInput typed_input(const std::string& edges, const std::string& labels = "") {
  TypedEdgeListInput input;
  input.path = edges;
  input.labels = labels;
  return input;
}

// Types by first appearance: p (ids 0..2), a (0..1), s (0); global ids p0..p2 = 0..2, a0 a1 = 3 4,
// s0 = 5. Relations: 0 p:to:a, 1 a:to:p (its reverse), 2 p:cites:p (symmetric: its own reverse),
// 3 p:to:s (no reverse). One duplicate (1 0 cites) and one self-loop (2 2 cites) go.
constexpr const char* kTinyEdges =
    "# src dst type [weight]\n"
    "0 0 p-a 1\n"
    "0\t1\tp-a\n"
    "1,1,p-a\n"
    "0 0 a-p\n"
    "1 0 a-p 1.0\n"
    "1 1 a-p\n"
    "0 1 p:cites:p\n"
    "1 0 p:cites:p\n"
    "1 0 p:cites:p\n"
    "2 2 p:cites:p\n"
    "0 0 p-s";

// Columns: p0 <- a0 a1 (a:to:p), p1 (cites); p1 <- a1 (a:to:p), p0 (cites); p2 <- nothing;
// a0 <- p0; a1 <- p0 p1; s0 <- p0.
const Csc kTinyCsc{{0, 3, 5, 5, 6, 8, 9}, {3, 4, 1, 4, 0, 0, 0, 1, 0}};
const std::vector<uint8_t> kTinyTypes{1, 1, 2, 1, 2, 0, 0, 0, 3};

class TypedEdgeListTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return tmp_ / name; }
  std::string out() { return tmp_ / ("out" + std::to_string(outputs_++)); }
  ConvertReport convert(const std::string& edges, const std::string& labels = "", TypedEdgeListInput input = {}) {
    write_file(path("edges.txt"), edges);
    input.path = path("edges.txt");
    if (!labels.empty()) {
      write_file(path("labels.txt"), labels);
      input.labels = path("labels.txt");
    }
    last_ = out();
    return convert_typed_edge_list(input, last_, {}, pool_);
  }

  test::TempDir tmp_;
  ThreadPool pool_{2};
  int outputs_ = 0;
  std::string last_;
};

TEST_F(TypedEdgeListTest, TinyFileGivesTheHandComputedTypedCsc) {
  TypedEdgeListInput as_written;
  as_written.add_reverses = false;  // p:to:s keeps no reverse (the next test adds it)
  const ConvertReport r = convert(kTinyEdges, "", as_written);
  EXPECT_TRUE(r.added_reverses.empty());
  EXPECT_EQ(r.input_edges, 11);
  EXPECT_EQ(r.self_loops_removed, 1);
  EXPECT_EQ(r.duplicates_removed, 1);
  EXPECT_EQ(r.num_node_types, 3);
  EXPECT_EQ(r.num_relations, 4);
  const Dataset d = Dataset::open(last_);
  EXPECT_EQ(read_csc(d), kTinyCsc);
  const HeteroView view = d.hetero();
  EXPECT_EQ(std::vector<uint8_t>(view.type_per_edge.begin(), view.type_per_edge.end()), kTinyTypes);
  const HeteroSchema& s = d.schema();
  EXPECT_EQ(s.node_type_offset, (std::vector<int64_t>{0, 3, 5, 6}));
  ASSERT_EQ(s.num_node_types(), 3);
  EXPECT_EQ(s.node_types[0].name, "p");
  EXPECT_EQ(s.node_types[2].name, "s");
  ASSERT_EQ(s.num_relations(), 4);
  EXPECT_EQ(s.relation_name(0), "p:to:a");
  EXPECT_EQ(s.relation_name(1), "a:to:p");
  EXPECT_EQ(s.relation_name(2), "p:cites:p");
  EXPECT_EQ(s.relation_name(3), "p:to:s");
  EXPECT_EQ(s.relations[0].reverse, 1);
  EXPECT_EQ(s.relations[1].reverse, 0);
  EXPECT_EQ(s.relations[2].reverse, 2);
  EXPECT_EQ(s.relations[3].reverse, -1);
  EXPECT_EQ(s.labelled_type, -1);
  EXPECT_FALSE(d.has_labels());
  EXPECT_NO_THROW(d.verify_checksums());
}

TEST_F(TypedEdgeListTest, ARelationWithoutReverseGetsOneAdded) {
  // p:to:s has none in kTinyEdges: s:rev_to:p (relation 4) holds s0 -> p0, and the pair is
  // recorded both ways; the relations the file reverses itself keep theirs, nothing else is added.
  const ConvertReport r = convert(kTinyEdges);
  EXPECT_EQ(r.added_reverses, (std::vector<std::string>{"s:rev_to:p"}));
  EXPECT_EQ(r.num_relations, 5);
  EXPECT_EQ(r.input_edges, 11);  // as read: the added edges are not counted
  const Dataset d = Dataset::open(last_);
  const HeteroSchema& s = d.schema();
  ASSERT_EQ(s.num_relations(), 5);
  EXPECT_EQ(s.relation_name(4), "s:rev_to:p");
  EXPECT_EQ(s.relations[3].reverse, 4);
  EXPECT_EQ(s.relations[4].reverse, 3);
  EXPECT_EQ(s.relations[0].reverse, 1);
  EXPECT_EQ(s.relations[2].reverse, 2);
  // p0 <- a0 a1 (a:to:p), p1 (cites), s0 (s:rev_to:p); the other columns as before.
  EXPECT_EQ(read_csc(d), (Csc{{0, 4, 6, 6, 7, 9, 10}, {3, 4, 1, 5, 4, 0, 0, 0, 1, 0}}));
  const HeteroView view = d.hetero();
  EXPECT_EQ(std::vector<uint8_t>(view.type_per_edge.begin(), view.type_per_edge.end()),
            (std::vector<uint8_t>{1, 1, 2, 4, 1, 2, 0, 0, 0, 3}));
  // A labelled type no relation enters gets its incoming relation the same way.
  convert("0 0 p-a\n1 0 p-a\n", "p0 1\np1 0\n");
  EXPECT_EQ(Dataset::open(last_).schema().relation_name(1), "a:rev_to:p");
}

TEST_F(TypedEdgeListTest, AReverseWhoseNameIsTakenIsRefused) {
  // s:rev_to:p is not p:to:s reversed (s0 -> p1), so p:to:s has no reverse, and its name is taken.
  expect_mentions(error_of([&] { convert("0 0 p-s\n0 1 s:rev_to:p\n"); }),
                  {"edges.txt", "relation p:to:s has no reverse", "s:rev_to:p cannot be added", "--no-reverses"});
  TypedEdgeListInput as_written;
  as_written.add_reverses = false;
  EXPECT_EQ(convert("0 0 p-s\n0 1 s:rev_to:p\n", "", as_written).num_relations, 2);
}

TEST_F(TypedEdgeListTest, GzipInputGivesTheSameDataset) {
  test::write_gzip(path("edges.txt.gz"), kTinyEdges);
  const std::string gz = out();
  TypedEdgeListInput input = typed_input(path("edges.txt.gz"));
  input.add_reverses = false;
  const ConvertReport r = convert_typed_edge_list(input, gz, {}, pool_);
  EXPECT_EQ(r.format, "typed edge list (gzip)");
  EXPECT_EQ(read_csc(Dataset::open(gz)), kTinyCsc);
}

TEST_F(TypedEdgeListTest, LabelsInBothFormsAndASeededSplit) {
  TypedEdgeListInput input;
  input.train_fraction = 0.5;
  input.valid_fraction = 0.5;
  const ConvertReport r = convert(kTinyEdges, "p0 1\np 2 0\n", input);
  EXPECT_EQ(r.num_labeled, 2);
  EXPECT_EQ(r.num_classes, 2);
  const Dataset d = Dataset::open(last_);
  EXPECT_EQ(std::vector<int32_t>(d.labels().begin(), d.labels().end()), (std::vector<int32_t>{1, -1, 0, -1, -1, -1}));
  EXPECT_EQ(d.schema().labelled_type, 0);
  ASSERT_EQ(d.split(Split::kTrain).size(), 1u);
  ASSERT_EQ(d.split(Split::kValid).size(), 1u);
  EXPECT_EQ(d.split(Split::kTest).size(), 0u);
  std::set<int64_t> split{d.split(Split::kTrain)[0], d.split(Split::kValid)[0]};
  EXPECT_EQ(split, (std::set<int64_t>{0, 2}));
}

TEST_F(TypedEdgeListTest, TheSplitDependsOnTheSeedAndOnNothingElse) {
  // 100 papers p0..p99, each written by a0; all labelled.
  std::string edges, labels;
  for (int i = 0; i < 100; ++i) {
    edges += std::to_string(i) + " 0 p-a\n";
    labels += "p" + std::to_string(i) + " " + std::to_string(i % 3) + "\n";
  }
  const auto split_of = [&](uint64_t seed) {
    TypedEdgeListInput input;
    input.seed = seed;
    convert(edges, labels, input);
    const Dataset d = Dataset::open(last_);
    std::vector<std::vector<int64_t>> s;
    for (Split x : {Split::kTrain, Split::kValid, Split::kTest}) s.emplace_back(d.split(x).begin(), d.split(x).end());
    return s;
  };
  const auto a = split_of(7), b = split_of(7), c = split_of(8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  ASSERT_EQ(a[0].size(), 20u);  // the default 0.2, 0.1, rest
  EXPECT_EQ(a[1].size(), 10u);
  EXPECT_EQ(a[2].size(), 70u);
  std::set<int64_t> all;
  for (const auto& s : a) all.insert(s.begin(), s.end());
  EXPECT_EQ(all.size(), 100u);
  EXPECT_EQ(*all.rbegin(), 99);
}

TEST_F(TypedEdgeListTest, RefusesMalformedEdgeLinesWithTheirNumber) {
  const std::map<std::string, std::string> cases = {
      {"0 1 p-a\n0 1\n", "edges.txt:2: expected 'src dst TYPE [weight]'"},
      {"0 1 p-a\n-1 0 p-a\n", "edges.txt:2: expected 'src dst TYPE [weight]'"},
      {"0 1 p\n", "edges.txt:1: edge type 'p' is not written A-B or A:rel:B"},
      {"0 1 p/x-a\n", "edges.txt:1: edge type 'p/x-a'"},
      {"0 1 p:cites\n", "edges.txt:1: edge type 'p:cites'"},
      {"0 1 p-a x\n", "edges.txt:1: the weight is not a number"},
      {"0 1 p-a 1 2\n", "edges.txt:1: unexpected text after"},
      {"0 1 p-a\n0 1 p:to:a\n", "another spelling of p:to:a"},
      {"# nothing\n", "has no edges"},
  };
  for (const auto& [text, message] : cases) {
    expect_mentions(error_of([&] { convert(text); }), {message});
  }
}

TEST_F(TypedEdgeListTest, RefusesMalformedLabels) {
  const std::map<std::string, std::string> cases = {
      {"p0\n", "labels.txt:1: expected '<type><id> <class>' or '<type> <id> <class>'"},
      {"p0 1\np1 x\n", "labels.txt:2: expected '<type><id> <class>'"},
      {"0 1\n", "labels.txt:1: expected '<type><id> <class>'"},
      {"p0 1\na0 1\n", "labels nodes of types p and a; one type is labelled"},
      {"q0 1\n", "labels nodes of type q, which no edge of"},
      {"p0 1\np 0 1\n", "node p0 is labelled twice"},
      // p has ids 0 to 2 in the edges: p3 would grow p and shift a's and s's ids.
      {"p0 1\np3 0\n", "labels.txt:2: node p3 is in no edge of"},
      {"s 1 0\n", "labels.txt:1: node s1 is in no edge of"},
  };
  for (const auto& [text, message] : cases) {
    const std::string what = error_of([&] { convert(kTinyEdges, text); });
    expect_mentions(what, {"labels.txt", message});
  }
}

TEST_F(TypedEdgeListTest, RefusesOptionsThatDoNotApply) {
  write_file(path("edges.txt"), kTinyEdges);
  ConvertOptions symmetrize;
  symmetrize.symmetrize = true;
  expect_mentions(error_of<InvalidArgument>([&] { convert_typed_edge_list(typed_input(path("edges.txt")), out(), symmetrize, pool_); }),
                  {"--symmetrize"});
  TypedEdgeListInput too_much = typed_input(path("edges.txt"));
  too_much.train_fraction = 0.8;
  too_much.valid_fraction = 0.3;
  expect_mentions(error_of<InvalidArgument>([&] { convert_typed_edge_list(too_much, out(), {}, pool_); }),
                  {"add up to at most 1"});
  TypedEdgeListInput fractions;
  parse_split_fractions("0.25,0.5", fractions);
  EXPECT_EQ(fractions.train_fraction, 0.25);
  EXPECT_EQ(fractions.valid_fraction, 0.5);
  for (const char* bad : {"0.2", "0.2,", "a,0.1", "0.2;0.1", "0.2,0.1,0.3"}) {
    expect_mentions(error_of<InvalidArgument>([&] { parse_split_fractions(bad, fractions); }), {"--split", bad});
  }
}

/// The lines of a gzip file, read with zlib (no graphtier code).
std::vector<std::string> gzip_lines(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  std::vector<std::string> lines;
  if (f == nullptr) return lines;
  char buffer[4096];
  while (gzgets(f, buffer, sizeof buffer) != nullptr) {
    std::string line(buffer);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  gzclose(f);
  return lines;
}

TEST_F(TypedEdgeListTest, AcmAgreesWithItsRawFiles) {
  const std::string root = test::datasets_dir() + "/acm";
  // Counts from the raw files: edges per type as written, the largest id of each node type.
  std::map<std::string, int64_t> edges_per_type;
  std::map<char, int64_t> max_id;
  for (const std::string& line : gzip_lines(root + "/edge.txt.gz")) {
    std::istringstream in(line);
    int64_t src = 0, dst = 0;
    std::string type;
    in >> src >> dst >> type;
    ++edges_per_type[type];
    max_id[type[0]] = std::max(max_id[type[0]], src);
    max_id[type[2]] = std::max(max_id[type[2]], dst);
  }
  const auto label_lines = gzip_lines(root + "/label.txt.gz");
  ASSERT_EQ(edges_per_type.size(), 4u);
  EXPECT_EQ(edges_per_type["p-a"], 13407);  // datasets/acm/README.md
  EXPECT_EQ(edges_per_type["p-s"], 4019);
  EXPECT_EQ(label_lines.size(), 4019u);  // every paper (the last line has no newline)

  const TypedEdgeListInput input = typed_input(root + "/edge.txt.gz", root + "/label.txt.gz");
  const std::string dir = out();
  const ConvertReport r = convert_typed_edge_list(input, dir, {}, pool_);
  const Dataset d = Dataset::open(dir);
  const HeteroSchema& s = d.schema();
  ASSERT_EQ(s.num_node_types(), 3);
  ASSERT_EQ(s.num_relations(), 4);
  for (int32_t t = 0; t < 3; ++t) {
    const char letter = s.node_types[static_cast<std::size_t>(t)].name[0];
    EXPECT_EQ(s.num_nodes_of(t), max_id[letter] + 1) << letter;
  }
  EXPECT_EQ(d.num_nodes(), 4019 + 7167 + 60);
  int64_t raw_edges = 0;
  for (const auto& [type, count] : edges_per_type) raw_edges += count;
  EXPECT_EQ(d.num_edges(), raw_edges);  // no duplicates, no self-loops
  std::vector<int64_t> per_relation(4, 0);
  for (const uint8_t r : d.hetero().type_per_edge) ++per_relation[r];
  for (int32_t rel = 0; rel < 4; ++rel) {
    const RelationEntry& e = s.relations[static_cast<std::size_t>(rel)];
    const std::string written = s.node_types[static_cast<std::size_t>(e.types.src_type)].name + "-" +
                                s.node_types[static_cast<std::size_t>(e.types.dst_type)].name;
    EXPECT_EQ(per_relation[static_cast<std::size_t>(rel)], edges_per_type[written]) << written;
    ASSERT_GE(e.reverse, 0) << written;  // each relation is listed in both directions
    EXPECT_EQ(s.relations[static_cast<std::size_t>(e.reverse)].types.src_type, e.types.dst_type);
  }
  EXPECT_EQ(s.node_types[static_cast<std::size_t>(s.labelled_type)].name, "p");
  EXPECT_EQ(r.num_labeled, 4019);
  EXPECT_EQ(r.num_classes, 3);
  EXPECT_EQ(r.num_train + r.num_valid + r.num_test, 4019);
  EXPECT_EQ(r.num_train, 803);  // floor(0.2 * 4019)
  EXPECT_EQ(r.num_valid, 401);
}

}  // namespace
}  // namespace graphtier::graph
