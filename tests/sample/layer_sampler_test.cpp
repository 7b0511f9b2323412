// Layer-wise samplers (LADIES, FastGCN): golden cases on tiny graphs, the naive reference on random
// graphs, the draw statistics against exact probabilities, and CUDA against CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <thread>

#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/portable_math.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/sample/layer_sampler.hpp"
#include "graphtier/sample/random.hpp"
#include "layer_sampler_test_util.hpp"
#include "cpu/layer_sampler_cpu.hpp"
#include "layer_draws.hpp"
#include "sample_test_util.hpp"
#if GRAPHTIER_WITH_CUDA
#include "cuda/layer_sampler_cuda.hpp"
#endif

namespace graphtier::sample {
namespace {

using test::OwnedGraph;

LayerSamplerOptions layers(std::vector<int64_t> sizes, LayerMethod method = LayerMethod::kLadies, uint64_t seed = 7) {
  LayerSamplerOptions o;
  o.layer_sizes = std::move(sizes);
  o.method = method;
  o.seed = seed;
  return o;
}

// 0 <- 1, 2;  1 <- 3;  2, 3 <- (none)
OwnedGraph chain() { return OwnedGraph::from_edges(4, {{1, 0}, {2, 0}, {3, 1}}); }

/// A CudaLayerSampler with the DeviceTopology it reads (it borrows it), in device memory unless
/// `placement` says otherwise.
struct GpuLayer {
  GpuLayer(const SampleGraph& graph, LayerSamplerOptions options, TopologyOptions placement = {})
      : topology(graph, placement), sampler(topology, graph, std::move(options)) {}
  DeviceTopology topology;
  CudaLayerSampler sampler;
};

void expect_weights(const Block& b, const std::vector<double>& expected) {
  ASSERT_EQ(b.weights.size(), expected.size());
  for (std::size_t e = 0; e < expected.size(); ++e) EXPECT_NEAR(b.weights[e], expected[e], 1e-6) << "edge " << e;
}

double chi_square(const std::vector<int64_t>& counts, const std::vector<double>& p) {
  const double n = std::accumulate(counts.begin(), counts.end(), 0.0);
  double stat = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    const double e = n * p[k];
    stat += (counts[k] - e) * (counts[k] - e) / e;
  }
  return stat;
}

TEST(LayerSampler, GoldenLadiesAllCandidatesByHand) {
  // Block 0, dst {0}: row 0 (d = 2) has entries 1, 2 and its self-loop, each 1/3 in Â, so all
  // three columns weigh 1/9: the weights are 1/3 each. Order: CSC entries, then the self-loop.
  // Block 1, dst {0, 1, 2}: Â^2 per row 1/9, 1/4, 1 (d = 2, 1, 0). Column sums (in 36ths):
  // c0 = 4, c1 = 4 + 9 = 13, c2 = 4 + 36 = 40, c3 = 9. Row 0: 1/c ∝ 1/13, 1/40, 1/4 -> 40/183,
  // 13/183, 130/183. Row 1: entries 3 and self 1: 1/9, 1/13 -> 13/22, 9/22. Row 2: self, 1.
  const OwnedGraph g = chain();
  const LayerSampler sampler(g.sample_graph(), layers({-1, -1}));
  const std::vector<int64_t> seeds = {0};
  const MiniBatch b = sampler.sample(seeds, 3);
  check_minibatch(b, g.num_nodes(), g.num_edges());
  ASSERT_EQ(b.blocks.size(), 2u);
  EXPECT_EQ(b.blocks[0].src_nodes, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(b.blocks[0].indptr, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(b.blocks[0].indices, (std::vector<int64_t>{1, 2, 0}));
  expect_weights(b.blocks[0], {1.0 / 3, 1.0 / 3, 1.0 / 3});
  EXPECT_TRUE(b.blocks[0].edge_ids.empty());
  EXPECT_EQ(b.blocks[1].src_nodes, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(b.blocks[1].indptr, (std::vector<int64_t>{0, 3, 5, 6}));
  EXPECT_EQ(b.blocks[1].indices, (std::vector<int64_t>{1, 2, 0, 3, 1, 2}));
  expect_weights(b.blocks[1], {40.0 / 183, 13.0 / 183, 130.0 / 183, 13.0 / 22, 9.0 / 22, 1.0});
  const std::span<const int64_t> input = b.input_nodes();
  EXPECT_EQ(std::vector<int64_t>(input.begin(), input.end()), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(LayerSampler, GoldenColumnWeightsByHand) {
  // The draw weights are c_u in fixed point (2^62 / 9, 2^62 / 4, ...), scaled by one shift.
  const OwnedGraph g = chain();
  const std::vector<int64_t> dst = {0, 1, 2};
  const cpu::WeightedNodes c = cpu::ladies_candidates(g.csc(), dst);
  EXPECT_EQ(c.ids, (std::vector<int64_t>{0, 1, 2, 3}));
  const double expected[] = {4.0 / 66, 13.0 / 66, 40.0 / 66, 9.0 / 66};
  const double total = static_cast<double>(std::accumulate(c.weights.begin(), c.weights.end(), uint64_t{0}));
  for (std::size_t k = 0; k < 4; ++k) EXPECT_NEAR(static_cast<double>(c.weights[k]) / total, expected[k], 1e-15);
  // FastGCN uses every row: c0 = 1/9, c1 = 1/9 + 1/4, c2 = 1/9 + 1, c3 = 1/4 + 1 (36ths: 4, 13, 40, 45).
  const std::vector<uint64_t> f = cpu::fastgcn_weights(g.csc());
  const double f_total = static_cast<double>(std::accumulate(f.begin(), f.end(), uint64_t{0}));
  const double f_expected[] = {4.0 / 102, 13.0 / 102, 40.0 / 102, 45.0 / 102};
  for (std::size_t k = 0; k < 4; ++k) EXPECT_NEAR(static_cast<double>(f[k]) / f_total, f_expected[k], 1e-15);
}

TEST(LayerSampler, GoldenSingleDrawFollowsTheStream) {
  // One draw among candidates 0..3: the race's winner (naive_race_order, the slow reference); a
  // candidate already a dst node adds nothing new.
  const OwnedGraph g = chain();
  const LayerSampler sampler(g.sample_graph(), layers({-1, 1}));
  const std::vector<int64_t> seeds = {0};
  const std::vector<int64_t> dst = {0, 1, 2};
  const cpu::WeightedNodes c = cpu::ladies_candidates(g.csc(), dst);
  int picked_three = 0;
  for (uint64_t stream = 0; stream < 64; ++stream) {
    const uint64_t ls = layer_stream(stream, 1);
    const int64_t pick = c.ids[test::naive_race_order(c.weights, 7, ls)[0]];
    const Block b = sampler.sample(seeds, stream).blocks[1];
    if (pick == 3) {
      ++picked_three;
      EXPECT_EQ(b.src_nodes, (std::vector<int64_t>{0, 1, 2, 3}));
      EXPECT_EQ(b.indices, (std::vector<int64_t>{1, 2, 0, 3, 1, 2}));
    } else {
      // Only the kept dst nodes: row 1 loses its edge to 3.
      EXPECT_EQ(b.src_nodes, (std::vector<int64_t>{0, 1, 2}));
      EXPECT_EQ(b.indices, (std::vector<int64_t>{1, 2, 0, 1, 2}));
      expect_weights(b, {40.0 / 183, 13.0 / 183, 130.0 / 183, 1.0, 1.0});
    }
  }
  EXPECT_GT(picked_three, 0);  // p_3 = 9/66: some of 64 streams draw it
  EXPECT_LT(picked_three, 64);
}

TEST(LayerSampler, GoldenRaceByHand) {
  // Two candidates, weights 1 and 3: one internal node (the root, 1) over leaves 2 and 3. The root
  // key is E_0 / 4; leaf 2 holds the minimum iff bounded_u64(race_bits(1, 0), 4) < 1; the other
  // leaf's key adds E_1 / its weight.
  const std::vector<uint64_t> w = {1, 3};
  const std::vector<uint64_t> internal = cpu::race_tree(w);
  ASSERT_EQ(internal, (std::vector<uint64_t>{0, 4}));
  const layer::RaceTree t{internal.data(), w.data(), 2, 1};
  for (uint64_t ls = 0; ls < 32; ++ls) {
    const auto exp_of = [&](int64_t x) {
      return -portable_log(std::max(u64_to_unit_double(layer::race_bits(5, ls, x, 1)), 0x1p-60));
    };
    const double root = exp_of(0) / 4;
    const bool first_wins = bounded_u64(layer::race_bits(5, ls, 1, 0), 4) < 1;
    const double k0 = first_wins ? root : root + exp_of(1) / 1;
    const double k1 = first_wins ? root + exp_of(1) / 3 : root;
    EXPECT_EQ(layer::race_root_key(t, 5, ls), root);
    EXPECT_EQ(layer::race_leaf_key(t, 5, ls, 0), k0) << "ls " << ls;
    EXPECT_EQ(layer::race_leaf_key(t, 5, ls, 1), k1) << "ls " << ls;
    EXPECT_EQ(cpu::draw_positions(w, {}, 1, 5, ls), (std::vector<int64_t>{first_wins ? 0 : 1})) << "ls " << ls;
  }
}

/// Weights of mixed scales whose total stays below 2^53, as after weight_shift.
std::vector<uint64_t> mixed_weights(int64_t n) {
  std::vector<uint64_t> weights;
  for (uint64_t i = 0; i < static_cast<uint64_t>(n); ++i) {
    weights.push_back(1 + bounded_u64(mix64(i), i % 7 == 0 ? uint64_t{1} << 40 : 1000));
  }
  return weights;
}

/// What the CUDA backend computes: every leaf's key by its root path, then (key, position) order.
std::vector<int64_t> leaf_walk_draws(std::span<const uint64_t> weights, int64_t s, uint64_t seed, uint64_t ls) {
  const std::vector<uint64_t> internal = cpu::race_tree(weights);
  const auto n = static_cast<int64_t>(weights.size());
  const layer::RaceTree t{internal.data(), weights.data(), n, layer::race_levels(n)};
  std::vector<std::pair<uint64_t, int64_t>> keys;
  for (int64_t i = 0; i < n; ++i) {
    const double k = layer::race_leaf_key(t, seed, ls, i);
    uint64_t bits;
    std::memcpy(&bits, &k, sizeof bits);
    keys.emplace_back(bits, i);  // positive doubles order like their bits, as the device sorts them
  }
  std::stable_sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int64_t> out;
  for (int64_t k = 0; k < s; ++k) out.push_back(keys[k].second);
  return out;
}

TEST(LayerSampler, RaceDrawsAgreeAcrossMethods) {
  // The host's level-by-level expansion, the device's per-leaf walk plus sort, and the naive
  // reference give the same draws in the same order; the tree from prefix sums (device) equals the
  // host's bottom-up tree; a shared tree gives what a private one does.
  for (const int64_t n : {1, 2, 3, 5, 8, 1000, 1025}) {
    const std::vector<uint64_t> weights = mixed_weights(n);
    std::vector<uint64_t> prefix(weights.size());
    std::inclusive_scan(weights.begin(), weights.end(), prefix.begin());
    ASSERT_LT(prefix.back(), uint64_t{1} << 53);
    const std::vector<uint64_t> tree = cpu::race_tree(weights);
    const int levels = layer::race_levels(n);
    ASSERT_EQ(tree.size(), std::size_t{1} << levels);
    for (int64_t x = 1; x < (int64_t{1} << levels); ++x) {
      ASSERT_EQ(layer::race_tree_entry(prefix.data(), n, levels, x), tree[x]) << "n " << n << " node " << x;
    }
    for (uint64_t ls = 0; ls < 3; ++ls) {
      const std::vector<int64_t> naive = test::naive_race_order(weights, 3, ls);
      for (const int64_t s : {int64_t{1}, int64_t{2}, n / 2, n - 1}) {
        if (s < 1 || s >= n) continue;
        SCOPED_TRACE(::testing::Message() << "n " << n << " s " << s << " ls " << ls);
        const std::vector<int64_t> host = cpu::draw_positions(weights, {}, s, 3, ls);
        EXPECT_EQ(host, std::vector<int64_t>(naive.begin(), naive.begin() + s));
        EXPECT_EQ(host, leaf_walk_draws(weights, s, 3, ls));
        EXPECT_EQ(host, cpu::draw_positions(weights, tree, s, 3, ls));
      }
    }
  }
  const std::vector<uint64_t> weights = mixed_weights(1000);
  std::vector<int64_t> all(1000);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(cpu::draw_positions(weights, {}, 1000, 3, 4), all);
  EXPECT_EQ(cpu::draw_positions(weights, {}, -1, 3, 4), all);
  EXPECT_TRUE(cpu::draw_positions(weights, {}, 0, 3, 4).empty());
}

/// What the CUDA backend's staged_draws computes (FastGCN), replayed with the functions its kernels
/// call: stage 0's keys at depth d_0 from the root, then k levels below the s kept nodes at a time;
/// each stage a stable sort of (key bits, node) pairs generated in node order, the kept ones those
/// at most the s-th pair (race_at_most), in node order; the draws the first s sorted leaves.
std::vector<int64_t> staged_draws(std::span<const uint64_t> weights, std::span<const uint64_t> tree, int64_t s,
                                  uint64_t seed, uint64_t ls) {
  const auto n = static_cast<int64_t>(weights.size());
  const layer::RaceTree t{tree.data(), weights.data(), n, layer::race_levels(n)};
  const int first = layer::race_first_depth(t.levels, s);
  const int step = layer::race_stage_step(s);
  std::vector<std::pair<uint64_t, int64_t>> pairs;  // (key bits, node)
  const auto bits = [](double k) { return detail::double_bits(k); };
  for (int64_t x = int64_t{1} << first; x < int64_t{2} << first; ++x) {
    pairs.emplace_back(bits(layer::race_node_key(t, seed, ls, x, first)), x);
  }
  int depth = first;
  for (;;) {
    EXPECT_GT(static_cast<int64_t>(pairs.size()), s) << "depth " << depth;
    EXPECT_LE(static_cast<int64_t>(pairs.size()), layer::race_stage_width(s) > (int64_t{1} << t.levels)
                                                      ? (int64_t{1} << t.levels)
                                                      : layer::race_stage_width(s));
    std::vector<std::pair<uint64_t, int64_t>> sorted = pairs;
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    if (depth == t.levels) {
      std::vector<int64_t> out;
      for (int64_t j = 0; j < s; ++j) out.push_back(sorted[j].second - (int64_t{1} << t.levels));
      return out;
    }
    std::vector<std::pair<uint64_t, int64_t>> kept;
    for (const auto& p : pairs) {
      if (layer::race_at_most(p.first, p.second, sorted[s - 1].first, sorted[s - 1].second)) kept.push_back(p);
    }
    EXPECT_EQ(static_cast<int64_t>(kept.size()), s);
    const int k = std::min(step, t.levels - depth);
    pairs.clear();
    for (const auto& [key, x] : kept) {
      for (int64_t c = 0; c < (int64_t{1} << k); ++c) {
        const int64_t y = (x << k) + c;
        pairs.emplace_back(bits(layer::race_descendant_key(t, seed, ls, depth, detail::bits_double(key), y, depth + k)),
                           y);
      }
    }
    depth += k;
  }
}

TEST(LayerSampler, StagedDrawsEqualTheHostDraws) {
  // The device's FastGCN draws by stages against the host's level-by-level expansion (the same
  // positions in the same order), for candidate counts around powers of two, plans of one to
  // several stages (s = 1: one deep step; s = 700: steps of 3) and draws of all but one.
  for (const int64_t n : {int64_t{2}, int64_t{3}, int64_t{300}, int64_t{4096}, int64_t{4097}, int64_t{70001},
                          int64_t{262144}}) {
    const std::vector<uint64_t> weights = mixed_weights(n);
    const std::vector<uint64_t> tree = cpu::race_tree(weights);
    for (const int64_t s : {int64_t{1}, int64_t{2}, int64_t{33}, int64_t{700}, int64_t{5000}, n / 2, n - 1}) {
      if (s < 1 || s >= n || (n > 100000 && s > 5000)) continue;  // the largest n: the multi-stage plans
      for (uint64_t ls = 0; ls < 2; ++ls) {
        SCOPED_TRACE(::testing::Message() << "n " << n << " s " << s << " ls " << ls);
        EXPECT_EQ(staged_draws(weights, tree, s, 9, ls), cpu::draw_positions(weights, tree, s, 9, ls));
      }
    }
  }
  // Plans: at most race_stage_width(s) pairs a stage, steps of at least 3 levels.
  EXPECT_EQ(layer::race_first_depth(22, 8192), 16);
  EXPECT_EQ(layer::race_stage_step(8192), 3);
  EXPECT_EQ(layer::race_first_depth(22, 1), 12);
  EXPECT_EQ(layer::race_stage_step(1), 12);
  EXPECT_EQ(layer::race_first_depth(9, 1), 9);
}

TEST(LayerSampler, NodeKeysAreTheMinimumOfTheirLeaves) {
  // race_node_key at every depth, and race_descendant_key from any ancestor, agree with the leaves'
  // keys: a node's key is its smallest leaf key exactly (weightless nodes: +inf).
  const int64_t n = 37;
  const std::vector<uint64_t> weights = mixed_weights(n);
  const std::vector<uint64_t> tree = cpu::race_tree(weights);
  const layer::RaceTree t{tree.data(), weights.data(), n, layer::race_levels(n)};
  for (int depth = 0; depth <= t.levels; ++depth) {
    for (int64_t x = int64_t{1} << depth; x < int64_t{2} << depth; ++x) {
      double smallest = layer::race_no_key();
      const int span = t.levels - depth;
      for (int64_t i = (x - (int64_t{1} << depth)) << span; i < ((x + 1 - (int64_t{1} << depth)) << span) && i < n; ++i) {
        smallest = std::min(smallest, layer::race_leaf_key(t, 4, 2, i));
      }
      const double key = layer::race_node_key(t, 4, 2, x, depth);
      EXPECT_EQ(key, smallest) << "node " << x;
      if (depth >= 2) {
        const int64_t up = x >> 2;
        EXPECT_EQ(layer::race_descendant_key(t, 4, 2, depth - 2, layer::race_node_key(t, 4, 2, up, depth - 2), x, depth),
                  key);
      }
    }
  }
}

TEST(LayerSampler, RaceTiesGoToTheSmallerPosition) {
  // Equal weights at the smallest scale still give distinct keys almost surely; a tie is forced
  // here by comparing the order function itself, which both backends use.
  EXPECT_TRUE(layer::race_before(1.0, 3, 1.0, 4));
  EXPECT_FALSE(layer::race_before(1.0, 4, 1.0, 3));
  EXPECT_TRUE(layer::race_before(0.5, 9, 1.0, 0));
  EXPECT_FALSE(layer::race_before(1.0, 3, 1.0, 3));
}

TEST(LayerSampler, RaceOrderFollowsSuccessiveSampling) {
  // The race's first two draws have the law of successive sampling: P(first i, then j) =
  // w_i / W * w_j / (W - w_i), computed exactly. 5 candidates (3 padding leaves in the tree),
  // weights of mixed scale: 20 ordered pairs, 19 degrees of freedom, the 99.9% quantile is 43.82;
  // 40000 seeded layer streams (a fixed seed: the statistic is deterministic, a false alarm is
  // about 1 in 1000 of the streams' choices, not a flake).
  const std::vector<uint64_t> w = {1, 7, 2, 30, 10};
  const double total = 50;
  std::vector<double> p;
  std::vector<int64_t> counts;
  std::map<std::pair<int64_t, int64_t>, std::size_t> slot;
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      if (i == j) continue;
      slot[{i, j}] = p.size();
      p.push_back(static_cast<double>(w[i]) / total * static_cast<double>(w[j]) / (total - static_cast<double>(w[i])));
    }
  }
  counts.assign(p.size(), 0);
  const std::vector<uint64_t> tree = cpu::race_tree(w);
  for (uint64_t stream = 0; stream < 40000; ++stream) {
    const std::vector<int64_t> d = cpu::draw_positions(w, tree, 2, 11, layer_stream(stream, 0));
    ASSERT_EQ(d.size(), 2u);
    ++counts[slot.at({d[0], d[1]})];
  }
  EXPECT_LT(chi_square(counts, p), 43.82);
  // Inclusion in 3 draws against exact enumeration of successive sampling: z within 4.5.
  std::vector<double> wd(w.begin(), w.end());
  const std::vector<double> pi = test::exact_inclusion(wd, 3);
  std::vector<int64_t> in(5, 0);
  constexpr int kStreams = 40000;
  for (uint64_t stream = 0; stream < kStreams; ++stream) {
    for (const int64_t k : cpu::draw_positions(w, tree, 3, 12, layer_stream(stream, 1))) ++in[k];
  }
  for (int64_t u = 0; u < 5; ++u) {
    const double freq = static_cast<double>(in[u]) / kStreams;
    const double sd = std::sqrt(pi[u] * (1 - pi[u]) / kStreams);
    EXPECT_LT(std::abs(freq - pi[u]) / sd, 4.5) << "candidate " << u << ": " << freq << " vs " << pi[u];
  }
}

TEST(LayerSampler, ZeroDegreeSeedsAndLayerSizeZero) {
  const OwnedGraph g = chain();
  const std::vector<int64_t> seeds = {3, 2};
  for (const LayerMethod m : {LayerMethod::kLadies, LayerMethod::kFastGcn}) {
    const LayerSampler sampler(g.sample_graph(), layers({2, 0}, m));
    const MiniBatch b = sampler.sample(seeds, 11);
    check_minibatch(b, g.num_nodes(), g.num_edges());
    for (const Block& block : b.blocks) {
      // No in-neighbours: each seed keeps its self-loop only, weight 1.
      EXPECT_EQ(block.src_nodes, seeds);
      EXPECT_EQ(block.indptr, (std::vector<int64_t>{0, 1, 2}));
      EXPECT_EQ(block.indices, (std::vector<int64_t>{0, 1}));
      expect_weights(block, {1.0, 1.0});
    }
  }
  // No seeds: empty blocks, for both methods.
  for (const LayerMethod m : {LayerMethod::kLadies, LayerMethod::kFastGcn}) {
    const MiniBatch empty = LayerSampler(g.sample_graph(), layers({2, -1}, m)).sample({}, 0);
    check_minibatch(empty, g.num_nodes(), g.num_edges());
    ASSERT_EQ(empty.blocks.size(), 2u);
    EXPECT_EQ(empty.num_edges(), 0);
    EXPECT_TRUE(empty.input_nodes().empty());
  }
  // Size 0 on a node with neighbours: only edges among the dst nodes.
  const LayerSampler none(g.sample_graph(), layers({0}));
  const std::vector<int64_t> two = {0, 1};
  const Block b = none.sample(two, 0).blocks[0];
  EXPECT_EQ(b.src_nodes, two);
  EXPECT_EQ(b.indptr, (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(b.indices, (std::vector<int64_t>{1, 0, 1}));
}

TEST(LayerSampler, RejectsBadSeedsAndOptions) {
  OwnedGraph g = chain();
  const LayerSampler sampler(g.sample_graph(), layers({1}));
  const std::vector<int64_t> out_of_range = {4};
  const std::vector<int64_t> repeated = {1, 1};
  EXPECT_THROW(sampler.sample(out_of_range, 0), OutOfRange);
  EXPECT_THROW(sampler.sample(repeated, 0), InvalidArgument);
  EXPECT_THROW(LayerSampler(g.sample_graph(), layers({})), InvalidArgument);
  EXPECT_THROW(LayerSampler(g.sample_graph(), layers({-2})), InvalidArgument);
  EXPECT_THROW(LayerSampler(g.sample_graph(), layers({int64_t{1} << 24})), InvalidArgument);
  EXPECT_THROW(LayerSampler(g.sample_graph(), layers({1}, static_cast<LayerMethod>(9))), InvalidArgument);
  g.weights = {1, 1, 1};
  EXPECT_THROW(LayerSampler(g.sample_graph(), layers({1})), InvalidArgument);
}

// Every sampled edge exists with its multiplicity: row i's entries are exactly the entries of
// N(i) in the src set, then i itself; rows sum to 1; at most `size` new nodes per block.
void check_layer_properties(const OwnedGraph& g, const MiniBatch& b, const LayerSamplerOptions& o) {
  check_minibatch(b, g.num_nodes(), g.num_edges());
  for (std::size_t l = 0; l < b.blocks.size(); ++l) {
    const Block& block = b.blocks[l];
    const std::set<int64_t> src(block.src_nodes.begin(), block.src_nodes.end());
    if (o.layer_sizes[l] >= 0) {
      EXPECT_LE(block.num_src() - block.num_dst, o.layer_sizes[l]);
    }
    for (int64_t i = 0; i < block.num_dst; ++i) {
      const int64_t v = block.src_nodes[i];
      std::vector<int64_t> expected;
      for (int64_t p = g.indptr[v]; p < g.indptr[v + 1]; ++p) {
        if (src.count(g.indices[p])) expected.push_back(g.indices[p]);
      }
      expected.push_back(v);
      std::vector<int64_t> got;
      double sum = 0;
      for (int64_t e = block.indptr[i]; e < block.indptr[i + 1]; ++e) {
        got.push_back(block.src_nodes[block.indices[e]]);
        EXPECT_GT(block.weights[e], 0.0f);
        sum += block.weights[e];
      }
      ASSERT_EQ(got, expected) << "block " << l << " row " << i;
      EXPECT_NEAR(sum, 1.0, 1e-5);
    }
  }
}

struct Case {
  LayerMethod method;
  std::vector<int64_t> sizes;
};

class LayerSamplerProperties : public ::testing::TestWithParam<Case> {};

TEST_P(LayerSamplerProperties, MatchReferenceAndContract) {
  const Case& c = GetParam();
  for (uint64_t graph_seed = 1; graph_seed <= 3; ++graph_seed) {
    const OwnedGraph g = OwnedGraph::random(300, 6.0, graph_seed);
    const LayerSamplerOptions o = layers(c.sizes, c.method, graph_seed * 13);
    const LayerSampler sampler(g.sample_graph(), o);
    for (uint64_t stream = 0; stream < 4; ++stream) {
      const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 16, stream + 100 * graph_seed);
      const MiniBatch b = sampler.sample(seeds, stream);
      check_layer_properties(g, b, o);
      test::expect_same_minibatch(b, test::reference_layer_sample(g, seeds, o, stream));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, LayerSamplerProperties,
                         ::testing::Values(Case{LayerMethod::kLadies, {8, 8, 8}}, Case{LayerMethod::kLadies, {64, 1, -1}},
                                           Case{LayerMethod::kLadies, {0, 500}}, Case{LayerMethod::kFastGcn, {8, 8, 8}},
                                           Case{LayerMethod::kFastGcn, {150, 3}},
                                           Case{LayerMethod::kFastGcn, {-1, 400}}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.method == LayerMethod::kLadies ? "Ladies" : "FastGcn";
                           for (const int64_t s : info.param.sizes) name += s < 0 ? "_all" : "_" + std::to_string(s);
                           return name;
                         });

TEST(LayerSampler, PoolSizeDoesNotChangeTheSample) {
  const OwnedGraph g = OwnedGraph::random(3000, 8.0, 5);
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 512, 9);
  ThreadPool pool(3);
  for (const LayerMethod m : {LayerMethod::kLadies, LayerMethod::kFastGcn}) {
    const LayerSampler sampler(g.sample_graph(), layers({400, 400}, m));
    test::expect_same_minibatch(sampler.sample(seeds, 2), sampler.sample(seeds, 2, &pool));
  }
}

/// The same graph with int64 indices (the other width the CSC may be stored in).
SampleGraph wide_view(const OwnedGraph& g, std::vector<int64_t>& storage) {
  storage.assign(g.indices.begin(), g.indices.end());
  return {graph::CscView{g.indptr, graph::IndexSpan(std::span<const int64_t>(storage))}, {}};
}

TEST(LayerSampler, IndexWidthDoesNotChangeTheSample) {
  const OwnedGraph g = OwnedGraph::random(400, 6.0, 8);
  std::vector<int64_t> wide;
  const SampleGraph wide_graph = wide_view(g, wide);
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 20, 2);
  for (const LayerMethod m : {LayerMethod::kLadies, LayerMethod::kFastGcn}) {
    const LayerSampler narrow_sampler(g.sample_graph(), layers({10, 10}, m));
    const LayerSampler wide_sampler(wide_graph, layers({10, 10}, m));
    test::expect_same_minibatch(narrow_sampler.sample(seeds, 4), wide_sampler.sample(seeds, 4));
  }
}

TEST(LayerSampler, DifferentStreamsAndSeedsDiffer) {
  const OwnedGraph g = OwnedGraph::random(500, 6.0, 4);
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 32, 1);
  const LayerSampler a(g.sample_graph(), layers({16}, LayerMethod::kLadies, 1));
  const LayerSampler b(g.sample_graph(), layers({16}, LayerMethod::kLadies, 2));
  EXPECT_NE(a.sample(seeds, 0).blocks[0].src_nodes, a.sample(seeds, 1).blocks[0].src_nodes);
  EXPECT_NE(a.sample(seeds, 0).blocks[0].src_nodes, b.sample(seeds, 0).blocks[0].src_nodes);
  test::expect_same_minibatch(a.sample(seeds, 5), a.sample(seeds, 5));
}

// Seeds 0, 1, 2 with 0 <- 3, 4, 5;  1 <- 3, 6;  2 <- 3: Â^2 per row 1/16, 1/9, 1/4. The new-node
// candidates are 3, 4, 5, 6; drawing a dst node (0, 1, 2) adds nothing.
OwnedGraph ladies_stats_graph() {
  return OwnedGraph::from_edges(7, {{3, 0}, {4, 0}, {5, 0}, {3, 1}, {6, 1}, {3, 2}});
}


TEST(LayerSampler, LadiesColumnFrequenciesMatchProbabilities) {
  // s = 1: the drawn column is u with probability p_u = c_u / Σ c exactly. Categories: new node
  // 3, 4, 5, 6, or a dst node; 4 degrees of freedom, the 99.9% quantile is 18.47.
  const OwnedGraph g = ladies_stats_graph();
  const std::vector<int64_t> seeds = {0, 1, 2};
  const std::map<int64_t, double> norms = test::exact_column_norms(g, seeds);
  double total = 0;
  for (const auto& [u, c] : norms) total += c;
  const std::vector<double> p = {norms.at(3) / total, norms.at(4) / total, norms.at(5) / total, norms.at(6) / total,
                                 (norms.at(0) + norms.at(1) + norms.at(2)) / total};
  const LayerSampler sampler(g.sample_graph(), layers({1}));
  std::vector<int64_t> counts(5, 0);
  constexpr int kStreams = 20000;
  for (uint64_t stream = 0; stream < kStreams; ++stream) {
    const Block b = sampler.sample(seeds, stream).blocks[0];
    ASSERT_LE(b.num_src(), 4);
    ++counts[b.num_src() == 4 ? b.src_nodes[3] - 3 : 4];
  }
  EXPECT_LT(chi_square(counts, p), 18.47) << counts[0] << " " << counts[1] << " " << counts[2] << " " << counts[3];
}

TEST(LayerSampler, LadiesInclusionWithoutReplacementMatchesExactEnumeration) {
  // s = 3 of 7 candidates: the inclusion probability of each new-node candidate, enumerated over
  // all 210 ordered draws of successive sampling (no Monte Carlo), against its frequency; z-scores
  // within 4.5 (a false alarm about 1 in 10^5 per candidate).
  const OwnedGraph g = ladies_stats_graph();
  const std::vector<int64_t> seeds = {0, 1, 2};
  const std::map<int64_t, double> norms = test::exact_column_norms(g, seeds);
  std::vector<double> w;
  for (const auto& [u, c] : norms) w.push_back(c);  // ids 0..6 in order
  const std::vector<double> pi = test::exact_inclusion(w, 3);
  EXPECT_NEAR(std::accumulate(pi.begin(), pi.end(), 0.0), 3.0, 1e-12);
  const LayerSampler sampler(g.sample_graph(), layers({3}));
  std::vector<int64_t> counts(7, 0);
  constexpr int kStreams = 20000;
  for (uint64_t stream = 0; stream < kStreams; ++stream) {
    const Block b = sampler.sample(seeds, stream).blocks[0];
    for (int64_t k = b.num_dst; k < b.num_src(); ++k) ++counts[b.src_nodes[k]];
  }
  for (int64_t u = 3; u < 7; ++u) {
    const double freq = static_cast<double>(counts[u]) / kStreams;
    const double sd = std::sqrt(pi[u] * (1 - pi[u]) / kStreams);
    EXPECT_LT(std::abs(freq - pi[u]) / sd, 4.5) << "node " << u << ": " << freq << " vs " << pi[u];
  }
  // Inclusion differs from s * p_u (which exceeds 1 for heavy columns): a with-replacement or
  // independent-Bernoulli draw would fail here. Node 3 is the heavy one.
  EXPECT_LT(pi[3], 3 * w[3] / std::accumulate(w.begin(), w.end(), 0.0));
}

TEST(LayerSampler, FastGcnFrequenciesFollowGlobalColumnNorms) {
  // 0 <- 1..5;  1 <- 2, 3;  2 <- 3: every node is an in-neighbour of seed 0, so any drawn node
  // shows up. s = 1, p_u ∝ the column norm over all rows; 5 degrees of freedom (99.9%: 20.52).
  const OwnedGraph g = OwnedGraph::from_edges(6, {{1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}, {2, 1}, {3, 1}, {3, 2}});
  std::vector<int64_t> everyone(6);
  std::iota(everyone.begin(), everyone.end(), 0);
  const std::map<int64_t, double> norms = test::exact_column_norms(g, everyone);
  double total = 0;
  for (const auto& [u, c] : norms) total += c;
  std::vector<double> p;
  for (const auto& [u, c] : norms) p.push_back(c / total);
  const LayerSampler sampler(g.sample_graph(), layers({1}, LayerMethod::kFastGcn));
  std::vector<int64_t> counts(6, 0);
  const std::vector<int64_t> seeds = {0};
  for (uint64_t stream = 0; stream < 20000; ++stream) {
    const Block b = sampler.sample(seeds, stream).blocks[0];
    ++counts[b.num_src() == 2 ? b.src_nodes[1] : 0];
  }
  EXPECT_LT(chi_square(counts, p), 20.52);
}

TEST(LayerSampler, BlocksFitTheBoundsTheCudaBackendSizesBy) {
  // The CUDA backends size every array of a block from its dst rows' nonzeros N = Σ (degree + 1)
  // (layer_sampler.hpp; the device form sums them on the device over the previous block's src
  // nodes): edges <= N, src nodes <= dst + min(src set capacity, N), the capacity being N for
  // LADIES and drawn + dst for FastGCN.
  for (const LayerMethod m : {LayerMethod::kLadies, LayerMethod::kFastGcn}) {
    for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{8, 8, 8}, std::vector<int64_t>{256, -1},
                                              std::vector<int64_t>{0, 2000}}) {
      const OwnedGraph g = OwnedGraph::random(3000, 8.0, 4);
      const LayerSampler sampler(g.sample_graph(), layers(sizes, m));
      const MiniBatch b = sampler.sample(test::random_seeds(g.num_nodes(), 200, 1), 1);
      for (std::size_t l = 0; l < b.blocks.size(); ++l) {
        const Block& k = b.blocks[l];
        int64_t nonzeros = 0;
        for (const int64_t v : k.dst_nodes()) nonzeros += g.indptr[v + 1] - g.indptr[v] + 1;
        const int64_t drawn = sizes[l] < 0 || sizes[l] >= g.num_nodes() ? g.num_nodes() : sizes[l];
        const int64_t capacity = m == LayerMethod::kLadies ? nonzeros : drawn + k.num_dst;
        EXPECT_LE(k.num_edges(), nonzeros) << "block " << l;
        EXPECT_LE(k.num_src(), k.num_dst + std::min(capacity, nonzeros)) << "block " << l;
      }
    }
  }
}

TEST(LayerSampler, CudaMatchesCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: CUDA layer sampler not checked against the CPU one";
  for (const LayerMethod m : {LayerMethod::kLadies, LayerMethod::kFastGcn}) {
    for (const std::vector<int64_t>& sizes :
         {std::vector<int64_t>{8, 8, 8}, std::vector<int64_t>{256, 1, -1}, std::vector<int64_t>{0, 2000}}) {
      for (uint64_t graph_seed = 1; graph_seed <= 2; ++graph_seed) {
        const OwnedGraph g = OwnedGraph::random(5000, 8.0, graph_seed);
        const LayerSamplerOptions o = layers(sizes, m, graph_seed);
        const LayerSampler cpu_sampler(g.sample_graph(), o);
        const GpuLayer gpu_sampler_owner(g.sample_graph(), o);
        const CudaLayerSampler& gpu_sampler = gpu_sampler_owner.sampler;
        for (uint64_t stream = 0; stream < 3; ++stream) {
          const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 300, stream);
          SCOPED_TRACE(::testing::Message() << "method " << static_cast<int>(m) << " sizes[0] " << sizes[0]
                                            << " graph " << graph_seed << " stream " << stream);
          test::expect_same_minibatch(gpu_sampler.sample(seeds, stream), cpu_sampler.sample(seeds, stream));
        }
      }
    }
  }
  // int64 indices take the other kernel instantiation.
  const OwnedGraph big = OwnedGraph::random(2000, 6.0, 3);
  std::vector<int64_t> wide;
  const SampleGraph wide_graph = wide_view(big, wide);
  const std::vector<int64_t> some = test::random_seeds(big.num_nodes(), 100, 3);
  for (const LayerMethod m : {LayerMethod::kLadies, LayerMethod::kFastGcn}) {
    const GpuLayer gpu_wide_owner(wide_graph, layers({64, 64}, m));
    const CudaLayerSampler& gpu_wide = gpu_wide_owner.sampler;
    const LayerSampler cpu_narrow(big.sample_graph(), layers({64, 64}, m));
    test::expect_same_minibatch(gpu_wide.sample(some, 9), cpu_narrow.sample(some, 9));
  }
  // The topology in pinned memory or half cached: the same batches (the sampler reads any placement).
  for (const TopologyOptions placement : {TopologyOptions{.placement = TopologyPlacement::kPinned},
                                          TopologyOptions{.placement = TopologyPlacement::kCached,
                                                          .cache_bytes = big.num_edges() * 2}}) {
    for (const LayerMethod m : {LayerMethod::kLadies, LayerMethod::kFastGcn}) {
      const GpuLayer gpu(big.sample_graph(), layers({64, 64}, m), placement);
      test::expect_same_minibatch(gpu.sampler.sample(some, 9),
                                  LayerSampler(big.sample_graph(), layers({64, 64}, m)).sample(some, 9));
    }
  }
  // Zero-degree seeds and an empty seed list.
  const OwnedGraph g = chain();
  const GpuLayer gpu_sampler_owner(g.sample_graph(), layers({2, 2}));
  const CudaLayerSampler& gpu_sampler = gpu_sampler_owner.sampler;
  const LayerSampler cpu_sampler(g.sample_graph(), layers({2, 2}));
  for (const std::vector<int64_t>& seeds : {std::vector<int64_t>{3, 2}, std::vector<int64_t>{}}) {
    test::expect_same_minibatch(gpu_sampler.sample(seeds, 1), cpu_sampler.sample(seeds, 1));
  }
}

TEST(LayerSampler, CudaRaceDrawsMatchCpuOnOwnStreams) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the CUDA race draws on non-default streams not checked";
  // Candidate counts at and around powers of two (the tree's padding), draws of 1, of all but one
  // and in between, for both methods, on two non-blocking streams sampled from two threads at once
  // (stream-ordered scratch freed on one stream and reused on the other).
  for (const int64_t nodes : {int64_t{4096}, int64_t{4097}, int64_t{300}}) {
    const OwnedGraph g = OwnedGraph::random(nodes, 6.0, static_cast<uint64_t>(nodes));
    for (const LayerMethod m : {LayerMethod::kLadies, LayerMethod::kFastGcn}) {
      for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{1, 33, 1000}, std::vector<int64_t>{nodes - 1, 2}}) {
        const LayerSamplerOptions o = layers(sizes, m, 21);
        const LayerSampler cpu_sampler(g.sample_graph(), o);
        const GpuLayer gpu_sampler_owner(g.sample_graph(), o);
        const CudaLayerSampler& gpu_sampler = gpu_sampler_owner.sampler;
        SCOPED_TRACE(::testing::Message() << "nodes " << nodes << " method " << static_cast<int>(m) << " sizes[0] "
                                          << sizes[0]);
        std::vector<MiniBatch> got(4);
        {
          const OwnedCudaStream a, b;
          std::thread other([&] {
            for (uint64_t stream = 0; stream < 2; ++stream) {
              got[stream] = gpu_sampler.sample(test::random_seeds(g.num_nodes(), 64, stream), stream, a.get());
            }
          });
          for (uint64_t stream = 2; stream < 4; ++stream) {
            got[stream] = gpu_sampler.sample(test::random_seeds(g.num_nodes(), 64, stream), stream, b.get());
          }
          other.join();
        }
        for (uint64_t stream = 0; stream < 4; ++stream) {
          SCOPED_TRACE(::testing::Message() << "batch " << stream << (stream < 2 ? " (other thread, stream a)"
                                                                                  : " (this thread, stream b)"));
          test::expect_same_minibatch(got[stream], cpu_sampler.sample(test::random_seeds(g.num_nodes(), 64, stream), stream));
        }
      }
    }
  }
}

TEST(LayerSampler, CudaEmptyLayersMatchCpuOnOwnStream) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: empty CUDA layers not checked";
  // Layer size 0 (no draws), no seeds, zero-degree seeds only (one candidate per dst node), and a
  // block whose src set adds nothing (the next layer's dst equals this one's).
  const OwnedGraph g = chain();
  const OwnedCudaStream own;
  for (const LayerMethod m : {LayerMethod::kLadies, LayerMethod::kFastGcn}) {
    for (const std::vector<int64_t>& sizes :
         {std::vector<int64_t>{0, 0}, std::vector<int64_t>{1, 0, 1}, std::vector<int64_t>{-1, -1}}) {
      const GpuLayer gpu_sampler_owner(g.sample_graph(), layers(sizes, m));
      const CudaLayerSampler& gpu_sampler = gpu_sampler_owner.sampler;
      const LayerSampler cpu_sampler(g.sample_graph(), layers(sizes, m));
      for (const std::vector<int64_t>& seeds :
           {std::vector<int64_t>{}, std::vector<int64_t>{3}, std::vector<int64_t>{3, 2}, std::vector<int64_t>{0}}) {
        for (uint64_t stream = 0; stream < 3; ++stream) {
          test::expect_same_minibatch(gpu_sampler.sample(seeds, stream, own.get()), cpu_sampler.sample(seeds, stream));
        }
      }
    }
  }
}

TEST(LayerSampler, CudaFastGcnArraysLargerThanTheFreeMemoryFailAtCreation) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the layer sampler's budget check not checked";
  const OwnedGraph g = OwnedGraph::random(1 << 20, 2.0, 23);
  const DeviceTopology topology(g.sample_graph(), {});  // made first: it fits
  // FastGCN's draw weights alone need this much (its race tree as much again, or more).
  const auto weights = static_cast<int64_t>(g.num_nodes() * sizeof(uint64_t));
  test::DeviceFill fill(weights);
  if (const std::string why = fill.unfilled(); !why.empty()) GTEST_SKIP() << why;
  const int64_t free_now = fill.free_bytes();
  try {
    const CudaLayerSampler sampler(topology, g.sample_graph(), layers({64, 64}, LayerMethod::kFastGcn));
    ADD_FAILURE() << "a FastGCN sampler was made with " << free_now << " bytes free";
  } catch (const OutOfMemory& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("CudaLayerSampler"), std::string::npos) << m;  // not an allocation failing half-way
    EXPECT_NE(m.find("free"), std::string::npos) << m;
  }
  // LADIES has no arrays of its own: made on the same full device.
  EXPECT_NO_THROW(CudaLayerSampler(topology, g.sample_graph(), layers({64, 64}, LayerMethod::kLadies)));
  fill.release();
  EXPECT_NO_THROW(CudaLayerSampler(topology, g.sample_graph(), layers({64, 64}, LayerMethod::kFastGcn)));
}

TEST(LayerSampler, CudaWaitsOncePerLayer) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the CUDA layer sampler's synchronisation budget not checked";
#if GRAPHTIER_WITH_CUDA
  // The budget of layer_sampler.hpp: one host wait per non-empty layer, with draws, with every
  // candidate and with none; none for an empty batch.
  const OwnedGraph g = OwnedGraph::random(3000, 8.0, 7);
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 128, 1);
  for (const LayerMethod m : {LayerMethod::kLadies, LayerMethod::kFastGcn}) {
    const GpuLayer gpu_sampler_owner(g.sample_graph(), layers({64, -1, 0}, m));
    const CudaLayerSampler& gpu_sampler = gpu_sampler_owner.sampler;
    const uint64_t before = cuda::layer_synchronisations();
    const MiniBatch b = gpu_sampler.sample(seeds, 3);
    EXPECT_EQ(cuda::layer_synchronisations() - before, 3u) << "method " << static_cast<int>(m);
    test::expect_same_minibatch(b, LayerSampler(g.sample_graph(), layers({64, -1, 0}, m)).sample(seeds, 3));
    const uint64_t empty_before = cuda::layer_synchronisations();
    gpu_sampler.sample({}, 3);
    EXPECT_EQ(cuda::layer_synchronisations() - empty_before, 0u);
  }
#endif
}

#if GRAPHTIER_WITH_CUDA
/// The device form's checks: to_host equals the CPU sampler's MiniBatch bit for bit (weights
/// included), one host wait per non-empty layer, every non-empty block's weights on the device,
/// and the sink called once with a bound of the last block's src nodes, which it then holds.
void expect_device_form(const CudaLayerSampler& gpu, const LayerSampler& cpu, std::span<const int64_t> seeds,
                        uint64_t stream, CudaStream cuda_stream) {
  Buffer input_nodes;  // page-locked: the sink's memory
  int calls = 0;
  int64_t bound = -1;
  const InputNodesSink sink = [&](int64_t b) {
    ++calls;
    bound = b;
    const auto bytes = static_cast<std::size_t>(std::max<int64_t>(b, 1)) * sizeof(int64_t);
    input_nodes = Buffer(MemoryKind::kPinned, bytes);
    return static_cast<int64_t*>(input_nodes.data());
  };
  const uint64_t before = cuda::layer_synchronisations();
  const DeviceMiniBatch d = gpu.sample_device(seeds, stream, cuda_stream, sink);
  const int64_t layers = static_cast<int64_t>(gpu.options().layer_sizes.size());
  const int64_t budget = seeds.empty() ? 0 : layers;
  EXPECT_EQ(d.host_syncs, budget);
  EXPECT_EQ(static_cast<int64_t>(cuda::layer_synchronisations() - before), budget);
  ASSERT_EQ(static_cast<int64_t>(d.blocks.size()), layers);
  const MiniBatch want = cpu.sample(seeds, stream);
  for (std::size_t l = 0; l < d.blocks.size(); ++l) {
    EXPECT_EQ(d.blocks[l].num_dst, want.blocks[l].num_dst) << "block " << l;
    EXPECT_EQ(d.blocks[l].num_src, want.blocks[l].num_src()) << "block " << l;
    EXPECT_EQ(d.blocks[l].num_edges, want.blocks[l].num_edges()) << "block " << l;
    EXPECT_EQ(d.blocks[l].weights != nullptr, d.blocks[l].num_dst > 0) << "block " << l;
    EXPECT_EQ(d.blocks[l].edge_ids, nullptr) << "block " << l;
  }
  test::expect_same_minibatch(d.to_host(), want);
  ASSERT_EQ(calls, 1);  // options have at least one layer
  const std::vector<int64_t>& last = want.blocks.back().src_nodes;
  ASSERT_GE(bound, static_cast<int64_t>(last.size()));
  const auto* ids = static_cast<const int64_t*>(input_nodes.data());
  EXPECT_EQ(std::vector<int64_t>(ids, ids + last.size()), last) << "input nodes written to the sink";
}
#endif

TEST(LayerSampler, CudaDeviceFormMatchesCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the CUDA layer sampler's device form not checked";
#if GRAPHTIER_WITH_CUDA
  const OwnedCudaStream own;
  for (const LayerMethod m : {LayerMethod::kLadies, LayerMethod::kFastGcn}) {
    for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{8, 8, 8}, std::vector<int64_t>{256, 1, -1},
                                              std::vector<int64_t>{0, 2000}, std::vector<int64_t>{64, -1, 0}}) {
      const OwnedGraph g = OwnedGraph::random(5000, 8.0, 2);
      const LayerSamplerOptions o = layers(sizes, m, 2);
      const LayerSampler cpu_sampler(g.sample_graph(), o);
      const GpuLayer gpu_sampler_owner(g.sample_graph(), o);
      const CudaLayerSampler& gpu_sampler = gpu_sampler_owner.sampler;
      for (uint64_t stream = 0; stream < 3; ++stream) {
        SCOPED_TRACE(::testing::Message() << "method " << static_cast<int>(m) << " sizes[0] " << sizes[0] << " stream "
                                          << stream);
        const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 300, stream);
        expect_device_form(gpu_sampler, cpu_sampler, seeds, stream, stream % 2 ? own.get() : CudaStream{});
      }
    }
  }
  // int64 indices, zero-degree seeds, blocks that add no node, and no seeds at all.
  const OwnedGraph big = OwnedGraph::random(2000, 6.0, 3);
  std::vector<int64_t> wide;
  const SampleGraph wide_graph = wide_view(big, wide);
  const OwnedGraph g = chain();
  for (const LayerMethod m : {LayerMethod::kLadies, LayerMethod::kFastGcn}) {
    SCOPED_TRACE(::testing::Message() << "method " << static_cast<int>(m));
    expect_device_form(GpuLayer(wide_graph, layers({64, 64}, m)).sampler,
                       LayerSampler(big.sample_graph(), layers({64, 64}, m)),
                       test::random_seeds(big.num_nodes(), 100, 3), 9, own.get());
    for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{0, 0}, std::vector<int64_t>{1, 0, 1}}) {
      const GpuLayer gpu_sampler_owner(g.sample_graph(), layers(sizes, m));
      const CudaLayerSampler& gpu_sampler = gpu_sampler_owner.sampler;
      const LayerSampler cpu_sampler(g.sample_graph(), layers(sizes, m));
      for (const std::vector<int64_t>& seeds :
           {std::vector<int64_t>{}, std::vector<int64_t>{3}, std::vector<int64_t>{3, 2}, std::vector<int64_t>{0}}) {
        expect_device_form(gpu_sampler, cpu_sampler, seeds, 1, own.get());
      }
    }
  }
#endif
}

TEST(LayerSampler, CudaDeviceFormIsReadableFromAnotherStream) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the device form read from another stream not checked";
  // Complete when sample_device returns: another stream's copy (to_host on it) needs no event.
  const OwnedGraph g = OwnedGraph::random(4000, 8.0, 5);
  const LayerSamplerOptions o = layers({128, 128}, LayerMethod::kLadies, 5);
  const GpuLayer gpu_sampler_owner(g.sample_graph(), o);
  const CudaLayerSampler& gpu_sampler = gpu_sampler_owner.sampler;
  const OwnedCudaStream sampling, reading;
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 512, 4);
  DeviceMiniBatch d = gpu_sampler.sample_device(seeds, 4, sampling.get());
  d.stream = reading.get();  // to_host copies on `reading`; the arrays are still freed on `sampling`
  test::expect_same_minibatch(d.to_host(), LayerSampler(g.sample_graph(), o).sample(seeds, 4));
}

/// About 10^6 nodes; node 0's in-neighbours are nodes 1..10^6 (a row longer than 256^2: three
/// levels of the device's row sums when a layer keeps all of it), the others have two each.
OwnedGraph layer_hub_graph() {
  constexpr int64_t kNodes = 1'000'100;
  constexpr int64_t kHubDegree = 1'000'000;
  std::vector<std::pair<int64_t, int64_t>> edges;
  edges.reserve(static_cast<std::size_t>(kHubDegree + 2 * kNodes));
  for (int64_t u = 1; u <= kHubDegree; ++u) edges.emplace_back(u, 0);
  for (int64_t v = 1; v < kNodes; ++v) {
    for (uint64_t k = 0; k < 2; ++k) {
      edges.emplace_back(static_cast<int64_t>(bounded_u64(mix64(2 * static_cast<uint64_t>(v) + k), kNodes)), v);
    }
  }
  return OwnedGraph::from_edges(kNodes, edges);
}

TEST(LayerSampler, CudaHubRowsMatchCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the CUDA layer sampler on a hub of degree 10^6 not checked";
  // A dst row of 10^6 + 1 nonzeros, spread over the device by the per-nonzero kernels, and kept
  // whole by the layers of size -1 (row sums over three levels; in the device form the second
  // layer's bounds come from the device). FastGCN draws 1 and 2000 of ~10^6 nodes by several stages
  // (plans 12 -> 20 and 13 -> 16 -> 19 -> 20). Both forms, bit for bit against the CPU sampler.
  const OwnedGraph g = layer_hub_graph();
  const std::vector<int64_t> seeds = {0, 5, 777, 123456};
  for (const LayerMethod m : {LayerMethod::kLadies, LayerMethod::kFastGcn}) {
    const std::vector<int64_t> sizes =
        m == LayerMethod::kLadies ? std::vector<int64_t>{2000, -1} : std::vector<int64_t>{1, 2000, -1};
    const LayerSamplerOptions o = layers(sizes, m, 3);
    const LayerSampler cpu_sampler(g.sample_graph(), o);
    const GpuLayer gpu_sampler_owner(g.sample_graph(), o);
    const CudaLayerSampler& gpu_sampler = gpu_sampler_owner.sampler;
    SCOPED_TRACE(::testing::Message() << "method " << static_cast<int>(m));
    const MiniBatch want = cpu_sampler.sample(seeds, 1);
    ASSERT_GT(want.blocks.back().indptr[1], 1'000'000) << "the hub's row is kept whole in the last layer";
    test::expect_same_minibatch(gpu_sampler.sample(seeds, 1), want);
#if GRAPHTIER_WITH_CUDA
    expect_device_form(gpu_sampler, cpu_sampler, seeds, 1, CudaStream{});
#endif
  }
}

TEST(LayerSampler, CudaSamplerIsUnsupportedWithoutCuda) {
  if (cuda_available()) GTEST_SKIP() << "CUDA device present: the Unsupported path is not exercised";
  const OwnedGraph g = chain();
  EXPECT_THROW(GpuLayer(g.sample_graph(), layers({1})), Unsupported);
}

}  // namespace
}  // namespace graphtier::sample
