// Neighbour sampler: golden cases on tiny graphs, the naive reference on random graphs, and the
// statistical checks (uniformity, weights).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "graphtier/core/error.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"
#include "graphtier/sample/random.hpp"
#include "sample_test_util.hpp"

namespace graphtier::sample {
namespace {

using test::OwnedGraph;

// 0 <- 1, 2, 3;  1 <- 0, 4;  2 <- 4;  3 <- (none);  4 <- 0
OwnedGraph tiny_graph() {
  return OwnedGraph::from_edges(5, {{1, 0}, {2, 0}, {3, 0}, {0, 1}, {4, 1}, {4, 2}, {0, 4}});
}

NeighborSamplerOptions with_fanouts(std::vector<int64_t> fanouts, bool replace = false) {
  NeighborSamplerOptions o;
  o.fanouts = std::move(fanouts);
  o.replace = replace;
  o.seed = 7;
  return o;
}

TEST(NeighborSampler, GoldenFullNeighbourhoodTwoLayers) {
  const OwnedGraph g = tiny_graph();
  const NeighborSampler sampler(g.sample_graph(), with_fanouts({-1, -1}));
  const std::vector<int64_t> seeds = {2, 0};
  const MiniBatch b = sampler.sample(seeds, 0);
  ASSERT_EQ(b.blocks.size(), 2u);
  // Block 0: dst 2, 0; 2 <- 4 (new, local 2); 0 <- 1, 2, 3 (1, 3 new; 2 is dst 0).
  EXPECT_EQ(b.blocks[0].src_nodes, (std::vector<int64_t>{2, 0, 4, 1, 3}));
  EXPECT_EQ(b.blocks[0].indptr, (std::vector<int64_t>{0, 1, 4}));
  EXPECT_EQ(b.blocks[0].indices, (std::vector<int64_t>{2, 3, 0, 4}));
  EXPECT_EQ(b.blocks[0].edge_ids, (std::vector<int64_t>{5, 0, 1, 2}));
  // Block 1: dst 2, 0, 4, 1, 3; 4 <- 0; 1 <- 0, 4; 3 has none.
  EXPECT_EQ(b.blocks[1].src_nodes, (std::vector<int64_t>{2, 0, 4, 1, 3}));
  EXPECT_EQ(b.blocks[1].indptr, (std::vector<int64_t>{0, 1, 4, 5, 7, 7}));
  EXPECT_EQ(b.blocks[1].indices, (std::vector<int64_t>{2, 3, 0, 4, 1, 1, 2}));
  const std::span<const int64_t> input = b.input_nodes();
  EXPECT_EQ(std::vector<int64_t>(input.begin(), input.end()), (std::vector<int64_t>{2, 0, 4, 1, 3}));
  check_minibatch(b, g.num_nodes(), g.num_edges());
}

TEST(NeighborSampler, GoldenFloydDrawsByHand) {
  // Node 0 has degree 3; fanout 2 runs Floyd with j = 1, 2: t0 in [0, 1], then t1 in [0, 2].
  const OwnedGraph g = tiny_graph();
  NeighborSamplerOptions o = with_fanouts({2});
  const NeighborSampler sampler(g.sample_graph(), o);
  const std::vector<int64_t> seeds = {0};
  const MiniBatch b = sampler.sample(seeds, 3);
  const uint64_t ls = layer_stream(3, 0);
  const auto t0 = static_cast<int64_t>(bounded_u64(node_bits(o.seed, ls, 0, 0), 2));
  const auto t1 = static_cast<int64_t>(bounded_u64(node_bits(o.seed, ls, 0, 1), 3));
  std::set<int64_t> kept = {t0};
  kept.insert(t1 == t0 ? 2 : t1);
  EXPECT_EQ(b.blocks[0].edge_ids, std::vector<int64_t>(kept.begin(), kept.end()));
  ASSERT_EQ(b.blocks[0].num_edges(), 2);
}

TEST(NeighborSampler, ZeroDegreeSeedsAndFanoutZero) {
  const OwnedGraph g = tiny_graph();
  const std::vector<int64_t> seeds = {3, 2};
  const MiniBatch none = NeighborSampler(g.sample_graph(), with_fanouts({0, 5})).sample(seeds, 0);
  EXPECT_EQ(none.blocks[0].indptr, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(none.blocks[0].src_nodes, seeds);
  // Node 2 <- 4 in block 1; node 3 still has nothing.
  EXPECT_EQ(none.blocks[1].src_nodes, (std::vector<int64_t>{3, 2, 4}));
  EXPECT_EQ(none.blocks[1].indptr, (std::vector<int64_t>{0, 0, 1}));
  check_minibatch(none, g.num_nodes(), g.num_edges());
  const MiniBatch replaced = NeighborSampler(g.sample_graph(), with_fanouts({4}, true)).sample(seeds, 0);
  EXPECT_EQ(replaced.blocks[0].indptr, (std::vector<int64_t>{0, 0, 4}));  // zero degree: nothing to repeat
  EXPECT_EQ(replaced.blocks[0].indices, (std::vector<int64_t>{2, 2, 2, 2}));
}

TEST(NeighborSampler, RejectsBadSeedsAndOptions) {
  const OwnedGraph g = tiny_graph();
  const NeighborSampler sampler(g.sample_graph(), with_fanouts({2}));
  EXPECT_THROW(sampler.sample(std::vector<int64_t>{0, 5}, 0), OutOfRange);
  EXPECT_THROW(sampler.sample(std::vector<int64_t>{-1}, 0), OutOfRange);
  EXPECT_THROW(sampler.sample(std::vector<int64_t>{1, 2, 1}, 0), InvalidArgument);
  EXPECT_THROW(NeighborSampler(g.sample_graph(), with_fanouts({})), InvalidArgument);
  EXPECT_THROW(NeighborSampler(g.sample_graph(), with_fanouts({-2})), InvalidArgument);
  OwnedGraph weighted = tiny_graph();
  weighted.weights.assign(6, 1.0f);  // one short
  EXPECT_THROW(NeighborSampler(weighted.sample_graph(), with_fanouts({2})), InvalidArgument);
  weighted.weights.assign(7, 1.0f);
  weighted.weights[3] = -1.0f;
  EXPECT_THROW(NeighborSampler(weighted.sample_graph(), with_fanouts({2})), InvalidArgument);
  weighted.weights[3] = std::nanf("");
  EXPECT_THROW(NeighborSampler(weighted.sample_graph(), with_fanouts({2})), InvalidArgument);
}

struct SamplerConfig {
  bool replace;
  bool weighted;
};

class NeighborSamplerProperties : public ::testing::TestWithParam<SamplerConfig> {};

TEST_P(NeighborSamplerProperties, MatchReferenceAndContract) {
  const SamplerConfig c = GetParam();
  OwnedGraph g = OwnedGraph::random(3000, 12, 11);
  if (c.weighted) {
    std::mt19937_64 rng(5);
    g.weights.resize(static_cast<std::size_t>(g.num_edges()));
    // A quarter of the edges weigh nothing: they must never be sampled.
    for (float& w : g.weights) w = rng() % 4 == 0 ? 0.0f : static_cast<float>(rng() % 1000 + 1) / 100.0f;
  }
  const NeighborSamplerOptions o = with_fanouts({15, 10, 5}, c.replace);
  const NeighborSampler sampler(g.sample_graph(), o);
  ThreadPool pool(3);
  for (uint64_t stream = 0; stream < 4; ++stream) {
    const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 300, stream);
    const MiniBatch got = sampler.sample(seeds, stream, stream % 2 ? &pool : nullptr);
    check_minibatch(got, g.num_nodes(), g.num_edges());
    const MiniBatch want = test::reference_sample(g, seeds, o, stream);
    for (std::size_t l = 0; l < want.blocks.size(); ++l) {
      SCOPED_TRACE(testing::Message() << "stream " << stream << " block " << l);
      const Block& a = got.blocks[l];
      const Block& r = want.blocks[l];
      ASSERT_EQ(a.src_nodes, r.src_nodes);
      ASSERT_EQ(a.indptr, r.indptr);
      ASSERT_EQ(a.indices, r.indices);
      ASSERT_EQ(a.edge_ids, r.edge_ids);
      const std::span<const int64_t> dst = a.dst_nodes();
      for (int64_t i = 0; i < a.num_dst; ++i) {
        const int64_t v = dst[i];
        const int64_t d = g.indptr[v + 1] - g.indptr[v];
        int64_t positive = d;
        if (c.weighted) {
          positive = 0;
          for (int64_t p = g.indptr[v]; p < g.indptr[v + 1]; ++p) positive += g.weights[p] > 0;
        }
        const int64_t count = a.indptr[i + 1] - a.indptr[i];
        const int64_t fanout = o.fanouts[l];
        ASSERT_EQ(count, c.replace ? (positive > 0 ? fanout : 0) : std::min(fanout, positive)) << "node " << v;
        std::set<int64_t> distinct;
        for (int64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) {
          const int64_t p = a.edge_ids[e];
          ASSERT_TRUE(p >= g.indptr[v] && p < g.indptr[v + 1]) << "edge " << p << " is not an in-edge of " << v;
          ASSERT_EQ(g.indices[p], a.src_nodes[a.indices[e]]) << "edge id and neighbour disagree";
          if (c.weighted) {
          ASSERT_GT(g.weights[p], 0.0f) << "zero-weight edge sampled";
        }
          distinct.insert(p);
        }
        if (!c.replace) {
          ASSERT_EQ(static_cast<int64_t>(distinct.size()), count) << "repeated edge without replacement";
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, NeighborSamplerProperties,
                         ::testing::Values(SamplerConfig{false, false}, SamplerConfig{true, false}, SamplerConfig{false, true}, SamplerConfig{true, true}),
                         [](const auto& info) {
                           return std::string(info.param.replace ? "Replace" : "Distinct") +
                                  (info.param.weighted ? "Weighted" : "Uniform");
                         });

TEST(NeighborSampler, PoolSizeDoesNotChangeTheSample) {
  const OwnedGraph g = OwnedGraph::random(5000, 20, 3);
  const NeighborSampler sampler(g.sample_graph(), with_fanouts({10, 10}));
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 1000, 1);
  const MiniBatch serial = sampler.sample(seeds, 9);
  for (int threads : {2, 5}) {
    ThreadPool pool(threads);
    const MiniBatch parallel = sampler.sample(seeds, 9, &pool);
    for (std::size_t l = 0; l < serial.blocks.size(); ++l) {
      EXPECT_EQ(parallel.blocks[l].src_nodes, serial.blocks[l].src_nodes);
      EXPECT_EQ(parallel.blocks[l].edge_ids, serial.blocks[l].edge_ids);
    }
  }
}

TEST(NeighborSampler, FullNeighbourhoodReproducesMeanAggregation) {
  // Mean of in-neighbour features through the sampled block == the same mean over the whole graph.
  const OwnedGraph g = OwnedGraph::random(2000, 8, 4);
  std::vector<double> x(static_cast<std::size_t>(g.num_nodes()));
  for (std::size_t v = 0; v < x.size(); ++v) x[v] = std::sin(static_cast<double>(v)) * 3;
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 400, 2);
  const MiniBatch b = NeighborSampler(g.sample_graph(), with_fanouts({-1})).sample(seeds, 0);
  const Block& block = b.blocks[0];
  for (int64_t i = 0; i < block.num_dst; ++i) {
    const int64_t v = seeds[i];
    double full = 0, sampled = 0;
    for (int64_t p = g.indptr[v]; p < g.indptr[v + 1]; ++p) full += x[g.indices[p]];
    for (int64_t e = block.indptr[i]; e < block.indptr[i + 1]; ++e) sampled += x[block.src_nodes[block.indices[e]]];
    const int64_t d = g.indptr[v + 1] - g.indptr[v];
    ASSERT_EQ(block.indptr[i + 1] - block.indptr[i], d);
    if (d > 0) {
      ASSERT_EQ(sampled / d, full / d) << "node " << v;  // same terms, same order: exact
    }
  }
}

TEST(NeighborSampler, UniformWithoutReplacementPassesChiSquare) {
  // One node with 20 in-neighbours, fanout 5, 20000 batches: every neighbour is picked with
  // probability 1/4. 19 degrees of freedom: the 99.9% quantile is 43.8.
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t u = 1; u <= 20; ++u) edges.emplace_back(u, 0);
  const OwnedGraph g = OwnedGraph::from_edges(21, edges);
  const NeighborSampler sampler(g.sample_graph(), with_fanouts({5}));
  std::vector<int64_t> counts(20, 0);
  // Pairs too: Floyd must not favour neighbours that sit next to each other.
  std::map<std::pair<int64_t, int64_t>, int64_t> pairs;
  const std::vector<int64_t> seeds = {0};
  for (uint64_t stream = 0; stream < 20000; ++stream) {
    const Block b = sampler.sample(seeds, stream).blocks[0];
    for (int64_t p : b.edge_ids) ++counts[p];
    for (std::size_t i = 0; i < b.edge_ids.size(); ++i)
      for (std::size_t j = i + 1; j < b.edge_ids.size(); ++j) ++pairs[{b.edge_ids[i], b.edge_ids[j]}];
  }
  EXPECT_LT(test::chi_square_uniform(counts), 43.8);
  std::vector<int64_t> pair_counts;
  for (int64_t a = 0; a < 20; ++a)
    for (int64_t c = a + 1; c < 20; ++c) pair_counts.push_back(pairs[{a, c}]);
  // 189 degrees of freedom: the 99.9% quantile is about 255.
  EXPECT_LT(test::chi_square_uniform(pair_counts), 255.0);
}

TEST(NeighborSampler, WeightedWithReplacementFollowsWeights) {
  // Weights 1, 2, 3, 0, 4: frequencies 0.1, 0.2, 0.3, 0, 0.4 (3 degrees of freedom over the
  // positive ones; the 99.9% quantile is 16.3).
  OwnedGraph g = OwnedGraph::from_edges(6, {{1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}});
  g.weights = {1, 2, 3, 0, 4};
  const NeighborSampler sampler(g.sample_graph(), with_fanouts({10}, true));
  std::vector<int64_t> counts(5, 0);
  const std::vector<int64_t> seeds = {0};
  for (uint64_t stream = 0; stream < 5000; ++stream) {
    const MiniBatch b = sampler.sample(seeds, stream);
    for (int64_t p : b.blocks[0].edge_ids) ++counts[p];
  }
  EXPECT_EQ(counts[3], 0);
  const double total = 50000, probability[] = {0.1, 0.2, 0.3, 0, 0.4};
  double stat = 0;
  for (int k : {0, 1, 2, 4}) stat += std::pow(counts[k] - total * probability[k], 2) / (total * probability[k]);
  EXPECT_LT(stat, 16.3);
}

TEST(NeighborSampler, DifferentStreamsAndSeedsDiffer) {
  const OwnedGraph g = OwnedGraph::random(2000, 30, 8);
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 200, 3);
  NeighborSamplerOptions o = with_fanouts({5});
  const MiniBatch a = NeighborSampler(g.sample_graph(), o).sample(seeds, 1);
  const MiniBatch b = NeighborSampler(g.sample_graph(), o).sample(seeds, 2);
  o.seed = 8;
  const MiniBatch c = NeighborSampler(g.sample_graph(), o).sample(seeds, 1);
  EXPECT_NE(a.blocks[0].edge_ids, b.blocks[0].edge_ids);
  EXPECT_NE(a.blocks[0].edge_ids, c.blocks[0].edge_ids);
  EXPECT_EQ(a.blocks[0].edge_ids, NeighborSampler(g.sample_graph(), with_fanouts({5})).sample(seeds, 1).blocks[0].edge_ids);
}

}  // namespace
}  // namespace graphtier::sample
