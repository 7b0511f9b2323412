// `prepare` end to end: the renumbered dataset is the same graph with the same node data, its
// hotness is non-increasing in id order, and the result does not depend on the feature path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph_generate/generate.hpp"
#include "graphtier/prep/hotness.hpp"
#include "graphtier/prep/out_neighbours.hpp"
#include "graphtier/prep/prepare.hpp"
#include "test_util.hpp"

namespace graphtier::prep {
namespace {

int64_t stored_index(const graph::IndexSpan& indices, int64_t e) {
  return std::visit([e](auto span) { return static_cast<int64_t>(span[e]); }, indices);
}

/// A directed power-law graph with 3 classes, 24-dim float16 features and all three splits.
std::string make_input(const test::TempDir& tmp, const std::string& name = "input") {
  graph::GenerateOptions o;
  o.num_nodes = 3000;
  o.num_edges = 30000;
  o.num_classes = 3;
  o.feature_dim = 24;
  o.feature_dtype = DType::kFloat16;
  o.undirected = false;
  o.seed = 11;
  ThreadPool pool(2);
  graph::generate_dataset(tmp / name, o, pool);
  return tmp / name;
}

/// Everything that must survive renumbering, checked through the output's own permutation:
/// new node n is input node p[n] (composed with the input's permutation, if any).
void expect_same_dataset(const graph::Dataset& in, const graph::Dataset& out) {
  ASSERT_TRUE(out.has_permutation());
  ASSERT_TRUE(out.has_hotness());
  const int64_t n = in.num_nodes();
  ASSERT_EQ(out.num_nodes(), n);
  ASSERT_EQ(out.num_edges(), in.num_edges());
  // new -> input id: the output's permutation maps to original ids, so undo the input's.
  std::vector<int64_t> to_input(out.permutation().begin(), out.permutation().end());
  if (in.has_permutation()) {
    std::vector<int64_t> original_to_input(n);
    for (int64_t v = 0; v < n; ++v) original_to_input[in.permutation()[v]] = v;
    for (auto& id : to_input) id = original_to_input[id];
  }
  std::vector<int64_t> to_new(n, -1);
  for (int64_t v = 0; v < n; ++v) to_new[to_input[v]] = v;
  ASSERT_EQ(std::count(to_new.begin(), to_new.end(), -1), 0) << "permutation is not a bijection";

  // Same edge set (as multisets of (src, dst) pairs mapped back to input ids).
  std::multiset<std::pair<int64_t, int64_t>> in_edges, out_edges;
  for (int64_t v = 0; v < n; ++v) {
    for (int64_t e = in.indptr()[v]; e < in.indptr()[v + 1]; ++e) in_edges.emplace(stored_index(in.indices(), e), v);
    for (int64_t e = out.indptr()[v]; e < out.indptr()[v + 1]; ++e) {
      out_edges.emplace(to_input[stored_index(out.indices(), e)], to_input[v]);
    }
  }
  EXPECT_TRUE(in_edges == out_edges) << "the renumbered graph has other edges";

  const int64_t row = in.manifest().features.row_stride;
  ASSERT_EQ(out.manifest().features.row_stride, row);
  for (int64_t v = 0; v < n; ++v) {
    ASSERT_EQ(std::memcmp(out.feature_bytes().data() + v * row, in.feature_bytes().data() + to_input[v] * row, row), 0)
        << "feature row of new node " << v;
    ASSERT_EQ(out.labels()[v], in.labels()[to_input[v]]) << "label of new node " << v;
  }
  for (graph::Split s : {graph::Split::kTrain, graph::Split::kValid, graph::Split::kTest}) {
    std::vector<int64_t> expected;
    for (int64_t id : in.split(s)) expected.push_back(to_new[id]);
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(std::vector<int64_t>(out.split(s).begin(), out.split(s).end()), expected);
  }
  const auto hot = out.hotness();
  EXPECT_TRUE(std::is_sorted(hot.begin(), hot.end(), std::greater<>())) << "hotness increases somewhere";
}

TEST(Prepare, EveryMethodKeepsTheGraphAndOrdersByItsScore) {
  test::TempDir tmp;
  const graph::Dataset in = graph::Dataset::open(make_input(tmp));
  const graph::CscView csc = graph::CscView::of(in);
  ThreadPool pool(2);
  const OutNeighbours out_nbrs = OutNeighbours::build(csc, pool);
  PageRankOptions wrpr_options;
  wrpr_options.iterations = 5;
  const std::vector<std::pair<HotnessMethod, std::vector<double>>> cases{
      {HotnessMethod::kDegree, degree_scores(csc, pool)},
      {HotnessMethod::kInDegree, in_degree_scores(csc, pool)},
      {HotnessMethod::kOutDegree, out_degree_scores(csc, pool)},
      {HotnessMethod::kReversePageRank, reverse_pagerank(csc, out_nbrs, {}, pool)},
      {HotnessMethod::kWeightedReversePageRank,
       weighted_reverse_pagerank(csc, out_nbrs, in.split(graph::Split::kTrain), wrpr_options, pool)},
  };
  for (const auto& [method, scores] : cases) {
    SCOPED_TRACE(std::string(hotness_method_name(method)));
    const std::string out_dir = tmp / ("out-" + std::string(hotness_method_name(method)));
    PrepareOptions o;
    o.method = method;
    prepare_dataset(in.dir(), out_dir, o, pool);
    const graph::Dataset out = graph::Dataset::open(out_dir);
    expect_same_dataset(in, out);
    EXPECT_EQ(out.manifest().hotness, hotness_method_name(method));
    // hotness.bin holds the method's scores of the nodes in their new places.
    for (int64_t v = 0; v < in.num_nodes(); ++v) {
      ASSERT_EQ(out.hotness()[v], scores[out.permutation()[v]]) << "new node " << v;
    }
    // Ties go to the lower input id first.
    for (int64_t v = 0; v + 1 < in.num_nodes(); ++v) {
      if (out.hotness()[v] == out.hotness()[v + 1]) {
        ASSERT_LT(out.permutation()[v], out.permutation()[v + 1]);
      }
    }
    EXPECT_NO_THROW(out.verify_checksums());
  }
}

TEST(Prepare, ExternalFeaturePermutationWritesIdenticalFiles) {
  test::TempDir tmp;
  const std::string input = make_input(tmp);
  ThreadPool pool(2);
  PrepareOptions in_memory;
  prepare_dataset(input, tmp / "in-memory", in_memory, pool);
  PrepareOptions bucketed;
  bucketed.memory_budget = 8 << 10;  // 8 KiB: 3000 rows of 48 B need many buckets
  const PrepareReport report = prepare_dataset(input, tmp / "bucketed", bucketed, pool);
  EXPECT_TRUE(report.feature_external);
  EXPECT_GT(report.feature_buckets, 10);
  for (const auto& entry : std::filesystem::directory_iterator(tmp / "in-memory")) {
    const std::string name = entry.path().filename();
    EXPECT_EQ(test::read_file(tmp / ("bucketed/" + name)), test::read_file(entry.path())) << name;
  }
  // No scratch file is left anywhere.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(tmp.path())) {
    EXPECT_EQ(entry.path().filename().string().find("scratch"), std::string::npos) << entry.path();
  }
}

TEST(Prepare, PreparingAgainComposesThePermutationWithTheOriginalIds) {
  test::TempDir tmp;
  const std::string input = make_input(tmp);
  ThreadPool pool(2);
  PrepareOptions wrpr;
  prepare_dataset(input, tmp / "once", wrpr, pool);
  PrepareOptions degree;
  degree.method = HotnessMethod::kOutDegree;
  const PrepareReport report = prepare_dataset(tmp / "once", tmp / "twice", degree, pool);
  EXPECT_TRUE(report.composed_permutation);
  // Checked against the original ids and against the intermediate dataset.
  expect_same_dataset(graph::Dataset::open(input), graph::Dataset::open(tmp / "twice"));
  expect_same_dataset(graph::Dataset::open(tmp / "once"), graph::Dataset::open(tmp / "twice"));
}

TEST(Prepare, InPlaceNeedsOverwriteAndThenReplacesTheInput) {
  test::TempDir tmp;
  const std::string input = make_input(tmp);
  make_input(tmp, "copy");
  ThreadPool pool(2);
  PrepareOptions o;
  EXPECT_THROW(prepare_dataset(input, input, o, pool), InvalidArgument);
  o.overwrite = true;
  prepare_dataset(input, input, o, pool);
  const graph::Dataset out = graph::Dataset::open(input);
  EXPECT_EQ(out.manifest().hotness, "wrpr");
  expect_same_dataset(graph::Dataset::open(tmp / "copy"), out);
  std::vector<std::string> entries;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path())) entries.push_back(e.path().filename());
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::string>{"copy", "input"}));
}

TEST(Prepare, RejectsWrprWithoutTrainSplitAndLeavesNothing) {
  test::TempDir tmp;
  graph::GenerateOptions g;
  g.num_nodes = 100;
  g.num_edges = 400;
  g.train_fraction = 0;
  g.valid_fraction = 0.5;
  ThreadPool pool(2);
  graph::generate_dataset(tmp / "no-train", g, pool);
  PrepareOptions o;
  try {
    prepare_dataset(tmp / "no-train", tmp / "out", o, pool);
    FAIL() << "wrpr without a train split was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("train"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(tmp / "out"));
  o.method = HotnessMethod::kReversePageRank;
  EXPECT_NO_THROW(prepare_dataset(tmp / "no-train", tmp / "out", o, pool));
}

TEST(PrepareCli, ScoresFileOrdersTheNodes) {
  test::TempDir tmp;
  const std::string input = make_input(tmp);
  // Scores = input id: the output must be the input in reverse order.
  std::vector<double> scores(3000);
  for (int64_t v = 0; v < 3000; ++v) scores[v] = static_cast<double>(v);
  test::write_file(tmp / "scores.f64", std::string(reinterpret_cast<const char*>(scores.data()), scores.size() * 8));
  const auto r = test::run_cli({"-q", "--json", "prepare", "--dataset", input, "--out", tmp / "out", "--hotness",
                                "scores", "--scores", tmp / "scores.f64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"scores\""), std::string::npos) << r.out;
  const graph::Dataset out = graph::Dataset::open(tmp / "out");
  for (int64_t v = 0; v < 3000; ++v) ASSERT_EQ(out.permutation()[v], 2999 - v);
  expect_same_dataset(graph::Dataset::open(input), out);

  const auto bad = test::run_cli({"prepare", "--dataset", input, "--out", tmp / "bad", "--hotness", "scores",
                                  "--scores", tmp / "missing.f64"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("missing.f64"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(tmp / "bad"));
}

}  // namespace
}  // namespace graphtier::prep
