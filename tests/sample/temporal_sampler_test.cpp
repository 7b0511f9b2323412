// Temporal neighbour sampling (temporal.hpp): the time order of the columns, the shared per-row
// decision (temporal_steps.hpp) called directly, golden tiny graphs whose "last" samples are known
// by hand, a naive reference sampler for "last" on random graphs, and the eligibility and
// uniformity of "uniform".
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/sample/hetero_block.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"
#include "graphtier/sample/sampler.hpp"
#include "graphtier/sample/temporal.hpp"
#include "sample_test_util.hpp"
#include "temporal_steps.hpp"

namespace graphtier::sample {
namespace {

using test::OwnedGraph;

// 6 nodes; node times 0:5 1:1 2:2 3:3 4:4 5:6. In-neighbours (ascending, as converters write them):
// 0 <- {1, 2, 3, 4, 5}, 1 <- {}, 2 <- {1}, 3 <- {1, 2}, 4 <- {1, 2, 3}, 5 <- {1, 2, 3, 4}.
OwnedGraph golden_graph() {
  return OwnedGraph::from_edges(6, {{1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}, {1, 2}, {1, 3}, {2, 3},
                                    {1, 4}, {2, 4}, {3, 4}, {1, 5}, {2, 5}, {3, 5}, {4, 5}});
}
const std::vector<int64_t> kGoldenNodeTime{5, 1, 2, 3, 4, 6};

NeighborSamplerOptions temporal_options(std::vector<int64_t> fanouts, TemporalStrategy strategy, bool replace = false) {
  NeighborSamplerOptions o;
  o.fanouts = std::move(fanouts);
  o.replace = replace;
  o.seed = 7;
  o.temporal_strategy = strategy;
  return o;
}

/// Block l's neighbours of dst node i as global ids, sorted.
std::vector<int64_t> neighbours(const Block& b, int64_t i) {
  std::vector<int64_t> out;
  for (int64_t e = b.indptr[i]; e < b.indptr[i + 1]; ++e) out.push_back(b.src_nodes[b.indices[e]]);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(TemporalSteps, WindowAndDraws) {
  const std::vector<int64_t> time{1, 2, 2, 3, 5, 8};  // one column, positions [0, 6)
  EXPECT_EQ(temporal::eligible_end(time.data(), 0, 6, 0), 0);
  EXPECT_EQ(temporal::eligible_end(time.data(), 0, 6, 2), 3);
  EXPECT_EQ(temporal::eligible_end(time.data(), 0, 6, 4), 4);
  EXPECT_EQ(temporal::eligible_end(time.data(), 0, 6, 100), 6);
  EXPECT_EQ(temporal::eligible_end(time.data(), 2, 4, 2), 3);  // a column inside the array

  using enum TemporalStrategy;
  auto w = temporal::window(time.data(), 0, 6, 4, 2, false, kLast);
  EXPECT_EQ(w.lo, 2);
  EXPECT_EQ(w.hi, 4);
  EXPECT_EQ(w.count, 2);
  w = temporal::window(time.data(), 0, 6, 4, 10, false, kLast);  // fewer eligible than the fanout
  EXPECT_EQ(w.lo, 0);
  EXPECT_EQ(w.count, 4);
  w = temporal::window(time.data(), 0, 6, 4, -1, false, kLast);
  EXPECT_EQ(w.lo, 0);
  EXPECT_EQ(w.count, 4);
  w = temporal::window(time.data(), 0, 6, 4, 0, false, kLast);
  EXPECT_EQ(w.count, 0);
  w = temporal::window(time.data(), 0, 6, 4, 2, false, kUniform);
  EXPECT_EQ(w.lo, 0);
  EXPECT_EQ(w.hi, 4);
  EXPECT_EQ(w.count, 2);
  w = temporal::window(time.data(), 0, 6, 0, 2, true, kUniform);  // nothing eligible: no draws
  EXPECT_EQ(w.count, 0);
  w = temporal::window(time.data(), 0, 6, 4, 9, true, kUniform);
  EXPECT_EQ(w.count, 9);

  // The draw without replacement is the untimed Floyd over the window (neighbor_steps.hpp).
  w = temporal::window(time.data(), 0, 6, 5, 3, false, kUniform);
  std::vector<int64_t> out(3);
  temporal::draw(w, false, 11, 22, 4, out.data());
  EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
  EXPECT_EQ(std::set<int64_t>(out.begin(), out.end()).size(), 3u);
  for (int64_t p : out) EXPECT_TRUE(p >= 0 && p < 5) << p;
  std::vector<int64_t> floyd(3);
  for (int64_t i = 0; i < 3; ++i) nbr::floyd_step(floyd.data(), i, 0, 5 - 3 + i, nbr::floyd_draw(11, 22, 4, 5, 3, i));
  EXPECT_EQ(out, floyd);
  // Trees draw from their own streams.
  EXPECT_NE(temporal::tree_stream(22, 0), temporal::tree_stream(22, 1));
  EXPECT_NE(temporal::tree_stream(22, 0), 22u);
}

TEST(TemporalIndex, OrdersEachColumnByTime) {
  const OwnedGraph g = golden_graph();
  // Node times reversed against ids in column 0: 1:1 2:2 3:3 4:4 5:6 already ascend; make 3 latest.
  std::vector<int64_t> node_time = kGoldenNodeTime;
  node_time[3] = 9;
  const TemporalIndex index = TemporalIndex::build(g.csc(), node_time, TimeSource::kNode);
  ASSERT_EQ(index.num_edges(), g.num_edges());
  // Column 0 holds positions 0..4 = sources 1, 2, 3, 4, 5 with times 1, 2, 9, 4, 6.
  EXPECT_EQ(std::vector<int64_t>(index.order.begin(), index.order.begin() + 5), (std::vector<int64_t>{0, 1, 3, 4, 2}));
  EXPECT_EQ(std::vector<int64_t>(index.time.begin(), index.time.begin() + 5), (std::vector<int64_t>{1, 2, 4, 6, 9}));
  // Edge times: ties keep the CSC order.
  std::vector<int64_t> edge_time(static_cast<std::size_t>(g.num_edges()), 0);
  edge_time[0] = 3;
  edge_time[1] = 1;
  const TemporalIndex by_edge = TemporalIndex::build(g.csc(), edge_time, TimeSource::kEdge);
  EXPECT_EQ(std::vector<int64_t>(by_edge.order.begin(), by_edge.order.begin() + 5), (std::vector<int64_t>{2, 3, 4, 1, 0}));
  // Typed columns keep their relation segments: (relation, time, position).
  std::vector<uint8_t> types(static_cast<std::size_t>(g.num_edges()), 0);
  types[3] = types[4] = 1;
  const TemporalIndex typed = TemporalIndex::build(g.csc(), edge_time, TimeSource::kEdge, types);
  EXPECT_EQ(std::vector<int64_t>(typed.order.begin(), typed.order.begin() + 5), (std::vector<int64_t>{2, 1, 0, 3, 4}));
  ThreadPool pool(2);
  EXPECT_EQ(TemporalIndex::build(g.csc(), node_time, TimeSource::kNode, {}, &pool).order, index.order);
  EXPECT_THROW(TemporalIndex::build(g.csc(), std::vector<int64_t>(5), TimeSource::kNode), InvalidArgument);
  EXPECT_THROW(TemporalIndex::build(g.csc(), std::vector<int64_t>(6), TimeSource::kEdge), InvalidArgument);
}

// Known by hand: seed 0 at its own time 5, seed 5 at input time 2, two hops of "last" 2.
TEST(TemporalSampler, GoldenLastWithNodeTimes) {
  const OwnedGraph g = golden_graph();
  const TemporalIndex index = TemporalIndex::build(g.csc(), kGoldenNodeTime, TimeSource::kNode);
  SampleGraph graph = g.sample_graph();
  graph.temporal = &index;
  const NeighborSampler sampler(graph, temporal_options({2, 2}, TemporalStrategy::kLast));
  const std::vector<int64_t> seeds{0, 5};
  const std::vector<int64_t> times{5, 2};
  const MiniBatch batch = sampler.sample_temporal(seeds, times, 3);
  check_minibatch(batch, g.num_nodes(), g.num_edges());
  ASSERT_EQ(batch.blocks.size(), 2u);
  const Block& b0 = batch.blocks[0];
  // Tree 0 (t = 5): 0's eligible in-neighbours 1, 2, 3, 4 (5 is at 6): the last two, 3 and 4.
  // Tree 1 (t = 2): 5's eligible 1, 2: both.
  EXPECT_EQ(neighbours(b0, 0), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(neighbours(b0, 1), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(b0.src_nodes, (std::vector<int64_t>{0, 5, 3, 4, 1, 2}));
  EXPECT_EQ(b0.src_trees, (std::vector<int64_t>{0, 1, 0, 0, 1, 1}));
  // Hop 2: every node keeps its tree's time (not its own): 4 (time 4) in tree 0 takes 2 and 3;
  // 2 in tree 1 takes 1; 1 has none.
  const Block& b1 = batch.blocks[1];
  EXPECT_EQ(neighbours(b1, 2), (std::vector<int64_t>{1, 2}));  // 3 <- {1, 2}
  EXPECT_EQ(neighbours(b1, 3), (std::vector<int64_t>{2, 3}));  // 4 <- {1, 2, 3}
  EXPECT_EQ(neighbours(b1, 4), (std::vector<int64_t>{}));      // 1
  EXPECT_EQ(neighbours(b1, 5), (std::vector<int64_t>{1}));     // 2 <- {1}
  // Node 2 is in both trees: two src nodes of block 1 (tree 0's new, tree 1's from block 0).
  int copies_of_2 = 0;
  for (int64_t id : b1.src_nodes) copies_of_2 += id == 2 ? 1 : 0;
  EXPECT_EQ(copies_of_2, 2);
  // A later seed time admits node 5 (time 6) into tree 0.
  const std::vector<int64_t> later{6, 2};
  EXPECT_EQ(neighbours(sampler.sample_temporal(seeds, later, 3).blocks[0], 0), (std::vector<int64_t>{4, 5}));
}

TEST(TemporalSampler, GoldenLastWithEdgeTimes) {
  const OwnedGraph g = golden_graph();
  // Column 0's edges (sources 1..5 at positions 0..4) at times 50, 10, 40, 20, 30; seed time 35
  // leaves 10, 20, 30 (sources 2, 4, 5): the last two are 4 (20) and 5 (30), though 5's node is
  // later than any node time.
  std::vector<int64_t> edge_time(static_cast<std::size_t>(g.num_edges()), 0);
  const int64_t column0[] = {50, 10, 40, 20, 30};
  std::copy(std::begin(column0), std::end(column0), edge_time.begin());
  const TemporalIndex index = TemporalIndex::build(g.csc(), edge_time, TimeSource::kEdge);
  SampleGraph graph = g.sample_graph();
  graph.temporal = &index;
  const NeighborSampler sampler(graph, temporal_options({2}, TemporalStrategy::kLast));
  const MiniBatch batch = sampler.sample_temporal(std::vector<int64_t>{0}, std::vector<int64_t>{35}, 0);
  EXPECT_EQ(neighbours(batch.blocks[0], 0), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(batch.blocks[0].edge_ids, (std::vector<int64_t>{3, 4}));  // time order: 20 then 30
  // Uniform with a fanout above the eligible count takes them all.
  const NeighborSampler all(graph, temporal_options({5}, TemporalStrategy::kUniform));
  EXPECT_EQ(neighbours(all.sample_temporal(std::vector<int64_t>{0}, std::vector<int64_t>{35}, 0).blocks[0], 0),
            (std::vector<int64_t>{2, 4, 5}));
}

/// The naive "last" sampler: per (tree, node), the entries with time <= the tree's time sorted by
/// (time, position), the last f; blocks built with std::map per tree.
MiniBatch naive_last(const OwnedGraph& g, std::span<const int64_t> entry_time, std::span<const int64_t> seeds,
                     std::span<const int64_t> seed_times, const std::vector<int64_t>& fanouts) {
  MiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  std::vector<int64_t> dst(seeds.begin(), seeds.end());
  std::vector<int64_t> trees(seeds.size());
  std::iota(trees.begin(), trees.end(), 0);
  for (const int64_t f : fanouts) {
    Block b;
    b.num_dst = static_cast<int64_t>(dst.size());
    b.src_nodes = dst;
    b.src_trees = trees;
    b.indptr.push_back(0);
    std::map<std::pair<int64_t, int64_t>, int64_t> local;
    for (std::size_t i = 0; i < dst.size(); ++i) local[{trees[i], dst[i]}] = static_cast<int64_t>(i);
    for (std::size_t i = 0; i < dst.size(); ++i) {
      std::vector<std::pair<int64_t, int64_t>> eligible;  // (time, position)
      for (int64_t p = g.indptr[dst[i]]; p < g.indptr[dst[i] + 1]; ++p) {
        if (entry_time[p] <= seed_times[trees[i]]) eligible.push_back({entry_time[p], p});
      }
      std::sort(eligible.begin(), eligible.end());
      const std::size_t take = f < 0 ? eligible.size() : std::min<std::size_t>(eligible.size(), f);
      for (std::size_t k = eligible.size() - take; k < eligible.size(); ++k) {
        const int64_t p = eligible[k].second;
        const int64_t id = g.indices[p];
        const auto [it, fresh] = local.try_emplace({trees[i], id}, static_cast<int64_t>(b.src_nodes.size()));
        if (fresh) {
          b.src_nodes.push_back(id);
          b.src_trees.push_back(trees[i]);
        }
        b.indices.push_back(it->second);
        b.edge_ids.push_back(p);
      }
      b.indptr.push_back(static_cast<int64_t>(b.indices.size()));
    }
    dst = b.src_nodes;
    trees = b.src_trees;
    batch.blocks.push_back(std::move(b));
  }
  return batch;
}

TEST(TemporalSampler, LastMatchesNaiveReference) {
  const OwnedGraph g = OwnedGraph::random(300, 8.0, 5);
  std::mt19937_64 rng(3);
  std::vector<int64_t> node_time(static_cast<std::size_t>(g.num_nodes()));
  for (auto& t : node_time) t = static_cast<int64_t>(rng() % 40);
  std::vector<int64_t> edge_time(static_cast<std::size_t>(g.num_edges()));
  for (auto& t : edge_time) t = static_cast<int64_t>(rng() % 40);
  std::vector<int64_t> seeds(60), seed_times(60);
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    seeds[i] = static_cast<int64_t>(rng() % 300);  // repeats allowed: one tree each
    seed_times[i] = static_cast<int64_t>(rng() % 45);
  }
  ThreadPool pool(2);
  for (const TimeSource source : {TimeSource::kNode, TimeSource::kEdge}) {
    SCOPED_TRACE(source == TimeSource::kNode ? "node times" : "edge times");
    const TemporalIndex index =
        TemporalIndex::build(g.csc(), source == TimeSource::kNode ? node_time : edge_time, source);
    std::vector<int64_t> entry_time(static_cast<std::size_t>(g.num_edges()));
    for (int64_t p = 0; p < g.num_edges(); ++p) {
      entry_time[p] = source == TimeSource::kNode ? node_time[g.indices[p]] : edge_time[p];
    }
    SampleGraph graph = g.sample_graph();
    graph.temporal = &index;
    for (const auto& fanouts : {std::vector<int64_t>{3, 2}, std::vector<int64_t>{-1, 1, 4}}) {
      const NeighborSampler sampler(graph, temporal_options(fanouts, TemporalStrategy::kLast));
      const MiniBatch got = sampler.sample_temporal(seeds, seed_times, 9, &pool);
      check_minibatch(got, g.num_nodes(), g.num_edges());
      test::expect_same_minibatch(got, naive_last(g, entry_time, seeds, seed_times, fanouts));
    }
  }
}

TEST(TemporalSampler, UniformDrawsOnlyEligibleNeighboursUniformly) {
  // One column of 20 sources (nodes 1..20, node time = id), seed time 10: eligible 1..10.
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t s = 1; s <= 20; ++s) edges.push_back({s, 0});
  const OwnedGraph g = OwnedGraph::from_edges(21, edges);
  std::vector<int64_t> node_time(21);
  std::iota(node_time.begin(), node_time.end(), 0);
  node_time[0] = 100;
  const TemporalIndex index = TemporalIndex::build(g.csc(), node_time, TimeSource::kNode);
  SampleGraph graph = g.sample_graph();
  graph.temporal = &index;
  const NeighborSampler sampler(graph, temporal_options({3}, TemporalStrategy::kUniform));
  std::map<int64_t, int> hits;
  constexpr int kRuns = 4000;
  for (uint64_t stream = 0; stream < kRuns; ++stream) {
    const MiniBatch b = sampler.sample_temporal(std::vector<int64_t>{0}, std::vector<int64_t>{10}, stream);
    const std::vector<int64_t> got = neighbours(b.blocks[0], 0);
    ASSERT_EQ(got.size(), 3u);
    ASSERT_EQ(std::set<int64_t>(got.begin(), got.end()).size(), 3u);  // without replacement
    for (int64_t u : got) {
      ASSERT_LE(node_time[u], 10) << "ineligible neighbour " << u;
      ++hits[u];
    }
  }
  // Each of the 10 eligible is drawn with probability 3/10: 1200 of 4000, sd about 29.
  ASSERT_EQ(hits.size(), 10u);
  for (const auto& [u, count] : hits) EXPECT_NEAR(count, 1200, 150) << "neighbour " << u;
  // With replacement: 5 draws, all eligible.
  const NeighborSampler repeated(graph, temporal_options({5}, TemporalStrategy::kUniform, true));
  const MiniBatch r = repeated.sample_temporal(std::vector<int64_t>{0}, std::vector<int64_t>{10}, 1);
  EXPECT_EQ(r.blocks[0].num_edges(), 5);
  for (int64_t e : r.blocks[0].edge_ids) EXPECT_LE(node_time[g.indices[e]], 10);
}

TEST(TemporalSampler, UniformPropertiesOnRandomGraph) {
  const OwnedGraph g = OwnedGraph::random(400, 10.0, 11);
  std::mt19937_64 rng(4);
  std::vector<int64_t> edge_time(static_cast<std::size_t>(g.num_edges()));
  for (auto& t : edge_time) t = static_cast<int64_t>(rng() % 100);
  const TemporalIndex index = TemporalIndex::build(g.csc(), edge_time, TimeSource::kEdge);
  SampleGraph graph = g.sample_graph();
  graph.temporal = &index;
  const NeighborSampler sampler(graph, temporal_options({4, 3}, TemporalStrategy::kUniform));
  std::vector<int64_t> seeds(100), seed_times(100);
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    seeds[i] = static_cast<int64_t>(i * 4);
    seed_times[i] = static_cast<int64_t>(rng() % 100);
  }
  ThreadPool pool(2);
  const MiniBatch batch = sampler.sample_temporal(seeds, seed_times, 5);
  check_minibatch(batch, g.num_nodes(), g.num_edges());
  test::expect_same_minibatch(sampler.sample_temporal(seeds, seed_times, 5, &pool), batch);
  for (std::size_t l = 0; l < batch.blocks.size(); ++l) {
    const Block& b = batch.blocks[l];
    const int64_t fanout = l == 0 ? 4 : 3;
    for (int64_t i = 0; i < b.num_dst; ++i) {
      const int64_t t = seed_times[b.src_trees[i]];
      int64_t eligible = 0;
      const int64_t v = b.src_nodes[i];
      for (int64_t p = g.indptr[v]; p < g.indptr[v + 1]; ++p) eligible += edge_time[p] <= t ? 1 : 0;
      EXPECT_EQ(b.indptr[i + 1] - b.indptr[i], std::min(eligible, fanout));
      std::set<int64_t> distinct;
      for (int64_t e = b.indptr[i]; e < b.indptr[i + 1]; ++e) {
        EXPECT_LE(edge_time[b.edge_ids[e]], t);
        EXPECT_EQ(b.src_nodes[b.indices[e]], g.indices[b.edge_ids[e]]);
        distinct.insert(b.edge_ids[e]);
      }
      EXPECT_EQ(static_cast<int64_t>(distinct.size()), b.indptr[i + 1] - b.indptr[i]);
    }
  }
}

/// Typed temporal sampling: each relation segment of a column is sampled on its own with the
/// relation's fanout, only entries no later than the tree's time; "last" takes each segment's most
/// recent; a one-relation typed graph samples exactly as the untyped one; split blocks keep trees.
TEST(TemporalSampler, TypedSamplesEachRelationAtItsTreesTime) {
  const test::TypedGraph g =
      test::TypedGraph::random({200, 150, 40}, {{0, 0}, {1, 0}, {0, 1}, {2, 1}, {1, 2}}, 5.0, 11);
  std::mt19937_64 rng(5);
  std::vector<int64_t> node_time(static_cast<std::size_t>(g.num_nodes()));
  for (auto& t : node_time) t = static_cast<int64_t>(rng() % 30);
  const TemporalIndex index =
      TemporalIndex::build(g.graph.csc(), node_time, TimeSource::kNode, g.type_per_edge);
  SampleGraph graph = g.sample_graph();
  graph.temporal = &index;
  std::vector<int64_t> seeds(50), seed_times(50);
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    seeds[i] = static_cast<int64_t>(rng() % 200);  // type 0, repeats allowed
    seed_times[i] = static_cast<int64_t>(rng() % 35);
  }
  ThreadPool pool(2);
  for (const TemporalStrategy strategy : {TemporalStrategy::kUniform, TemporalStrategy::kLast}) {
    NeighborSamplerOptions o = temporal_options({2, 3}, strategy);
    o.relation_fanouts = {{3, 1}, {1, -1}, {}, {2, 0}, {-1, 2}};
    const NeighborSampler sampler(graph, o);
    const MiniBatch batch = sampler.sample_temporal(seeds, seed_times, 4, &pool);
    EXPECT_EQ(batch.blocks.size(), 2u);
    std::vector<int64_t> dst_trees(seeds.size());
    std::iota(dst_trees.begin(), dst_trees.end(), int64_t{0});
    for (std::size_t l = 0; l < batch.blocks.size(); ++l) {
      const Block& b = batch.blocks[l];
      ASSERT_EQ(b.edge_types.size(), b.indices.size());
      for (int64_t i = 0; i < b.num_dst; ++i) {
        const int64_t v = b.src_nodes[i];
        const int64_t t = seed_times[b.src_trees[i]];
        for (int r = 0; r < 5; ++r) {
          const int64_t f = o.relation_fanouts[r].empty() ? o.fanouts[l] : o.relation_fanouts[r][l];
          // The relation's eligible entries of column v, by time then position (the view's order).
          std::vector<std::pair<int64_t, int64_t>> eligible;
          for (int64_t p = g.graph.indptr[v]; p < g.graph.indptr[v + 1]; ++p) {
            if (g.type_per_edge[p] == r && node_time[g.graph.indices[p]] <= t) {
              eligible.emplace_back(node_time[g.graph.indices[p]], p);
            }
          }
          std::sort(eligible.begin(), eligible.end());
          std::set<int64_t> taken;
          for (int64_t e = b.indptr[i]; e < b.indptr[i + 1]; ++e) {
            if (b.edge_types[e] != r) continue;
            EXPECT_EQ(g.type_per_edge[b.edge_ids[e]], r);
            EXPECT_LE(node_time[b.src_nodes[b.indices[e]]], t);
            EXPECT_EQ(b.src_trees[b.indices[e]], b.src_trees[i]);
            taken.insert(b.edge_ids[e]);
          }
          const auto expect = f < 0 ? eligible.size() : std::min<std::size_t>(f, eligible.size());
          EXPECT_EQ(taken.size(), expect) << "layer " << l << " node " << v << " relation " << r;
          if (strategy == TemporalStrategy::kLast) {
            std::set<int64_t> last;
            for (std::size_t k = eligible.size() - expect; k < eligible.size(); ++k) last.insert(eligible[k].second);
            EXPECT_EQ(taken, last);
          }
        }
      }
      // Split by type, each type's nodes keep their trees.
      const HeteroBlock split = split_block(b, g.view());
      ASSERT_EQ(split.src_trees.size(), 3u);
      for (int type = 0; type < 3; ++type) {
        ASSERT_EQ(split.src_trees[type].size(), split.src_nodes[type].size());
      }
      std::vector<std::size_t> next(3, 0);
      for (int64_t k = 0; k < b.num_src(); ++k) {
        const int type = b.src_nodes[k] < 200 ? 0 : b.src_nodes[k] < 350 ? 1 : 2;
        EXPECT_EQ(split.src_trees[type][next[type]++], b.src_trees[k]);
      }
    }
  }
  // One relation: the typed sampler draws what the untyped one does (relation 0's stream is the
  // tree's own).
  const test::TypedGraph one = test::TypedGraph::random({300}, {{0, 0}}, 6.0, 2);
  const TemporalIndex one_index = TemporalIndex::build(one.graph.csc(), std::span<const int64_t>(node_time).first(300),
                                                       TimeSource::kNode, one.type_per_edge);
  SampleGraph typed = one.sample_graph(), plain = one.graph.sample_graph();
  typed.temporal = plain.temporal = &one_index;
  const MiniBatch a = NeighborSampler(typed, temporal_options({3, 2}, TemporalStrategy::kUniform))
                          .sample_temporal(seeds, seed_times, 8);
  MiniBatch b = NeighborSampler(plain, temporal_options({3, 2}, TemporalStrategy::kUniform))
                    .sample_temporal(seeds, seed_times, 8);
  for (Block& block : b.blocks) block.edge_types.assign(block.indices.size(), 0);
  test::expect_same_minibatch(a, b);
}

TEST(TemporalSampler, RefusesWhatItCannotSample) {
  const OwnedGraph g = golden_graph();
  const TemporalIndex index = TemporalIndex::build(g.csc(), kGoldenNodeTime, TimeSource::kNode);
  SampleGraph graph = g.sample_graph();
  graph.temporal = &index;
  const NeighborSampler sampler(graph, temporal_options({2}, TemporalStrategy::kUniform));
  EXPECT_THROW(sampler.sample(std::vector<int64_t>{0}, 0), InvalidArgument);  // times needed
  EXPECT_THROW(sampler.sample_temporal(std::vector<int64_t>{0, 1}, std::vector<int64_t>{1}, 0), InvalidArgument);
  EXPECT_THROW(sampler.sample_temporal(std::vector<int64_t>{6}, std::vector<int64_t>{1}, 0), OutOfRange);
  EXPECT_THROW(NeighborSampler(graph, temporal_options({2}, TemporalStrategy::kLast, true)), InvalidArgument);
  const NeighborSampler untimed(g.sample_graph(), temporal_options({2}, TemporalStrategy::kUniform));
  EXPECT_THROW(untimed.sample_temporal(std::vector<int64_t>{0}, std::vector<int64_t>{1}, 0), InvalidArgument);
  SamplerSpec spec;
  spec.fanouts = {2};
  spec.bulk = true;
  EXPECT_THROW(make_sampler(spec, graph), InvalidArgument);
  spec.bulk = false;
  spec.temporal_strategy = TemporalStrategy::kLast;
  const auto front_door = make_sampler(spec, graph);
  EXPECT_EQ(neighbours(front_door->sample_temporal(std::vector<int64_t>{0}, std::vector<int64_t>{5}, 0).blocks[0], 0),
            (std::vector<int64_t>{3, 4}));
  EXPECT_THROW(make_sampler(spec, g.sample_graph())->sample_temporal(std::vector<int64_t>{0}, std::vector<int64_t>{5}, 0),
               InvalidArgument);  // the graph has no times
  spec.kind = SamplerKind::kLadies;
  EXPECT_THROW(make_sampler(spec, g.sample_graph())->sample_temporal(std::vector<int64_t>{0}, std::vector<int64_t>{5}, 0),
               Unsupported);
  EXPECT_EQ(parse_temporal_strategy("last"), TemporalStrategy::kLast);
  EXPECT_EQ(temporal_strategy_name(TemporalStrategy::kUniform), "uniform");
  EXPECT_THROW(parse_temporal_strategy("recent"), InvalidArgument);
  // The listed names are the ones parsed, each to its own strategy, in the enum's order.
  for (std::size_t k = 0; k < kTemporalStrategyNames.size(); ++k) {
    EXPECT_EQ(parse_temporal_strategy(kTemporalStrategyNames[k]), static_cast<TemporalStrategy>(k));
    EXPECT_EQ(temporal_strategy_name(static_cast<TemporalStrategy>(k)), kTemporalStrategyNames[k]);
  }
}

}  // namespace
}  // namespace graphtier::sample
