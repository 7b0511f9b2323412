// Hotness scores: golden values on tiny graphs, a naive dense reference on random graphs, and
// bit-for-bit independence from the thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/graph_convert/npy.hpp"
#include "graphtier/prep/hotness.hpp"
#include "graphtier/prep/out_neighbours.hpp"
#include "test_util.hpp"

namespace graphtier::prep {
namespace {

template <typename Index>
struct Graph {
  std::vector<int64_t> indptr;
  std::vector<Index> indices;
  graph::CscView view() const { return {indptr, graph::IndexSpan(std::span<const Index>(indices))}; }
  int64_t n() const { return static_cast<int64_t>(indptr.size()) - 1; }
};

/// Rows given by hand: rows[v] = in-neighbours of v.
template <typename Index = int32_t>
Graph<Index> from_rows(const std::vector<std::vector<Index>>& rows) {
  Graph<Index> g;
  g.indptr.push_back(0);
  for (const auto& row : rows) {
    g.indices.insert(g.indices.end(), row.begin(), row.end());
    g.indptr.push_back(static_cast<int64_t>(g.indices.size()));
  }
  return g;
}

/// Random graph with skewed sources (hubs at low ids), self-loops, multi-edges and isolated nodes.
template <typename Index>
Graph<Index> random_graph(int64_t n, int64_t e, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<Index>> rows(static_cast<std::size_t>(n));
  for (int64_t k = 0; k < e; ++k) {
    const auto dst = static_cast<int64_t>(rng() % static_cast<uint64_t>(n - n / 10));  // last 10%: no in-edges
    const auto a = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
    const auto b = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
    rows[dst].push_back(static_cast<Index>(a * b / n));
  }
  return from_rows<Index>(rows);
}

/// Algorithm 1 of the data tiering paper (docs/references.md) with dense loops, straight from the pseudo-code.
template <typename Index>
std::vector<double> naive_reverse_pagerank(const Graph<Index>& g, const std::vector<int64_t>& train, int iterations,
                                           double d) {
  const int64_t n = g.n();
  std::vector<double> score(n, 1.0 / static_cast<double>(n));
  std::vector<double> in_degree(n);
  for (int64_t v = 0; v < n; ++v) in_degree[v] = static_cast<double>(g.indptr[v + 1] - g.indptr[v]);
  if (!train.empty()) {
    const double weight = static_cast<double>(n) / static_cast<double>(train.size());
    for (int64_t t : train) score[t] *= weight;
  }
  for (int it = 0; it < iterations; ++it) {
    for (int64_t j = 0; j < n; ++j) score[j] = in_degree[j] > 0 ? score[j] / in_degree[j] : 0.0;
    std::vector<double> pulled(n, 0.0);
    for (int64_t x = 0; x < n; ++x) {
      for (int64_t e = g.indptr[x]; e < g.indptr[x + 1]; ++e) pulled[g.indices[e]] += score[x];  // u -> x
    }
    for (int64_t j = 0; j < n; ++j) score[j] = (1 - d) / static_cast<double>(n) + d * pulled[j];
  }
  return score;
}

void expect_close(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t v = 0; v < actual.size(); ++v) {
    EXPECT_NEAR(actual[v], expected[v], 1e-12 * std::max(1.0, std::fabs(expected[v]))) << "node " << v;
  }
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Edges 1->0, 2->0, 2->1: in-degrees 2, 1, 0. Node 2 reaches everything, node 0 nothing.
Graph<int32_t> three_nodes() { return from_rows({{1, 2}, {2}, {}}); }

TEST(ReversePageRank, GoldenThreeNodes) {
  ThreadPool pool(2);
  const auto g = three_nodes();
  const auto out = OutNeighbours::build(g.view(), pool);
  PageRankOptions o;
  o.iterations = 1;
  // Shares 1/6, 1/3, 0; node 1 pulls node 0's 1/6, node 2 pulls 1/6 + 1/3.
  expect_close(reverse_pagerank(g.view(), out, o, pool), {0.05, 0.05 + 0.85 / 6, 0.05 + 0.85 / 2});
  o.iterations = 2;
  expect_close(reverse_pagerank(g.view(), out, o, pool), {0.05, 0.07125, 0.05 + 0.85 * (0.025 + 0.05 + 0.85 / 6)});
}

TEST(WeightedReversePageRank, GoldenThreeNodes) {
  ThreadPool pool(2);
  const auto g = three_nodes();
  const auto out = OutNeighbours::build(g.view(), pool);
  const std::vector<int64_t> train{0};  // weight 3 / 1: node 0 starts at 1, the others at 1/3
  PageRankOptions o;
  o.iterations = 1;
  // Shares 1/2, 1/3, 0.
  expect_close(weighted_reverse_pagerank(g.view(), out, train, o, pool), {0.05, 0.475, 0.05 + 0.85 * (0.5 + 1.0 / 3)});
  o.iterations = 2;
  // Shares 0.025, 0.475, 0.
  expect_close(weighted_reverse_pagerank(g.view(), out, train, o, pool), {0.05, 0.07125, 0.475});
}

TEST(DegreeScores, GoldenFourNodes) {
  ThreadPool pool(2);
  // Edges 1->0, 2->0, 3->0, 2->1, 0->3, 2->3.
  const auto g = from_rows({{1, 2, 3}, {2}, {}, {0, 2}});
  EXPECT_EQ(in_degree_scores(g.view(), pool), (std::vector<double>{3, 1, 0, 2}));
  EXPECT_EQ(out_degree_scores(g.view(), pool), (std::vector<double>{1, 1, 3, 1}));
  EXPECT_EQ(degree_scores(g.view(), pool), (std::vector<double>{4, 2, 3, 3}));
}

TEST(OutNeighbours, MatchesNaiveTranspose) {
  ThreadPool pool(3);
  const auto g = random_graph<int64_t>(300, 4000, 7);
  const auto out = OutNeighbours::build(g.view(), pool);
  std::vector<std::vector<int64_t>> rows(300);
  for (int64_t x = 0; x < 300; ++x) {
    for (int64_t e = g.indptr[x]; e < g.indptr[x + 1]; ++e) rows[g.indices[e]].push_back(x);  // ascending x
  }
  ASSERT_FALSE(out.wide());
  ASSERT_EQ(out.num_edges(), 4000);
  for (int64_t u = 0; u < 300; ++u) {
    const auto begin = out.indices32().begin() + out.indptr()[u];
    const std::vector<int64_t> row(begin, out.indices32().begin() + out.indptr()[u + 1]);
    EXPECT_EQ(row, rows[u]) << "row " << u;
  }
}

TEST(ReversePageRank, MatchesNaiveOnRandomGraphs) {
  ThreadPool pool(2);
  for (uint64_t seed : {1, 2, 3}) {
    const auto g32 = random_graph<int32_t>(257, 3000, seed);
    const auto g64 = random_graph<int64_t>(257, 3000, seed);
    const auto out32 = OutNeighbours::build(g32.view(), pool);
    const auto out64 = OutNeighbours::build(g64.view(), pool);
    PageRankOptions o;
    o.iterations = 20;
    o.damping = 0.85;
    const auto expected = naive_reverse_pagerank(g32, {}, 20, 0.85);
    expect_close(reverse_pagerank(g32.view(), out32, o, pool), expected);
    expect_close(reverse_pagerank(g64.view(), out64, o, pool), expected);
    o.damping = 0.5;
    o.iterations = 3;
    expect_close(reverse_pagerank(g32.view(), out32, o, pool), naive_reverse_pagerank(g32, {}, 3, 0.5));
  }
}

TEST(WeightedReversePageRank, MatchesNaiveOnRandomGraphs) {
  ThreadPool pool(2);
  for (uint64_t seed : {11, 12}) {
    const auto g = random_graph<int32_t>(500, 6000, seed);
    const auto out = OutNeighbours::build(g.view(), pool);
    std::mt19937_64 rng(seed);
    std::vector<int64_t> train;
    for (int64_t v = 0; v < 500; ++v) {
      if (rng() % 10 == 0) train.push_back(v);
    }
    PageRankOptions o;
    o.iterations = 5;
    const auto scores = weighted_reverse_pagerank(g.view(), out, train, o, pool);
    expect_close(scores, naive_reverse_pagerank(g, train, 5, 0.85));
    // The weighting must matter: the unweighted scores differ.
    EXPECT_FALSE(same_bits(scores, reverse_pagerank(g.view(), out, o, pool)));
  }
}

TEST(ReversePageRank, ToleranceStopsEarly) {
  ThreadPool pool(2);
  const auto g = random_graph<int32_t>(400, 5000, 5);
  const auto out = OutNeighbours::build(g.view(), pool);
  PageRankOptions o;
  o.iterations = 200;
  o.tolerance = 1e-6;
  PageRankStats stats;
  const auto scores = reverse_pagerank(g.view(), out, o, pool, &stats);
  EXPECT_LT(stats.iterations, 200);
  EXPECT_GT(stats.iterations, 1);
  EXPECT_LT(stats.last_change, 1e-6);
  expect_close(scores, naive_reverse_pagerank(g, {}, stats.iterations, 0.85));
}

TEST(Hotness, IndependentOfThreadCount) {
  const auto g = random_graph<int32_t>(50000, 600000, 99);
  std::vector<int64_t> train;
  for (int64_t v = 0; v < 50000; v += 17) train.push_back(v);
  std::vector<std::vector<double>> results;
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    const auto out = OutNeighbours::build(g.view(), pool);
    PageRankOptions o;
    o.iterations = 10;
    auto r = reverse_pagerank(g.view(), out, o, pool);
    const auto w = weighted_reverse_pagerank(g.view(), out, train, o, pool);
    const auto deg = degree_scores(g.view(), pool);
    r.insert(r.end(), w.begin(), w.end());
    r.insert(r.end(), deg.begin(), deg.end());
    results.push_back(std::move(r));
  }
  for (std::size_t i = 1; i < results.size(); ++i) EXPECT_TRUE(same_bits(results[0], results[i])) << "pool " << i;
}

TEST(WeightedReversePageRank, RejectsBadLabels) {
  ThreadPool pool(1);
  const auto g = three_nodes();
  const auto out = OutNeighbours::build(g.view(), pool);
  EXPECT_THROW(weighted_reverse_pagerank(g.view(), out, {}, PageRankOptions{}, pool), InvalidArgument);
  const std::vector<int64_t> bad{0, 3};
  EXPECT_THROW(weighted_reverse_pagerank(g.view(), out, bad, PageRankOptions{}, pool), OutOfRange);
  const auto other = from_rows({{1}, {}});
  EXPECT_THROW(reverse_pagerank(other.view(), out, PageRankOptions{}, pool), InvalidArgument);
}

TEST(HotnessMethod, NamesRoundTrip) {
  for (auto m : {HotnessMethod::kDegree, HotnessMethod::kInDegree, HotnessMethod::kOutDegree,
                 HotnessMethod::kReversePageRank, HotnessMethod::kWeightedReversePageRank, HotnessMethod::kExternal,
                 HotnessMethod::kPresample}) {
    EXPECT_EQ(parse_hotness_method(hotness_method_name(m)), m);
  }
  EXPECT_EQ(parse_hotness_method("weighted-reverse-pagerank"), HotnessMethod::kWeightedReversePageRank);
  EXPECT_THROW(parse_hotness_method("pagerank"), InvalidArgument);
}

TEST(ScoresFile, ReadsRawAndNpy) {
  test::TempDir dir;
  const std::vector<double> raw{0.5, -1.0, 3.25};
  test::write_file(dir / "raw.bin", std::string(reinterpret_cast<const char*>(raw.data()), raw.size() * 8));
  EXPECT_EQ(read_scores_file(dir / "raw.bin", 3), raw);
  EXPECT_THROW(read_scores_file(dir / "raw.bin", 4), FormatError);

  const std::vector<int64_t> counts{7, 0, 42};
  const std::vector<int64_t> shape{3};
  graph::write_npy(dir / "counts.npy", graph::NpyType::kInt64, shape, counts.data());
  EXPECT_EQ(read_scores_file(dir / "counts.npy", 3), (std::vector<double>{7, 0, 42}));
  const std::vector<float> floats{1.5f, 2.5f, 3.5f};
  const std::vector<int64_t> column{3, 1};
  graph::write_npy(dir / "column.npy", graph::NpyType::kFloat32, column, floats.data());
  EXPECT_EQ(read_scores_file(dir / "column.npy", 3), (std::vector<double>{1.5, 2.5, 3.5}));
  EXPECT_THROW(read_scores_file(dir / "counts.npy", 2), FormatError);

  const std::vector<double> with_nan{1.0, std::nan(""), 2.0};
  test::write_file(dir / "nan.bin", std::string(reinterpret_cast<const char*>(with_nan.data()), 24));
  EXPECT_THROW(read_scores_file(dir / "nan.bin", 3), FormatError);
}

}  // namespace
}  // namespace graphtier::prep
