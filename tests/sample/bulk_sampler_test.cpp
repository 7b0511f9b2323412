// Bulk sampler: golden cases on tiny graphs, a naive reference of the specification
// (bulk_sampler.hpp) on random graphs, the MiniBatch properties both samplers promise, k-invariance,
// and CPU/CUDA identity where a GPU is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/sample/bulk_sampler.hpp"
#include "graphtier/sample/layer_sampler.hpp"
#include "graphtier/sample/random.hpp"
#include "bulk_compact.hpp"
#include "bulk_matrices.hpp"
#include "bulk_row_ops.hpp"
#include "cpu/compact_cpu.hpp"
#include "layer_sampler_test_util.hpp"
#include "cpu/bulk_sampler_cpu.hpp"
#include "sample_test_util.hpp"
#if GRAPHTIER_WITH_CUDA
#include "cuda/bulk_sampler_cuda.hpp"
#endif

namespace graphtier::sample {
namespace {

using test::OwnedGraph;
using test::NaiveBlockBuilder;

// 0 <- 1, 2, 3;  1 <- 0, 4;  2 <- 4;  3 <- (none);  4 <- 0
OwnedGraph tiny() { return OwnedGraph::from_edges(5, {{1, 0}, {2, 0}, {3, 0}, {0, 1}, {4, 1}, {4, 2}, {0, 4}}); }

BulkSamplerOptions sage(std::vector<int64_t> fanouts, bool replace = false) {
  BulkSamplerOptions o;
  o.fanouts = std::move(fanouts);
  o.replace = replace;
  o.seed = 7;
  return o;
}

BulkSamplerOptions ladies(std::vector<int64_t> sizes) {
  BulkSamplerOptions o = sage(std::move(sizes));
  o.algorithm = BulkAlgorithm::kLadies;
  return o;
}

std::vector<MiniBatch> run(const BulkSampler& s, const std::vector<std::vector<int64_t>>& seeds, uint64_t stream,
                           ThreadPool* pool = nullptr) {
  std::vector<std::span<const int64_t>> spans(seeds.begin(), seeds.end());
  return s.sample(spans, stream, pool);
}

// ---- Naive reference of the specification -------------------------------------------------

struct Entry {
  int64_t node;
  double weight;
};

/// Step 2, the obvious way: std::set for the chosen entries, linear scans for the searches.
std::vector<int64_t> reference_draw(const std::vector<Entry>& row, int64_t budget, bool replace, uint64_t seed,
                                    uint64_t ls, int64_t key) {
  const auto n = static_cast<int64_t>(row.size());
  std::vector<int64_t> out;
  if (n == 0 || budget == 0) return out;
  if (budget < 0 || (!replace && budget >= n)) {
    for (int64_t k = 0; k < n; ++k) out.push_back(k);
    return out;
  }
  const auto pick = [&](const std::set<int64_t>& excluded, uint64_t stream, int64_t j) {
    double total = 0;
    for (int64_t k = 0; k < n; ++k) total += excluded.count(k) ? 0 : row[k].weight;
    const double target = u64_to_unit_double(node_bits(seed, stream, key, j)) * total;
    double cum = 0;
    int64_t last = -1;
    for (int64_t k = 0; k < n; ++k) {
      if (excluded.count(k)) continue;
      cum += row[k].weight;
      last = k;
      if (cum > target) return k;
    }
    return last;
  };
  if (replace) {
    for (int64_t j = 0; j < budget; ++j) out.push_back(pick({}, ls, j));
    return out;
  }
  std::set<int64_t> chosen;
  for (int64_t r = 0; static_cast<int64_t>(chosen.size()) < budget; ++r) {
    const std::set<int64_t> before = chosen;
    const int64_t need = budget - static_cast<int64_t>(chosen.size());
    for (int64_t j = 0; j < need; ++j) chosen.insert(pick(before, round_stream(ls, r), j));
  }
  return {chosen.begin(), chosen.end()};
}

/// Row v of A: distinct in-neighbours ascending, multiplicity, first CSC position.
std::map<int64_t, std::pair<double, int64_t>> a_row(const OwnedGraph& g, int64_t v) {
  std::map<int64_t, std::pair<double, int64_t>> row;
  for (int64_t p = g.indptr[v]; p < g.indptr[v + 1]; ++p) {
    auto [it, fresh] = row.try_emplace(g.indices[p], 0.0, p);
    it->second.first += 1;
  }
  return row;
}

/// Row v of A + I: a_row with one more on the diagonal (no CSC position: -1 when A has none).
std::map<int64_t, std::pair<double, int64_t>> a_plus_i_row(const OwnedGraph& g, int64_t v) {
  auto row = a_row(g, v);
  row.try_emplace(v, 0.0, -1).first->second.first += 1;
  return row;
}

double on_grid_square(double x) {
  return std::max(std::nearbyint(x * x / kBulkProbabilityUnit), 1.0) * kBulkProbabilityUnit;
}

struct RefEdge {
  int64_t node, edge_id;
  float weight;
};

MiniBatch reference_bulk(const OwnedGraph& g, const std::vector<int64_t>& seeds, const BulkSamplerOptions& o,
                         uint64_t stream) {
  MiniBatch batch;
  batch.seeds = seeds;
  std::vector<int64_t> dst = seeds;
  for (std::size_t l = 0; l < o.fanouts.size(); ++l) {
    const uint64_t ls = layer_stream(stream, static_cast<int>(l));
    std::vector<std::vector<RefEdge>> edges(dst.size());
    if (o.algorithm == BulkAlgorithm::kGraphSage) {
      for (std::size_t i = 0; i < dst.size(); ++i) {
        const auto row = a_row(g, dst[i]);
        std::vector<Entry> entries;
        std::vector<int64_t> firsts;
        for (const auto& [u, mp] : row) {
          entries.push_back({u, mp.first});
          firsts.push_back(mp.second);
        }
        for (int64_t k : reference_draw(entries, o.fanouts[l], o.replace, o.seed, ls, dst[i])) {
          edges[i].push_back({entries[k].node, firsts[k], 0});
        }
      }
    } else {
      std::map<int64_t, double> p;
      for (int64_t v : dst) {
        const double deg = static_cast<double>(g.indptr[v + 1] - g.indptr[v]);
        for (const auto& [u, mp] : a_plus_i_row(g, v)) p[u] += on_grid_square(mp.first / (deg + 1));
      }
      std::vector<Entry> entries;
      for (const auto& [u, w] : p) entries.push_back({u, w});
      std::set<int64_t> kept(dst.begin(), dst.end());
      for (int64_t k : reference_draw(entries, o.fanouts[l], false, o.seed, ls, 0)) kept.insert(entries[k].node);
      for (std::size_t i = 0; i < dst.size(); ++i) {
        // R * (A + I) * C_b: the dst node itself is in C_b, so every row keeps its self-loop.
        std::vector<double> terms;
        for (const auto& [u, mp] : a_plus_i_row(g, dst[i])) {
          if (kept.count(u)) terms.push_back(mp.first / p.at(u));
        }
        const double sum = test::tree_sum(terms);
        for (const auto& [u, mp] : a_plus_i_row(g, dst[i])) {
          if (kept.count(u)) edges[i].push_back({u, mp.second, static_cast<float>(mp.first / p.at(u) / sum)});
        }
      }
    }
    NaiveBlockBuilder b(dst);
    for (const auto& row : edges) {
      for (const RefEdge& e : row) {
        b.add(e.node);
        // LADIES blocks carry no edge ids whatever the options say (their self-loops are not edges).
        if (o.edge_ids && o.algorithm == BulkAlgorithm::kGraphSage) b.block().edge_ids.push_back(e.edge_id);
        if (o.algorithm == BulkAlgorithm::kLadies) b.block().weights.push_back(e.weight);
      }
      b.end_row();
    }
    dst = b.block().src_nodes;
    batch.blocks.push_back(std::move(b.block()));
  }
  return batch;
}

// ---- Golden cases ----------------------------------------------------------------------------

TEST(BulkSampler, GoldenFullNeighbourhoodMatchesNeighborSampler) {
  const OwnedGraph g = tiny();
  const BulkSampler bulk(g.sample_graph(), sage({-1, -1}));
  const std::vector<MiniBatch> b = run(bulk, {{2, 0}}, 0);
  ASSERT_EQ(b.size(), 1u);
  // Same as NeighborSampler's golden case: tiny() has no parallel edges and lists neighbours in
  // ascending order, so "every entry of A's row" is "every edge".
  EXPECT_EQ(b[0].blocks[0].src_nodes, (std::vector<int64_t>{2, 0, 4, 1, 3}));
  EXPECT_EQ(b[0].blocks[0].indptr, (std::vector<int64_t>{0, 1, 4}));
  EXPECT_EQ(b[0].blocks[0].indices, (std::vector<int64_t>{2, 3, 0, 4}));
  EXPECT_EQ(b[0].blocks[0].edge_ids, (std::vector<int64_t>{5, 0, 1, 2}));
  EXPECT_EQ(b[0].blocks[1].indptr, (std::vector<int64_t>{0, 1, 4, 5, 7, 7}));
  EXPECT_EQ(b[0].blocks[1].indices, (std::vector<int64_t>{2, 3, 0, 4, 1, 1, 2}));
  EXPECT_TRUE(b[0].blocks[0].weights.empty());
  check_minibatch(b[0], g.num_nodes(), g.num_edges());
}

TEST(BulkSampler, GoldenParallelEdgesMergeAndKeepTheFirstPosition) {
  // 0 <- 2, 1, 2 (positions 0, 1, 2): A[0, 1] = 1 (position 1), A[0, 2] = 2 (position 0).
  const OwnedGraph g = OwnedGraph::from_edges(3, {{2, 0}, {1, 0}, {2, 0}});
  const std::vector<MiniBatch> all = run(BulkSampler(g.sample_graph(), sage({-1})), {{0}}, 0);
  EXPECT_EQ(all[0].blocks[0].src_nodes, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(all[0].blocks[0].edge_ids, (std::vector<int64_t>{1, 0}));
  // One draw: u * 3 against the prefix sums {1, 3}: node 1 when u * 3 < 1, else node 2.
  const BulkSamplerOptions o = sage({1});
  for (uint64_t stream = 0; stream < 20; ++stream) {
    const std::vector<MiniBatch> one = run(BulkSampler(g.sample_graph(), o), {{0}}, stream);
    const double u = u64_to_unit_double(node_bits(o.seed, layer_stream(stream, 0), 0, 0));
    ASSERT_EQ(one[0].blocks[0].num_edges(), 1);
    EXPECT_EQ(one[0].blocks[0].src_nodes[1], u * 3 < 1 ? 1 : 2) << stream;
  }
}

TEST(BulkSampler, GoldenLadiesByHand) {
  // Seeds {0}: deg(0) = 3, Ahat row 0 = 1/4 at columns 0, 1, 2, 3, so p is uniform over {0, 1, 2, 3}
  // (each (1/4)^2 = 2^-4, exactly on the grid). Size 3 keeps 3 of the 4; row 0 holds its kept
  // in-neighbours and its self-loop (0 is a dst node, so always kept), each of weight
  // (1 / p) / sum = 1 / (number of entries).
  const OwnedGraph g = tiny();
  const BulkSamplerOptions o = ladies({3});
  for (uint64_t stream = 0; stream < 8; ++stream) {
    const std::vector<MiniBatch> b = run(BulkSampler(g.sample_graph(), o), {{0}}, stream);
    const Block& block = b[0].blocks[0];
    const int64_t entries = block.num_edges();
    EXPECT_GE(entries, 3);  // at most one of the three picks can be node 0 itself
    EXPECT_LE(entries, 4);
    EXPECT_EQ(block.num_src(), entries);  // the kept neighbours, and 0 itself
    EXPECT_EQ(block.indices[0], 0);       // the self-loop first: column 0 is the lowest
    for (float w : block.weights) EXPECT_FLOAT_EQ(w, 1.0f / static_cast<float>(entries));
    EXPECT_TRUE(block.edge_ids.empty());  // o.edge_ids is set, but a self-loop is not an edge
    test::expect_same_minibatch(b[0], reference_bulk(g, {0}, o, stream));
  }
  // Size >= candidates keeps the whole aggregated neighbourhood: every entry of A + I in the
  // seeds' rows. P[u] = sum over the seeds v of Ahat[v, u]^2: deg(0) = 3 and deg(1) = 2 give
  // 1/16 + 1/9 at 0 and 1, 1/16 at 2 and 3, 1/9 at 4 (1/9 rounded to the 2^-36 grid). Row 0 =
  // {0, 1, 2, 3} weighs 1/P normalised, row 1 = {0, 1, 4} too.
  const std::vector<MiniBatch> full = run(BulkSampler(g.sample_graph(), ladies({10})), {{0, 1}}, 0);
  const Block& f = full[0].blocks[0];
  EXPECT_EQ(f.indptr, (std::vector<int64_t>{0, 4, 7}));
  EXPECT_EQ(f.src_nodes, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(f.indices, (std::vector<int64_t>{0, 1, 2, 3, 0, 1, 4}));
  const double both = 1.0 / (1.0 / 16 + 1.0 / 9);
  const double row0 = 2 * both + 2 * 16.0, row1 = 2 * both + 9.0;
  const std::vector<double> want{both / row0, both / row0, 16 / row0, 16 / row0, both / row1, both / row1, 9 / row1};
  ASSERT_EQ(f.weights.size(), want.size());
  for (std::size_t e = 0; e < want.size(); ++e) EXPECT_NEAR(f.weights[e], want[e], 1e-6) << e;
}

TEST(BulkSampler, ZeroDegreeSeedsAndFanoutZero) {
  const OwnedGraph g = tiny();
  const std::vector<MiniBatch> none = run(BulkSampler(g.sample_graph(), sage({0, 5})), {{3, 2}}, 0);
  EXPECT_EQ(none[0].blocks[0].indptr, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(none[0].blocks[1].src_nodes, (std::vector<int64_t>{3, 2, 4}));
  EXPECT_EQ(none[0].blocks[1].indptr, (std::vector<int64_t>{0, 0, 1}));
  const std::vector<MiniBatch> rep = run(BulkSampler(g.sample_graph(), sage({4}, true)), {{3, 2}}, 0);
  EXPECT_EQ(rep[0].blocks[0].indptr, (std::vector<int64_t>{0, 0, 4}));
  EXPECT_EQ(rep[0].blocks[0].indices, (std::vector<int64_t>{2, 2, 2, 2}));
  // LADIES: a zero-degree seed keeps its self-loop only; size 0 keeps only the entries of A + I
  // among the dst nodes.
  const std::vector<MiniBatch> lz = run(BulkSampler(g.sample_graph(), ladies({0})), {{3, 0}}, 0);
  EXPECT_EQ(lz[0].blocks[0].indptr, (std::vector<int64_t>{0, 1, 3}));  // 3 <- 3; 0 <- 0, 3
  EXPECT_EQ(lz[0].blocks[0].indices, (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(lz[0].blocks[0].src_nodes, (std::vector<int64_t>{3, 0}));
  // An empty batch next to a full one.
  const std::vector<MiniBatch> empty = run(BulkSampler(g.sample_graph(), sage({2})), {{}, {0}}, 0);
  EXPECT_EQ(empty[0].blocks[0].indptr, (std::vector<int64_t>{0}));
  EXPECT_EQ(empty[1].blocks[0].num_edges(), 2);
}

TEST(BulkSampler, RejectsBadSeedsAndOptions) {
  const OwnedGraph g = tiny();
  const BulkSampler s(g.sample_graph(), sage({2}));
  EXPECT_THROW(run(s, {{0}, {0, 5}}, 0), OutOfRange);
  EXPECT_THROW(run(s, {{1, 2, 1}}, 0), InvalidArgument);
  EXPECT_THROW(BulkSampler(g.sample_graph(), sage({})), InvalidArgument);
  EXPECT_THROW(BulkSampler(g.sample_graph(), sage({-2})), InvalidArgument);
  EXPECT_THROW(BulkSampler(g.sample_graph(), ladies({-1})), InvalidArgument);
  BulkSamplerOptions lr = ladies({2});
  lr.replace = true;
  EXPECT_THROW(BulkSampler(g.sample_graph(), lr), InvalidArgument);
  OwnedGraph weighted = tiny();
  weighted.weights.assign(7, 1.0f);
  EXPECT_THROW(BulkSampler(weighted.sample_graph(), sage({2})), InvalidArgument);
}

// ---- Random graphs ---------------------------------------------------------------------------

std::vector<std::vector<int64_t>> batches_of(const OwnedGraph& g, int64_t k, int64_t size, uint64_t seed) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t b = 0; b < k; ++b) out.push_back(test::random_seeds(g.num_nodes(), size, seed + static_cast<uint64_t>(b)));
  return out;
}

/// What both bulk modes promise on top of check_minibatch.
void check_properties(const OwnedGraph& g, const MiniBatch& mb, const BulkSamplerOptions& o) {
  check_minibatch(mb, g.num_nodes(), g.num_edges());
  for (std::size_t l = 0; l < mb.blocks.size(); ++l) {
    const Block& b = mb.blocks[l];
    const int64_t f = o.fanouts[l];
    std::set<int64_t> sampled;  // LADIES: the non-dst nodes the layer reaches
    for (int64_t i = 0; i < b.num_dst; ++i) {
      const int64_t v = b.src_nodes[i];
      const auto row = a_row(g, v);
      std::set<int64_t> seen;
      double weight_sum = 0;
      for (int64_t e = b.indptr[i]; e < b.indptr[i + 1]; ++e) {
        const int64_t u = b.src_nodes[b.indices[e]];
        if (o.algorithm == BulkAlgorithm::kGraphSage) {
          const int64_t p = b.edge_ids[e];
          ASSERT_TRUE(p >= g.indptr[v] && p < g.indptr[v + 1]) << "edge id outside dst " << v << "'s edges";
          ASSERT_EQ(g.indices[p], u) << "edge id does not point at the sampled neighbour";
          ASSERT_EQ(row.at(u).second, p) << "edge id is not the entry's first position";
        }
        if (!o.replace) {
          ASSERT_TRUE(seen.insert(u).second) << "neighbour " << u << " of " << v << " twice";
        }
        if (b.indices[e] >= b.num_dst) sampled.insert(u);
        if (!b.weights.empty()) weight_sum += b.weights[e];
      }
      const int64_t got = b.indptr[i + 1] - b.indptr[i], distinct = static_cast<int64_t>(row.size());
      if (o.algorithm == BulkAlgorithm::kGraphSage) {
        const int64_t want = f < 0 ? distinct : distinct == 0 ? 0 : o.replace ? f : std::min(f, distinct);
        ASSERT_EQ(got, want) << "dst " << v << " in block " << l;
      } else {
        ASSERT_NEAR(weight_sum, 1.0, 1e-5);  // never empty: the self-loop at least
      }
    }
    if (o.algorithm == BulkAlgorithm::kLadies) {
      ASSERT_LE(static_cast<int64_t>(sampled.size()), f) << "LADIES layer " << l << " reached too many nodes";
      ASSERT_EQ(b.weights.size(), b.indices.size());
      ASSERT_TRUE(b.edge_ids.empty()) << "LADIES blocks hold self-loops, which have no edge id";
      // Every kept entry between the layer's nodes is present: R * (A + I) * C_b drops nothing,
      // and every dst row has its self-loop.
      const std::set<int64_t> columns(b.src_nodes.begin(), b.src_nodes.end());
      for (int64_t i = 0; i < b.num_dst; ++i) {
        int64_t expected = 0;
        for (const auto& [u, mp] : a_plus_i_row(g, b.src_nodes[i])) expected += columns.count(u);
        ASSERT_EQ(b.indptr[i + 1] - b.indptr[i], expected);
        ASSERT_TRUE(std::count(b.indices.begin() + b.indptr[i], b.indices.begin() + b.indptr[i + 1], i) == 1)
            << "dst " << b.src_nodes[i] << " of block " << l << " has no self-loop";
      }
    }
  }
}

struct Config {
  BulkAlgorithm algorithm;
  bool replace;
};

class BulkSamplerProperties : public ::testing::TestWithParam<Config> {};

TEST_P(BulkSamplerProperties, MatchReferenceAndContract) {
  const Config c = GetParam();
  const OwnedGraph g = OwnedGraph::random(2000, 10, 3);  // heavy-tailed, with parallel edges
  const BulkSamplerOptions o = c.algorithm == BulkAlgorithm::kLadies ? ladies({40, 80}) : sage({15, 10, 5}, c.replace);
  const BulkSampler s(g.sample_graph(), o);
  auto seeds = batches_of(g, 6, 50, 17);
  seeds[1].clear();  // an empty batch among full ones
  ThreadPool pool(3);
  const std::vector<MiniBatch> got = run(s, seeds, 100, &pool);
  ASSERT_EQ(got.size(), seeds.size());
  for (std::size_t b = 0; b < seeds.size(); ++b) {
    SCOPED_TRACE(b);
    check_properties(g, got[b], o);
    test::expect_same_minibatch(got[b], reference_bulk(g, seeds[b], o, 100 + b));
  }
}

TEST_P(BulkSamplerProperties, OneBatchAtATimeEqualsEightInBulk) {
  const Config c = GetParam();
  const OwnedGraph g = OwnedGraph::random(5000, 12, 8);
  const BulkSamplerOptions o = c.algorithm == BulkAlgorithm::kLadies ? ladies({64, 64}) : sage({10, 5, -1}, c.replace);
  const BulkSampler s(g.sample_graph(), o);
  const auto seeds = batches_of(g, 8, 64, 2);
  ThreadPool pool(2);
  const std::vector<MiniBatch> bulk = run(s, seeds, 40, &pool);
  for (std::size_t b = 0; b < seeds.size(); ++b) {
    SCOPED_TRACE(b);
    const std::vector<MiniBatch> alone = run(s, {seeds[b]}, 40 + b);
    test::expect_same_minibatch(bulk[b], alone[0]);
  }
}

TEST_P(BulkSamplerProperties, PerBatchStreamsEqualEachBatchAlone) {
  const Config c = GetParam();
  const OwnedGraph g = OwnedGraph::random(3000, 10, 5);
  const BulkSamplerOptions o = c.algorithm == BulkAlgorithm::kLadies ? ladies({48, 48}) : sage({8, 4}, c.replace);
  const BulkSampler s(g.sample_graph(), o);
  const auto seeds = batches_of(g, 4, 40, 9);
  const std::vector<std::span<const int64_t>> spans(seeds.begin(), seeds.end());
  // Not consecutive (every third batch of an epoch, say), one repeated.
  const std::vector<uint64_t> streams{(uint64_t{2} << 32) | 1, (uint64_t{2} << 32) | 4, 7, 7};
  ThreadPool pool(2);
  const std::vector<MiniBatch> bulk = s.sample(spans, streams, &pool);
  ASSERT_EQ(bulk.size(), seeds.size());
  for (std::size_t b = 0; b < seeds.size(); ++b) {
    SCOPED_TRACE(b);
    test::expect_same_minibatch(bulk[b], run(s, {seeds[b]}, streams[b])[0]);
  }
  const std::vector<uint64_t> consecutive{50, 51, 52, 53};
  const std::vector<MiniBatch> first_stream = run(s, seeds, 50, &pool);
  const std::vector<MiniBatch> listed = s.sample(spans, consecutive, &pool);
  for (std::size_t b = 0; b < seeds.size(); ++b) test::expect_same_minibatch(first_stream[b], listed[b]);
  EXPECT_THROW(s.sample(spans, std::span<const uint64_t>(streams).first(3)), InvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Modes, BulkSamplerProperties,
                         ::testing::Values(Config{BulkAlgorithm::kGraphSage, false}, Config{BulkAlgorithm::kGraphSage, true},
                                           Config{BulkAlgorithm::kLadies, false}),
                         [](const auto& info) {
                           return std::string(info.param.algorithm == BulkAlgorithm::kLadies ? "Ladies" : "GraphSage") +
                                  (info.param.replace ? "Replace" : "Distinct");
                         });

TEST(BulkSampler, WithReplacementFollowsMultiplicity) {
  // 0 <- 1 (x1), 2 (x3): with replacement, node 2 comes up 3/4 of the time.
  const OwnedGraph g = OwnedGraph::from_edges(3, {{1, 0}, {2, 0}, {2, 0}, {2, 0}});
  const BulkSampler s(g.sample_graph(), sage({1000}, true));
  const std::vector<MiniBatch> b = run(s, {{0}}, 9);
  const auto& src = b[0].blocks[0].src_nodes;
  int64_t twos = 0;
  for (int64_t local : b[0].blocks[0].indices) twos += src[local] == 2;
  EXPECT_NEAR(static_cast<double>(twos) / 1000, 0.75, 0.05);  // 4.6 standard deviations
}

TEST(BulkSampler, SameAsNeighborSamplerPropertiesOnSimpleGraph) {
  // Without parallel edges, min(fanout, distinct) is min(fanout, degree): the count NeighborSampler
  // keeps. Both samplers must then agree on counts, chaining and edge validity.
  const OwnedGraph multi = OwnedGraph::random(3000, 8, 21);
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t v = 0; v < multi.num_nodes(); ++v) {
    for (const auto& [u, mp] : a_row(multi, v)) edges.emplace_back(u, v);
  }
  const OwnedGraph g = OwnedGraph::from_edges(multi.num_nodes(), edges);
  NeighborSamplerOptions no;
  no.fanouts = {15, 10, 5};
  const NeighborSampler one(g.sample_graph(), no);
  const BulkSampler bulk(g.sample_graph(), sage({15, 10, 5}));
  const auto seeds = batches_of(g, 4, 100, 5);
  const std::vector<MiniBatch> bs = run(bulk, seeds, 0);
  for (std::size_t b = 0; b < seeds.size(); ++b) {
    const MiniBatch ob = one.sample(seeds[b], b);
    for (const MiniBatch* mb : {&ob, &bs[b]}) {
      check_properties(g, *mb, sage({15, 10, 5}));
      const Block& b0 = mb->blocks[0];
      for (int64_t i = 0; i < b0.num_dst; ++i) {
        const int64_t v = b0.src_nodes[i];
        EXPECT_EQ(b0.indptr[i + 1] - b0.indptr[i], std::min<int64_t>(15, g.indptr[v + 1] - g.indptr[v]));
      }
    }
  }
}

TEST(BulkSampler, LadiesBlocksAreLayerSamplerBlocksWhenEveryCandidateIsKept) {
  // With every candidate kept, both LADIES samplers cut the same block from A + I: the same
  // (dst, src) entries, self-loops included, with the same weights up to the rounding of their
  // probabilities (LayerSampler's fixed point, the bulk sampler's 2^-36 grid). On a simple graph
  // without stored self-loops, where the two definitions of A + I agree (LayerSampler does not
  // merge parallel edges), only the order of the entries and of the new src nodes may differ.
  const OwnedGraph multi = OwnedGraph::random(3000, 8, 23);
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t v = 0; v < multi.num_nodes(); ++v) {
    for (const auto& [u, mp] : a_row(multi, v)) {
      if (u != v) edges.emplace_back(u, v);
    }
  }
  const OwnedGraph g = OwnedGraph::from_edges(multi.num_nodes(), edges);
  LayerSamplerOptions lo;
  lo.layer_sizes = {-1, -1};
  lo.seed = 7;
  const LayerSampler one(g.sample_graph(), lo);
  const BulkSampler bulk(g.sample_graph(), ladies({1 << 20, 1 << 20}));
  const auto seeds = batches_of(g, 3, 40, 5);
  const std::vector<MiniBatch> got = run(bulk, seeds, 11);
  for (std::size_t b = 0; b < seeds.size(); ++b) {
    const MiniBatch want = one.sample(seeds[b], 11 + b);
    ASSERT_EQ(got[b].blocks.size(), want.blocks.size());
    for (std::size_t l = 0; l < want.blocks.size(); ++l) {
      SCOPED_TRACE(testing::Message() << "batch " << b << " block " << l);
      const auto entries = [](const Block& k) {
        std::map<std::pair<int64_t, int64_t>, float> m;
        for (int64_t i = 0; i < k.num_dst; ++i) {
          for (int64_t e = k.indptr[i]; e < k.indptr[i + 1]; ++e) {
            m[{k.src_nodes[i], k.src_nodes[k.indices[e]]}] = k.weights[e];
          }
        }
        return m;
      };
      const auto x = entries(got[b].blocks[l]), y = entries(want.blocks[l]);
      ASSERT_EQ(x.size(), y.size());
      ASSERT_EQ(x.size(), static_cast<std::size_t>(want.blocks[l].num_edges()));
      for (const auto& [key, w] : y) {
        const auto it = x.find(key);
        ASSERT_NE(it, x.end()) << key.first << " <- " << key.second << " missing from the bulk block";
        EXPECT_NEAR(it->second, w, 1e-6) << key.first << " <- " << key.second;
      }
      EXPECT_EQ(std::set<int64_t>(got[b].blocks[l].src_nodes.begin(), got[b].blocks[l].src_nodes.end()),
                std::set<int64_t>(want.blocks[l].src_nodes.begin(), want.blocks[l].src_nodes.end()));
    }
  }
}

TEST(BulkSampler, UnitDrawsPickWhatTheRowScanPicks) {
  // The host GraphSAGE path draws through the unit expansion (cpu::sample_row_units); the CUDA
  // backend and the specification scan the row (bulk::sample_row). Both must agree entry for entry.
  std::mt19937_64 rng(11);
  int64_t multi_round_rows = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    SCOPED_TRACE(trial);
    const int64_t n = trial % 100 == 0 ? 20000 : 1 + static_cast<int64_t>(rng() % 200);
    const bool unit = trial % 3 == 0;
    std::vector<double> w(static_cast<std::size_t>(n));
    std::vector<int64_t> cumulative(static_cast<std::size_t>(n));
    std::vector<int32_t> unit_entry;
    int64_t sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t wk = unit ? 1 : rng() % 8 == 0 ? 1 + static_cast<int64_t>(rng() % 300) : 1 + static_cast<int64_t>(rng() % 3);
      w[k] = static_cast<double>(wk);
      unit_entry.insert(unit_entry.end(), static_cast<std::size_t>(wk), static_cast<int32_t>(k));
      cumulative[k] = sum += wk;
    }
    const cpu::UnitRow row{cumulative.data(), unit ? nullptr : unit_entry.data(), n, sum};
    const std::vector<int64_t> budgets = {-1, 0, 1, 2, 15, n - 1, n, n + 3, 1 + static_cast<int64_t>(rng() % n)};
    const int64_t budget = budgets[rng() % budgets.size()];
    const bool replace = rng() % 4 == 0;
    const uint64_t ls = rng();
    const int64_t count = bulk::sampled_count(n, budget, replace);
    std::vector<double> work(static_cast<std::size_t>(n)), prefix(static_cast<std::size_t>(n));
    std::vector<int64_t> want(static_cast<std::size_t>(count)), got(static_cast<std::size_t>(count)), scratch;
    const int64_t want_n = bulk::sample_row(w.data(), n, budget, replace, 3, ls, trial, work.data(), prefix.data(), want.data());
    const int64_t got_n = cpu::sample_row_units(row, budget, replace, 3, ls, trial, scratch, got.data());
    ASSERT_EQ(got_n, want_n);
    ASSERT_EQ(got, want) << "n " << n << " budget " << budget << (replace ? " with" : " without") << " replacement";
    // n - 1 draws from n >= 20 entries collide in round 0 all but surely, so later rounds step
    // over the chosen entries.
    multi_round_rows += !replace && budget == n - 1 && n >= 20;
  }
  EXPECT_GT(multi_round_rows, 100);
}

/// The device form's stacked compaction (bulk_sampler_cuda.cu) run step by step on the host with
/// the same rules (bulk_compact.hpp): the stable radix sort is a stable sort by key, each kernel a
/// loop over its threads' indices, the scans sequential. The edge arrays hold `bound` entries of
/// which indptr[rows] are real, as on the device.
struct StackedCompaction {
  std::vector<int64_t> starts, counts, src_nodes, local, rebased;
};

StackedCompaction compact_stacked(const std::vector<int64_t>& offsets, const std::vector<int64_t>& dst,
                                  const std::vector<int64_t>& indptr, const std::vector<int64_t>& nodes,
                                  int node_bits) {
  const auto k = static_cast<int64_t>(offsets.size()) - 1, rows = static_cast<int64_t>(dst.size());
  const auto n = rows + static_cast<int64_t>(nodes.size());
  StackedCompaction c;
  c.starts.resize(static_cast<std::size_t>(k + 1));
  for (int64_t b = 0; b <= k; ++b) c.starts[b] = bulk::sequence_start(offsets[b], indptr[offsets[b]]);
  std::vector<std::pair<unsigned long long, int64_t>> keyed(static_cast<std::size_t>(n));
  for (int64_t p = 0; p < n; ++p) {
    if (p >= c.starts[k]) {
      keyed[p] = {bulk::sequence_key(k, 0, node_bits), p};
      continue;
    }
    const int64_t b = bulk::segment_of(c.starts.data(), k, p);
    const int64_t q = p - c.starts[b], nd = offsets[b + 1] - offsets[b];
    const int64_t node = q < nd ? dst[offsets[b] + q] : nodes[indptr[offsets[b]] + (q - nd)];
    keyed[p] = {bulk::sequence_key(b, node, node_bits), p};
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<unsigned long long> sorted_keys(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) sorted_keys[i] = keyed[i].first;
  std::vector<int64_t> run_ids(static_cast<std::size_t>(n)), run_first(static_cast<std::size_t>(n));
  std::vector<int64_t> ranks(static_cast<std::size_t>(n + 1), 0);
  for (int64_t i = 0; i < n; ++i) run_ids[i] = (i > 0 ? run_ids[i - 1] : 0) + (bulk::starts_run(sorted_keys.data(), i) ? 1 : 0);
  for (int64_t i = 0; i < n; ++i) {
    if (!bulk::starts_run(sorted_keys.data(), i)) continue;
    const int64_t p0 = keyed[i].second;
    run_first[run_ids[i] - 1] = p0;
    if (p0 >= c.starts[k]) continue;
    const int64_t b = bulk::segment_of(c.starts.data(), k, p0);
    if (bulk::is_new_node(p0 - c.starts[b], offsets[b + 1] - offsets[b])) ranks[p0] = 1;
  }
  int64_t sum = 0;
  for (int64_t& r : ranks) sum += std::exchange(r, sum);
  c.src_nodes.assign(static_cast<std::size_t>(n), -1);
  c.local.assign(nodes.size(), -1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t p = keyed[i].second;
    if (p >= c.starts[k]) continue;
    const int64_t p0 = run_first[run_ids[i] - 1];
    const int64_t b = bulk::segment_of(c.starts.data(), k, p);
    const int64_t s0 = c.starts[b], nd = offsets[b + 1] - offsets[b], q = p - s0;
    const int64_t id = bulk::local_id(p0 - s0, nd, ranks[p0] - ranks[s0]);
    if (q >= nd) c.local[indptr[offsets[b]] + (q - nd)] = id;
    if (p == p0) c.src_nodes[s0 + id] = static_cast<int64_t>(sorted_keys[i] & ((1ULL << node_bits) - 1));
  }
  c.counts.resize(static_cast<std::size_t>(k));
  for (int64_t b = 0; b < k; ++b) {
    c.counts[b] = offsets[b + 1] - offsets[b] + ranks[c.starts[b + 1]] - ranks[c.starts[b]];
  }
  c.rebased.resize(static_cast<std::size_t>(rows + k));
  for (int64_t b = 0; b < k; ++b) {
    for (int64_t r = offsets[b]; r <= offsets[b + 1]; ++r) c.rebased[r + b] = indptr[r] - indptr[offsets[b]];
  }
  return c;
}

TEST(BulkSampler, StackedCompactionRulesMatchCompactLayer) {
  // Random stacked layers (empty batches, batches without edges, repeats within and across
  // batches, dst nodes among the neighbours, slack past the real edges): each batch's slice of
  // the stacked result must be cpu::compact_layer's block.
  std::mt19937_64 rng(11);
  int64_t checked_new = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t k = 1 + static_cast<int64_t>(rng() % 5), num_nodes = 1 + static_cast<int64_t>(rng() % 40);
    std::vector<int64_t> offsets{0}, dst, indptr{0}, nodes;
    for (int64_t b = 0; b < k; ++b) {
      std::vector<int64_t> ids(static_cast<std::size_t>(num_nodes));
      std::iota(ids.begin(), ids.end(), 0);
      std::shuffle(ids.begin(), ids.end(), rng);
      const auto nd = static_cast<int64_t>(rng() % 3 == 0 ? 0 : rng() % (std::min<int64_t>(num_nodes, 8) + 1));
      for (int64_t j = 0; j < nd; ++j) {
        dst.push_back(ids[j]);
        const auto degree = static_cast<int64_t>(rng() % 5);
        for (int64_t e = 0; e < degree; ++e) nodes.push_back(static_cast<int64_t>(rng() % num_nodes));
        indptr.push_back(static_cast<int64_t>(nodes.size()));
      }
      offsets.push_back(static_cast<int64_t>(dst.size()));
    }
    const auto real = static_cast<int64_t>(nodes.size());
    nodes.resize(nodes.size() + rng() % 4, 123456);  // the bound's slack, never read
    const int node_bits = 7;
    const StackedCompaction c = compact_stacked(offsets, dst, indptr, nodes, node_bits);
    ASSERT_EQ(c.starts[k], static_cast<int64_t>(dst.size()) + real);
    for (int64_t b = 0; b < k; ++b) {
      const int64_t r0 = offsets[b], r1 = offsets[b + 1], e0 = indptr[r0], e1 = indptr[r1];
      std::vector<int64_t> want_src, want_local;
      cpu::compact_layer(std::span<const int64_t>(dst.data() + r0, static_cast<std::size_t>(r1 - r0)),
                         std::span<const int64_t>(nodes.data() + e0, static_cast<std::size_t>(e1 - e0)), want_src,
                         want_local);
      ASSERT_EQ(c.counts[b], static_cast<int64_t>(want_src.size())) << "trial " << trial << " batch " << b;
      const int64_t s0 = c.starts[b];
      EXPECT_EQ(std::vector<int64_t>(c.src_nodes.begin() + s0, c.src_nodes.begin() + s0 + c.counts[b]), want_src)
          << "trial " << trial << " batch " << b;
      EXPECT_EQ(std::vector<int64_t>(c.local.begin() + e0, c.local.begin() + e1), want_local)
          << "trial " << trial << " batch " << b;
      EXPECT_EQ(s0 - r0, e0);  // the host reads each batch's edge offset from its start
      for (int64_t r = r0; r <= r1; ++r) EXPECT_EQ(c.rebased[r + b], indptr[r] - e0);
      checked_new += c.counts[b] - (r1 - r0);
    }
  }
  EXPECT_GT(checked_new, 300);
}

/// Inclusive prefix sums the way a block computes them: tile by tile, carry + the tile's inclusive
/// sums, each tile scanned as a Hillis-Steele tree (another grouping of the additions than the
/// serial loop's).
std::vector<double> tiled_prefix_sums(const std::vector<double>& x, int64_t tile) {
  const auto n = static_cast<int64_t>(x.size());
  std::vector<double> prefix(x.size());
  double carry = 0;
  for (int64_t base = 0; base < n; base += tile) {
    const int64_t len = std::min(tile, n - base);
    std::vector<double> scan(x.begin() + base, x.begin() + base + len);
    for (int64_t step = 1; step < len; step *= 2) {
      std::vector<double> next = scan;
      for (int64_t i = step; i < len; ++i) next[i] = bulk::add_rn(scan[i], scan[i - step]);
      scan = next;
    }
    for (int64_t i = 0; i < len; ++i) prefix[base + i] = bulk::add_rn(carry, scan[i]);
    carry = bulk::add_rn(carry, scan[len - 1]);
  }
  return prefix;
}

/// bulk::sample_row the way the CUDA backend's block runs it (bulk_rows_cuda.cuh): prefix sums
/// tile by tile (carry + the tile's inclusive sums, each tile summed as a tree, not left to right),
/// the draws of a round in reverse order zeroing what they hit and counting what was positive, the
/// chosen entries emitted by a scan of the zero flags. Every decision is bulk_row_ops.hpp's.
int64_t block_order_sample_row(const std::vector<double>& w, int64_t budget, bool replace, uint64_t seed, uint64_t ls,
                               int64_t key, int64_t tile, std::vector<int64_t>& out) {
  const auto n = static_cast<int64_t>(w.size());
  out.assign(static_cast<std::size_t>(std::max<int64_t>(bulk::sampled_count(n, budget, replace), 0)), -1);
  if (bulk::sampled_count(n, budget, replace) == 0) return 0;
  if (!bulk::row_draws(n, budget, replace)) {
    for (int64_t k = n - 1; k >= 0; --k) out[k] = k;
    return n;
  }
  std::vector<double> prefix;
  const auto prefix_sums = [&](const std::vector<double>& x, int64_t* last_positive) {
    prefix = tiled_prefix_sums(x, tile);
    *last_positive = -1;
    for (int64_t k = 0; k < n; ++k) {
      if (x[k] > 0) *last_positive = k;
    }
    return prefix.back();
  };
  int64_t last_positive = -1;
  if (replace) {
    const double total = prefix_sums(w, &last_positive);
    for (int64_t j = budget - 1; j >= 0; --j) {
      out[j] = bulk::pick_with_replacement(prefix.data(), n, bulk::draw_target(seed, ls, key, j, total));
    }
    return budget;
  }
  std::vector<double> work = w;
  int64_t chosen = 0;
  for (int64_t round = 0; chosen < budget; ++round) {
    const double total = prefix_sums(work, &last_positive);
    const uint64_t rs = bulk::round_stream_of(ls, round);
    const int64_t need = budget - chosen;
    for (int64_t j = need - 1; j >= 0; --j) {
      const int64_t k = bulk::pick_distinct(prefix.data(), n, bulk::draw_target(seed, rs, key, j, total), last_positive);
      if (std::exchange(work[k], 0.0) != 0.0) ++chosen;
    }
  }
  int64_t emitted = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (work[k] == 0) out[emitted++] = k;
  }
  return emitted;
}

TEST(BulkSampler, BlockOrderDrawsEqualSampleRow) {
  // The CUDA backend's block-per-row draws rest on the prefix sums being exact (any grouping of
  // the additions gives the same bits) and on a round's outcome being the set of entries hit.
  // Both kinds of row: GraphSAGE's multiplicities and LADIES' squares on the 2^-36 grid (sums up
  // to the 2^16-row frontier's, about 2^16), short rows and rows of many tiles.
  std::mt19937_64 rng(23);
  int64_t drawn_rows = 0;
  for (int trial = 0; trial < 600; ++trial) {
    SCOPED_TRACE(trial);
    const bool grid = trial % 2 == 1;
    const int64_t n = trial % 50 == 0 ? 5000 : 1 + static_cast<int64_t>(rng() % 300);
    std::vector<double> w(static_cast<std::size_t>(n));
    for (double& x : w) {
      // LADIES: a square of up to a whole frontier's mass on the grid (at least one unit).
      x = grid ? static_cast<double>(1 + rng() % (uint64_t{1} << 40)) * kBulkProbabilityUnit * (rng() % 4 == 0 ? 1 : 1e-4)
               : static_cast<double>(1 + rng() % (rng() % 8 == 0 ? 300 : 3));
      if (grid) x = std::max(std::nearbyint(x / kBulkProbabilityUnit), 1.0) * kBulkProbabilityUnit;
    }
    const std::vector<int64_t> budgets = {-1, 0, 1, 2, 15, n - 1, n, n + 2, 1 + static_cast<int64_t>(rng() % n)};
    const int64_t budget = budgets[rng() % budgets.size()];
    const bool replace = !grid && rng() % 4 == 0;
    const uint64_t ls = rng();
    const int64_t count = bulk::sampled_count(n, budget, replace);
    std::vector<double> work(static_cast<std::size_t>(n)), prefix(static_cast<std::size_t>(n));
    std::vector<int64_t> want(static_cast<std::size_t>(count));
    const int64_t want_n = bulk::sample_row(w.data(), n, budget, replace, 5, ls, trial, work.data(), prefix.data(), want.data());
    std::vector<double> serial(static_cast<std::size_t>(n));
    double running = 0;
    for (int64_t k = 0; k < n; ++k) serial[k] = running = bulk::add_rn(running, w[k]);
    for (const int64_t tile : {int64_t{32 * 4}, int64_t{256 * 4}}) {  // the CUDA blocks' tiles
      // The premise: the grouping does not change a bit of the prefix sums.
      const std::vector<double> tiled = tiled_prefix_sums(w, tile);
      ASSERT_EQ(0, std::memcmp(tiled.data(), serial.data(), serial.size() * sizeof(double))) << "tile " << tile;
      std::vector<int64_t> got;
      ASSERT_EQ(block_order_sample_row(w, budget, replace, 5, ls, trial, tile, got), want_n) << "tile " << tile;
      ASSERT_EQ(got, want) << "tile " << tile << " n " << n << " budget " << budget;
    }
    drawn_rows += bulk::row_draws(n, budget, replace);
  }
  EXPECT_GT(drawn_rows, 200);
}

TEST(BulkSampler, RowDecisionsFollowStepTwo) {
  // row_draws: the rows that need the prefix sums; segment_of: the range of a position, empty
  // ranges skipped.
  EXPECT_FALSE(bulk::row_draws(0, 5, false));
  EXPECT_FALSE(bulk::row_draws(7, 0, true));
  EXPECT_FALSE(bulk::row_draws(7, -1, false));
  EXPECT_FALSE(bulk::row_draws(7, 7, false));
  EXPECT_TRUE(bulk::row_draws(7, 6, false));
  EXPECT_TRUE(bulk::row_draws(7, 9, true));
  const std::vector<int64_t> offsets{0, 0, 3, 3, 3, 5, 9};  // ranges 0, 2, 3 empty
  for (int64_t p = 0; p < offsets.back(); ++p) {
    int64_t want = 0;
    for (int64_t b = 0; b + 1 < static_cast<int64_t>(offsets.size()); ++b) {
      if (offsets[b] <= p && p < offsets[b + 1]) want = b;
    }
    EXPECT_EQ(bulk::segment_of(offsets.data(), static_cast<int64_t>(offsets.size()) - 1, p), want) << p;
  }
  // The draw target is u * total with u the draw's unit double.
  const double u = u64_to_unit_double(node_bits(3, 9, 4, 2));
  EXPECT_EQ(bulk::draw_target(3, 9, 4, 2, 10.0), u * 10.0);
  const double prefix[] = {1, 3, 3, 6};
  EXPECT_EQ(bulk::pick_with_replacement(prefix, 4, 6.0), 3);  // a target at the total: the last entry
  EXPECT_EQ(bulk::pick_distinct(prefix, 4, 6.0, 1), 1);       // ... or the last positive one
  EXPECT_EQ(bulk::pick_distinct(prefix, 4, 2.5, 1), 1);
}

TEST(BulkSampler, LadiesProductBySortedGatherEqualsSpgemm) {
  // The CUDA backend builds row b of P = Q * squares by gathering the squares' rows of S_b as
  // (b, column) keys, sorting them and adding equal keys' values in whatever order the reduction
  // takes: the same bits as the host's SpGEMM, because every sum is exact. Frontiers with repeats
  // across batches, an empty batch, and a hub row.
  std::vector<std::pair<int64_t, int64_t>> edges;
  const OwnedGraph base = OwnedGraph::random(3000, 10, 31);
  for (int64_t v = 0; v < base.num_nodes(); ++v) {
    for (int64_t p = base.indptr[v]; p < base.indptr[v + 1]; ++p) edges.emplace_back(base.indices[p], v);
  }
  for (int64_t u = 0; u < 3000; ++u) edges.emplace_back(u, 7);  // node 7: every node's out-edge
  const OwnedGraph g = OwnedGraph::from_edges(3000, edges);
  const BulkSampler sampler(g.sample_graph(), ladies({64}));
  const BulkMatrices& m = sampler.matrices();
  std::vector<std::vector<int64_t>> frontiers = batches_of(g, 5, 400, 4);
  frontiers[2].clear();
  for (const std::size_t b : {std::size_t{0}, std::size_t{3}}) {  // frontiers hold distinct nodes
    if (std::find(frontiers[b].begin(), frontiers[b].end(), 7) == frontiers[b].end()) frontiers[b].push_back(7);
  }
  CsrMatrix q;
  q.rowptr.push_back(0);
  for (const auto& f : frontiers) {
    std::vector<int64_t> sorted = f;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    q.cols.insert(q.cols.end(), sorted.begin(), sorted.end());
    q.rowptr.push_back(static_cast<int64_t>(q.cols.size()));
  }
  q.vals.assign(q.cols.size(), 1.0);
  const CsrMatrix want = cpu::spgemm(q, m.ladies_squares, m.num_nodes, nullptr);
  std::vector<std::pair<std::pair<int64_t, int64_t>, double>> gathered;
  for (std::size_t b = 0; b < frontiers.size(); ++b) {
    for (const int64_t v : frontiers[b]) {
      for (int64_t i = m.ladies_squares.rowptr[v]; i < m.ladies_squares.rowptr[v + 1]; ++i) {
        gathered.push_back({{static_cast<int64_t>(b), m.ladies_squares.cols[i]}, m.ladies_squares.vals[i]});
      }
    }
  }
  std::stable_sort(gathered.begin(), gathered.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<int64_t> rowptr(frontiers.size() + 1, 0), cols;
  std::vector<double> vals;
  for (std::size_t i = 0; i < gathered.size();) {
    std::size_t j = i;
    while (j < gathered.size() && gathered[j].first == gathered[i].first) ++j;
    double sum = 0;
    for (std::size_t t = j; t > i; --t) sum = bulk::add_rn(sum, gathered[t - 1].second);  // reversed order
    cols.push_back(gathered[i].first.second);
    vals.push_back(sum);
    ++rowptr[static_cast<std::size_t>(gathered[i].first.first) + 1];
    i = j;
  }
  std::partial_sum(rowptr.begin(), rowptr.end(), rowptr.begin());
  EXPECT_EQ(rowptr, want.rowptr);
  EXPECT_EQ(cols, want.cols);
  ASSERT_EQ(vals.size(), want.vals.size());
  EXPECT_EQ(0, std::memcmp(vals.data(), want.vals.data(), vals.size() * sizeof(double)));
  EXPECT_GE(want.rowptr[1] - want.rowptr[0], 3000);  // the hub's row reaches every node
}

/// A row's sum the way the CUDA backend's warp adds it (ladies_row_weights_kernel): lane t sums
/// the aligned chunk t of the terms with bulk::pairwise_sum, then the 32 lane sums are added in
/// adjacent pairs, shuffle step by shuffle step.
double warp_tree_sum(const double* terms, int64_t count) {
  if (count == 0) return 0;
  int64_t padded = 1;
  while (padded < count) padded *= 2;
  const int64_t chunk = padded > 32 ? padded / 32 : 1;
  double lanes[32];
  for (int64_t lane = 0; lane < 32; ++lane) {
    const int64_t begin = lane * chunk;
    const int64_t mine = begin < count ? std::min(chunk, count - begin) : 0;
    lanes[lane] = bulk::pairwise_sum(terms + (mine > 0 ? begin : 0), mine);
  }
  for (int offset = 1; offset < 32; offset *= 2) {
    for (int lane = 0; lane + offset < 32; lane += 2 * offset) lanes[lane] = bulk::add_rn(lanes[lane], lanes[lane + offset]);
  }
  return lanes[0];
}

TEST(BulkSampler, TreeSumIsPairwiseWhoeverAdds) {
  // pairwise_sum (the host's one pass), the padded pairwise sum of the specification
  // (test::tree_sum) and the warp's chunked order give the same bits, for counts around the powers
  // of two and the warp's width; ladies_row_sum is pairwise_sum of the terms. Terms spread over
  // many magnitudes, so that another order would round differently.
  std::mt19937_64 rng(5);
  int64_t differs_from_left_to_right = 0;
  for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}, int64_t{31}, int64_t{32}, int64_t{33},
                          int64_t{63}, int64_t{100}, int64_t{1023}, int64_t{1025}, int64_t{4096}, int64_t{100001}}) {
    SCOPED_TRACE(n);
    std::vector<double> m(static_cast<std::size_t>(n)), p(static_cast<std::size_t>(n)), t(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      m[i] = static_cast<double>(1 + rng() % 5);
      p[i] = static_cast<double>(1 + rng() % (uint64_t{1} << 36)) * kBulkProbabilityUnit;
      t[i] = bulk::ladies_term(m[i], p[i]);
    }
    const double want = test::tree_sum(t);
    const double tree = bulk::pairwise_sum(t.data(), n);
    EXPECT_EQ(0, std::memcmp(&tree, &want, sizeof want));
    const double warp = warp_tree_sum(t.data(), n);
    EXPECT_EQ(0, std::memcmp(&warp, &want, sizeof want));
    const double row = bulk::ladies_row_sum(m.data(), p.data(), n);
    EXPECT_EQ(0, std::memcmp(&row, &want, sizeof want));
    double serial = 0;
    for (const double x : t) serial += x;
    differs_from_left_to_right += serial != want;
  }
  EXPECT_GT(differs_from_left_to_right, 0);  // the order matters: the test can tell them apart
}

TEST(BulkSampler, LadiesExtractionPerEntryEqualsHostLayer) {
  // The CUDA backend's LADIES step 3 (bulk_sampler_cuda.cu), run on the host thread by thread:
  // one item per entry of the frontier's rows of A (its row and batch by segment_of), marked when
  // its column is in C_b, ranked by an exclusive sum of the marks, written at its rank with its
  // term; then each row's sum of terms and each entry's weight. It must be cpu::ladies_layer's
  // layer bit for bit (nodes, weights, indptr), frontiers with an empty batch and a hub. For
  // LADIES, m.a is A + I, so the rows scanned hold the self-loops.
  std::vector<std::pair<int64_t, int64_t>> edges;
  const OwnedGraph base = OwnedGraph::random(4000, 10, 37);
  for (int64_t v = 0; v < base.num_nodes(); ++v) {
    for (int64_t p = base.indptr[v]; p < base.indptr[v + 1]; ++p) edges.emplace_back(base.indices[p], v);
  }
  for (int64_t u = 0; u < 4000; u += 2) edges.emplace_back(u, 9);  // node 9: a hub of 2000
  const OwnedGraph g = OwnedGraph::from_edges(4000, edges);
  const int64_t layer_size = 96;
  const BulkSampler sampler(g.sample_graph(), ladies({layer_size}));
  const BulkMatrices& m = sampler.matrices();
  std::vector<std::vector<int64_t>> seeds = batches_of(g, 4, 150, 8);
  seeds[1].clear();
  if (std::find(seeds[2].begin(), seeds[2].end(), 9) == seeds[2].end()) seeds[2].push_back(9);
  const std::vector<std::span<const int64_t>> dsts(seeds.begin(), seeds.end());
  const std::vector<uint64_t> streams{3, 4, 5, 6};
  const bulk::StackedFrontier f = bulk::stack_frontier(dsts, streams, ladies({layer_size}), 0);
  const bulk::StackedDraws want = cpu::ladies_layer(m, f, layer_size, 7, nullptr);

  const int64_t k = f.num_batches(), rows = f.rows();
  // P and C_b as the device builds them (LadiesProductBySortedGatherEqualsSpgemm: P is the host's).
  CsrMatrix q;
  q.rowptr = f.offsets;
  q.cols = f.nodes;
  for (int64_t b = 0; b < k; ++b) std::sort(q.cols.begin() + f.offsets[b], q.cols.begin() + f.offsets[b + 1]);
  q.vals.assign(q.cols.size(), 1.0);
  const CsrMatrix p = cpu::spgemm(q, m.ladies_squares, m.num_nodes, nullptr);
  std::vector<int64_t> kept, kept_offsets{0};
  for (int64_t b = 0; b < k; ++b) {
    const int64_t p0 = p.rowptr[b], n = p.rowptr[b + 1] - p0;
    std::vector<double> work(static_cast<std::size_t>(n)), prefix(static_cast<std::size_t>(n));
    std::vector<int64_t> picks(static_cast<std::size_t>(bulk::sampled_count(n, layer_size, false)));
    const int64_t count = bulk::sample_row(p.vals.data() + p0, n, layer_size, false, 7, f.layer_streams[b], 0,
                                           work.data(), prefix.data(), picks.data());
    std::set<int64_t> c(f.nodes.begin() + f.offsets[b], f.nodes.begin() + f.offsets[b + 1]);
    for (int64_t i = 0; i < count; ++i) c.insert(p.cols[p0 + picks[i]]);
    kept.insert(kept.end(), c.begin(), c.end());
    kept_offsets.push_back(static_cast<int64_t>(kept.size()));
  }
  // The kernels' loops.
  std::vector<int64_t> a_offsets(static_cast<std::size_t>(rows + 1), 0);
  for (int64_t r = 0; r < rows; ++r) a_offsets[r] = bulk::sampled_count(m.a.rowptr[f.nodes[r] + 1] - m.a.rowptr[f.nodes[r]], -1, false);
  int64_t running = 0;
  for (int64_t& x : a_offsets) running += std::exchange(x, running);
  const int64_t total = a_offsets[rows];
  std::vector<int64_t> ranks(static_cast<std::size_t>(total + 1), 0), nodes(static_cast<std::size_t>(total), -1),
      indptr(static_cast<std::size_t>(rows + 1));
  std::vector<double> terms(static_cast<std::size_t>(total)), sums(static_cast<std::size_t>(rows));
  const auto entry = [&](int64_t e, int64_t& r, int64_t& b, int64_t& i) {
    r = bulk::segment_of(a_offsets.data(), rows, e);
    b = bulk::segment_of(f.offsets.data(), k, r);
    i = m.a.rowptr[f.nodes[r]] + (e - a_offsets[r]);
  };
  for (int64_t e = total - 1; e >= 0; --e) {  // any order: each item writes only its own mark
    int64_t r = 0, b = 0, i = 0;
    entry(e, r, b, i);
    ranks[e] = bulk::find_sorted(kept.data() + kept_offsets[b], kept_offsets[b + 1] - kept_offsets[b], m.a.cols[i]) >= 0;
  }
  running = 0;
  for (int64_t& x : ranks) running += std::exchange(x, running);
  for (int64_t e = 0; e < total; ++e) {
    int64_t r = 0, b = 0, i = 0;
    entry(e, r, b, i);
    const int64_t o = ranks[e];
    if (ranks[e + 1] == o) continue;
    const int64_t u = m.a.cols[i], p0 = p.rowptr[b];
    nodes[o] = u;
    terms[o] = bulk::ladies_term(m.a.vals[i], p.vals[p0 + bulk::find_sorted(p.cols.data() + p0, p.rowptr[b + 1] - p0, u)]);
  }
  for (int64_t r = 0; r <= rows; ++r) indptr[r] = ranks[a_offsets[r]];
  for (int64_t r = 0; r < rows; ++r) sums[r] = warp_tree_sum(terms.data() + indptr[r], indptr[r + 1] - indptr[r]);
  const int64_t kept_edges = indptr[rows];
  std::vector<float> weights(static_cast<std::size_t>(kept_edges));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = indptr[r]; o < indptr[r + 1]; ++o) weights[o] = bulk::ladies_weight_of_term(terms[o], sums[r]);
  }
  nodes.resize(static_cast<std::size_t>(kept_edges));
  EXPECT_EQ(indptr, want.indptr);
  EXPECT_EQ(nodes, want.nodes);
  EXPECT_TRUE(want.edge_ids.empty());
  for (int64_t r = 0; r < rows; ++r) {  // each row's self-loop is among its entries
    EXPECT_EQ(std::count(nodes.begin() + indptr[r], nodes.begin() + indptr[r + 1], f.nodes[r]), 1) << r;
  }
  ASSERT_EQ(weights.size(), want.weights.size());
  EXPECT_EQ(0, std::memcmp(weights.data(), want.weights.data(), weights.size() * sizeof(float)));
  EXPECT_GT(kept_edges, 200);
  EXPECT_LT(kept_edges, total);  // some entries fall outside C_b
}

TEST(BulkSampler, CudaMatchesCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: CUDA bulk sampling vs CPU not checked";
  const OwnedGraph g = OwnedGraph::random(20000, 12, 4);
  auto seeds = batches_of(g, 8, 256, 1);
  seeds[3].clear();  // an empty batch among full ones
  std::vector<std::span<const int64_t>> spans(seeds.begin(), seeds.end());
  BulkSamplerOptions no_ids = sage({5, 0, -1});
  no_ids.edge_ids = false;
  for (const BulkSamplerOptions& o : {sage({15, 10, 5}), sage({15, 10, -1}, true), no_ids, ladies({256, 256})}) {
    const std::vector<MiniBatch> cpu = BulkSampler(g.sample_graph(), o).sample(spans, 77);
    const std::vector<MiniBatch> gpu = CudaBulkSampler(g.sample_graph(), o).sample(spans, 77);
    ASSERT_EQ(cpu.size(), gpu.size());
    for (std::size_t b = 0; b < cpu.size(); ++b) test::expect_same_minibatch(cpu[b], gpu[b]);
    std::vector<uint64_t> streams(spans.size());
    for (std::size_t b = 0; b < streams.size(); ++b) streams[b] = 1000 + 3 * b;  // one stream per batch
    const std::vector<MiniBatch> cpu_listed = BulkSampler(g.sample_graph(), o).sample(spans, streams);
    const std::vector<MiniBatch> gpu_listed = CudaBulkSampler(g.sample_graph(), o).sample(spans, streams);
    for (std::size_t b = 0; b < cpu.size(); ++b) test::expect_same_minibatch(cpu_listed[b], gpu_listed[b]);
  }
}

TEST(BulkSampler, CudaLadiesSelfLoopsMatchCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the CUDA bulk LADIES self-loops not checked";
#if GRAPHTIER_WITH_CUDA
  // Bulk LADIES cuts its blocks from A + I: on a graph with stored self-loops (merged with the
  // added one, weight 2 / P), parallel edges and zero-degree nodes, the host and device forms of
  // the GPU sampler equal the CPU's bit for bit, every dst row holds its self-loop exactly once,
  // and no block carries edge ids although the options ask for them.
  const OwnedGraph base = OwnedGraph::random(6000, 6, 29);
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t v = 0; v < base.num_nodes(); ++v) {
    for (int64_t p = base.indptr[v]; p < base.indptr[v + 1]; ++p) edges.emplace_back(base.indices[p], v);
    if (v % 5 == 0) edges.emplace_back(v, v);  // a stored self-loop
  }
  const OwnedGraph g = OwnedGraph::from_edges(base.num_nodes(), edges);
  const BulkSamplerOptions o = ladies({96, 64});
  ASSERT_TRUE(o.edge_ids);
  auto seeds = batches_of(g, 4, 100, 3);
  seeds[2].clear();
  const std::vector<std::span<const int64_t>> spans(seeds.begin(), seeds.end());
  const CudaBulkSampler gpu_sampler(g.sample_graph(), o);
  const std::vector<MiniBatch> cpu = BulkSampler(g.sample_graph(), o).sample(spans, 21);
  const std::vector<MiniBatch> host = gpu_sampler.sample(spans, 21);
  const std::vector<DeviceMiniBatch> device = gpu_sampler.sample_device(spans, 21);
  ASSERT_EQ(host.size(), cpu.size());
  ASSERT_EQ(device.size(), cpu.size());
  int64_t stored = 0;
  for (std::size_t b = 0; b < cpu.size(); ++b) {
    SCOPED_TRACE(b);
    test::expect_same_minibatch(host[b], cpu[b]);
    test::expect_same_minibatch(device[b].to_host(), cpu[b]);
    for (std::size_t l = 0; l < host[b].blocks.size(); ++l) {
      const Block& k = host[b].blocks[l];
      EXPECT_TRUE(k.edge_ids.empty());
      EXPECT_EQ(device[b].blocks[l].edge_ids, nullptr);
      for (int64_t i = 0; i < k.num_dst; ++i) {
        ASSERT_EQ(std::count(k.indices.begin() + k.indptr[i], k.indices.begin() + k.indptr[i + 1], i), 1)
            << "dst " << k.src_nodes[i] << " of block " << l;
        stored += k.src_nodes[i] % 5 == 0;
      }
    }
  }
  EXPECT_GT(stored, 0);  // some rows merged a stored self-loop with the added one
#endif
}

TEST(BulkSampler, CudaMatricesLargerThanTheFreeMemoryFailAtCreation) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the bulk sampler's budget check not checked";
  const OwnedGraph g = OwnedGraph::random(1 << 20, 8, 19);
  // The row pointers alone need this much; the check counts the entries too.
  const auto row_pointers = static_cast<int64_t>(g.indptr.size() * sizeof(int64_t));
  test::DeviceFill fill(row_pointers);
  if (const std::string why = fill.unfilled(); !why.empty()) GTEST_SKIP() << why;
  const int64_t free_now = fill.free_bytes();
  for (const BulkSamplerOptions& o : {sage({5, 5}), ladies({64, 64})}) {
    try {
      const CudaBulkSampler sampler(g.sample_graph(), o);
      ADD_FAILURE() << "a bulk sampler was made with " << free_now << " bytes free";
    } catch (const OutOfMemory& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("CudaBulkSampler"), std::string::npos) << m;  // not an allocation failing half-way
      EXPECT_NE(m.find("free"), std::string::npos) << m;
    }
  }
  fill.release();
  // With the memory back, the same sampler is made.
  EXPECT_NO_THROW(CudaBulkSampler(g.sample_graph(), sage({5, 5})));
}

TEST(BulkSampler, CudaEmptyProductsMatchCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: CUDA bulk sampling of empty products not checked";
  // Nodes 0..9 have no in-edges, 10..19 one each from 0..9: a frontier of 0..9 gives an empty
  // product P = Q * A (no entries at all), and the second layer of seeds 10..19 too.
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t v = 10; v < 20; ++v) edges.emplace_back(v - 10, v);
  const OwnedGraph g = OwnedGraph::from_edges(20, edges);
  const std::vector<std::vector<int64_t>> seeds{{0, 1, 2}, {10, 11, 12, 13}, {}};
  const std::vector<std::span<const int64_t>> spans(seeds.begin(), seeds.end());
  for (const BulkSamplerOptions& o : {sage({3, 2}), sage({-1, 1}, true), ladies({4, 4})}) {
    const std::vector<MiniBatch> cpu = BulkSampler(g.sample_graph(), o).sample(spans, 5);
    const std::vector<MiniBatch> gpu = CudaBulkSampler(g.sample_graph(), o).sample(spans, 5);
    ASSERT_EQ(cpu.size(), gpu.size());
    for (std::size_t b = 0; b < cpu.size(); ++b) test::expect_same_minibatch(gpu[b], cpu[b]);
    // The first batch's products are empty on both: no edges for GraphSAGE; for LADIES only the
    // self-loops of A + I, one per dst row of each of its two blocks.
    EXPECT_EQ(cpu[0].num_edges(), o.algorithm == BulkAlgorithm::kLadies ? 6 : 0);
  }
}

TEST(BulkSampler, CudaOnOwnStreamReusesItsStagingAcrossCalls) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: CUDA bulk sampling on a non-default stream not checked";
  // One sampler, one non-blocking stream, calls of growing then shrinking size: the pinned staging
  // grows mid-call (the first call needs little, the third a lot) and is reused by the next call,
  // and the stream-ordered temporaries of one call are recycled by the next. Each result must
  // equal the CPU's, read after the sampler and the stream are gone.
  const OwnedGraph g = OwnedGraph::random(20000, 12, 6);
  for (const BulkSamplerOptions& o : {sage({15, 10, 5}), sage({-1, 3}, true), ladies({256, 256})}) {
    std::vector<std::vector<MiniBatch>> gpu, cpu;
    {
      const OwnedCudaStream own;
      const CudaBulkSampler gpu_sampler(g.sample_graph(), o);
      const BulkSampler cpu_sampler(g.sample_graph(), o);
      uint64_t stream = 0;
      for (const int64_t batch : {int64_t{4}, int64_t{64}, int64_t{1024}, int64_t{16}}) {
        const auto seeds = batches_of(g, 3, batch, stream);
        const std::vector<std::span<const int64_t>> spans(seeds.begin(), seeds.end());
        gpu.push_back(gpu_sampler.sample(spans, stream, own.get()));
        cpu.push_back(cpu_sampler.sample(spans, stream));
        stream += 10;
      }
    }
    for (std::size_t c = 0; c < gpu.size(); ++c) {
      ASSERT_EQ(gpu[c].size(), cpu[c].size());
      for (std::size_t b = 0; b < gpu[c].size(); ++b) test::expect_same_minibatch(gpu[c][b], cpu[c][b]);
    }
  }
}

TEST(BulkSampler, CudaWaitsWithinItsBudget) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the CUDA bulk sampler's synchronisation budget not checked";
#if GRAPHTIER_WITH_CUDA
  // bulk_sampler_cuda.hpp: one host wait per layer, GraphSAGE and LADIES (every layer here has
  // draws and edges), on a non-blocking stream.
  const OwnedGraph g = OwnedGraph::random(20000, 12, 8);
  const auto seeds = batches_of(g, 4, 64, 3);
  const std::vector<std::span<const int64_t>> spans(seeds.begin(), seeds.end());
  const OwnedCudaStream own;
  const CudaBulkSampler sage_sampler(g.sample_graph(), sage({15, 10, 5}));
  uint64_t before = cuda::bulk_synchronisations();
  sage_sampler.sample(spans, 1, own.get());
  EXPECT_EQ(cuda::bulk_synchronisations() - before, 3u);
  const CudaBulkSampler ladies_sampler(g.sample_graph(), ladies({256, 256}));
  before = cuda::bulk_synchronisations();
  ladies_sampler.sample(spans, 1, own.get());
  EXPECT_EQ(cuda::bulk_synchronisations() - before, 2u);
#endif
}

TEST(BulkSampler, CudaDeviceFormEqualsHostForm) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the CUDA bulk sampler's device form not checked";
#if GRAPHTIER_WITH_CUDA
  // sample_device(...).to_host() == sample() == the CPU sampler, GraphSAGE (with and without
  // replacement, edge ids, fanouts -1 and 0) and LADIES, k = 1 and 3 (one batch empty), on a
  // non-blocking stream; the sinks receive each batch's last-block src nodes; one wait per layer.
  const OwnedGraph g = OwnedGraph::random(20000, 12, 9);
  BulkSamplerOptions no_ids = sage({5, 0, -1});
  no_ids.edge_ids = false;
  const OwnedCudaStream own;
  for (const BulkSamplerOptions& o : {sage({15, 10, 5}), sage({15, 10, -1}, true), no_ids, ladies({256, 256})}) {
    const CudaBulkSampler gpu_sampler(g.sample_graph(), o);
    const BulkSampler cpu_sampler(g.sample_graph(), o);
    for (const int64_t k : {int64_t{1}, int64_t{3}}) {
      auto seeds = batches_of(g, k, 128, static_cast<uint64_t>(k));
      if (k == 3) seeds[1].clear();  // an empty batch between full ones
      const std::vector<std::span<const int64_t>> spans(seeds.begin(), seeds.end());
      std::vector<Buffer> sinks(static_cast<std::size_t>(k));
      std::vector<int64_t> bounds(static_cast<std::size_t>(k), -1);
      const BulkInputNodesSink sink = [&](int64_t b, int64_t bound) {
        bounds[b] = bound;
        sinks[b] = Buffer(MemoryKind::kPinned, static_cast<std::size_t>(std::max<int64_t>(bound, 1)) * sizeof(int64_t));
        return static_cast<int64_t*>(sinks[b].data());
      };
      const uint64_t before = cuda::bulk_synchronisations();
      const std::vector<DeviceMiniBatch> device = gpu_sampler.sample_device(spans, 40, own.get(), sink);
      EXPECT_EQ(cuda::bulk_synchronisations() - before, o.fanouts.size()) << "k " << k;
      const std::vector<MiniBatch> host = gpu_sampler.sample(spans, 40, own.get());
      const std::vector<MiniBatch> cpu = cpu_sampler.sample(spans, 40);
      ASSERT_EQ(device.size(), static_cast<std::size_t>(k));
      for (int64_t b = 0; b < k; ++b) {
        const DeviceMiniBatch& d = device[b];
        EXPECT_EQ(d.host_syncs, static_cast<int64_t>(o.fanouts.size()));
        EXPECT_EQ(d.seeds, seeds[b]);
        const MiniBatch back = d.to_host();
        test::expect_same_minibatch(back, host[b]);
        test::expect_same_minibatch(back, cpu[b]);
        EXPECT_EQ(d.blocks.front().edge_ids != nullptr, gpu_sampler.options().edge_ids);  // none for LADIES
        EXPECT_EQ(d.blocks.front().weights != nullptr, o.algorithm == BulkAlgorithm::kLadies);
        const Block& last = cpu[b].blocks.back();
        ASSERT_GE(bounds[b], static_cast<int64_t>(last.src_nodes.size())) << "batch " << b;
        const auto* ids = static_cast<const int64_t*>(sinks[b].data());
        EXPECT_EQ(std::vector<int64_t>(ids, ids + d.blocks.back().num_src), last.src_nodes) << "batch " << b;
      }
    }
  }
#endif
}

TEST(BulkSampler, CudaDeviceFormOfEmptyProductsAndEmptyFrontiers) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the device form of empty products not checked";
#if GRAPHTIER_WITH_CUDA
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t v = 10; v < 20; ++v) edges.emplace_back(v - 10, v);
  const OwnedGraph g = OwnedGraph::from_edges(20, edges);
  // Every batch empty: no layer waits, empty blocks; then products with no entries at all.
  for (const std::vector<std::vector<int64_t>>& seeds :
       {std::vector<std::vector<int64_t>>{{}, {}}, std::vector<std::vector<int64_t>>{{0, 1, 2}, {10, 11, 12, 13}, {}}}) {
    const std::vector<std::span<const int64_t>> spans(seeds.begin(), seeds.end());
    for (const BulkSamplerOptions& o : {sage({3, 2}), sage({-1, 1}, true), ladies({4, 4})}) {
      const std::vector<MiniBatch> cpu = BulkSampler(g.sample_graph(), o).sample(spans, 5);
      const std::vector<DeviceMiniBatch> gpu = CudaBulkSampler(g.sample_graph(), o).sample_device(spans, 5);
      ASSERT_EQ(cpu.size(), gpu.size());
      for (std::size_t b = 0; b < cpu.size(); ++b) test::expect_same_minibatch(gpu[b].to_host(), cpu[b]);
    }
  }
#endif
}

/// A graph with a hub: node 0 has `hub_degree` in-edges from distinct nodes 1.. (every third
/// doubled: multiplicities), node 1 about half as many, the rest a sparse random graph.
[[maybe_unused]] OwnedGraph hub_graph(int64_t num_nodes, int64_t hub_degree) {
  std::vector<std::pair<int64_t, int64_t>> edges;
  edges.reserve(static_cast<std::size_t>(2 * hub_degree + 8 * num_nodes));
  for (int64_t i = 0; i < hub_degree; ++i) {
    const int64_t u = 1 + i % (num_nodes - 1);
    edges.emplace_back(u, 0);
    if (i % 3 == 0) edges.emplace_back(u, 0);
    if (i % 2 == 0) edges.emplace_back(u, 1);
  }
  std::mt19937_64 rng(41);
  for (int64_t v = 2; v < num_nodes; ++v) {
    for (int64_t e = static_cast<int64_t>(rng() % 3); e > 0; --e) edges.emplace_back(static_cast<int64_t>(rng() % num_nodes), v);
  }
  return OwnedGraph::from_edges(num_nodes, edges);
}

TEST(BulkSampler, CudaHubRowsMatchCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: CUDA bulk sampling of a hub row not checked";
#if GRAPHTIER_WITH_CUDA
  // A row of a million distinct in-neighbours (1.33 million edges) drawn by one block, GraphSAGE
  // without and with replacement and LADIES (whose P row of a batch holding the hub has over a
  // million entries, and whose extraction scans the hub's row): host and device forms equal the
  // CPU's, bit for bit, with one wait per layer.
  const OwnedGraph g = hub_graph(1'100'000, 1'000'000);
  ASSERT_GE(g.indptr[1] - g.indptr[0], 1'000'000);
  std::vector<std::vector<int64_t>> seeds = batches_of(g, 3, 64, 12);
  for (auto& batch : seeds) batch.erase(std::remove_if(batch.begin(), batch.end(), [](int64_t v) { return v < 2; }), batch.end());
  seeds[0].insert(seeds[0].begin(), 0);  // the hub first, then its half-sized neighbour
  seeds[2].push_back(1);
  seeds[2].push_back(0);
  const std::vector<std::span<const int64_t>> spans(seeds.begin(), seeds.end());
  const OwnedCudaStream own;
  for (const BulkSamplerOptions& o : {sage({25, 10}), sage({40, 5}, true), ladies({512, 256})}) {
    const CudaBulkSampler gpu_sampler(g.sample_graph(), o);
    const std::vector<MiniBatch> cpu = BulkSampler(g.sample_graph(), o).sample(spans, 9);
    const uint64_t before = cuda::bulk_synchronisations();
    const std::vector<MiniBatch> host = gpu_sampler.sample(spans, 9, own.get());
    EXPECT_EQ(cuda::bulk_synchronisations() - before, o.fanouts.size());
    const std::vector<DeviceMiniBatch> device = gpu_sampler.sample_device(spans, 9, own.get());
    ASSERT_EQ(host.size(), cpu.size());
    ASSERT_EQ(device.size(), cpu.size());
    for (std::size_t b = 0; b < cpu.size(); ++b) {
      SCOPED_TRACE(b);
      test::expect_same_minibatch(host[b], cpu[b]);
      test::expect_same_minibatch(device[b].to_host(), cpu[b]);
    }
    EXPECT_GT(cpu[0].blocks[0].indptr[1], 0);  // the hub drew (or, LADIES, kept) neighbours
  }
#endif
}

TEST(BulkSampler, CudaConcurrentCallsGetTheirOwnResults) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: concurrent CUDA bulk calls not checked";
#if GRAPHTIER_WITH_CUDA
  // Two threads call one sampler at once, each on its own stream (and one more pair on the legacy
  // default stream), host and device forms interleaved, with batches of different sizes so their
  // staging differs: each result must be the CPU's for its own seeds and streams.
  const OwnedGraph g = OwnedGraph::random(20000, 12, 13);
  for (const BulkSamplerOptions& o : {sage({15, 10, 5}), ladies({256, 256})}) {
    const CudaBulkSampler gpu_sampler(g.sample_graph(), o);
    const BulkSampler cpu_sampler(g.sample_graph(), o);
    constexpr int kCalls = 12;
    std::vector<std::vector<std::vector<int64_t>>> seeds(2 * kCalls);
    std::vector<std::vector<MiniBatch>> want(2 * kCalls), got(2 * kCalls);
    for (int c = 0; c < 2 * kCalls; ++c) {
      seeds[c] = batches_of(g, 1 + c % 4, c % 2 == 0 ? 64 : 512, static_cast<uint64_t>(100 * c));
      const std::vector<std::span<const int64_t>> spans(seeds[c].begin(), seeds[c].end());
      want[c] = cpu_sampler.sample(spans, static_cast<uint64_t>(7 * c));
    }
    for (const bool own_streams : {true, false}) {
      std::vector<std::exception_ptr> errors(2);
      const auto worker = [&](int t) {
        try {
          const OwnedCudaStream own;
          const CudaStream stream = own_streams ? own.get() : CudaStream{};
          for (int c = t; c < 2 * kCalls; c += 2) {
            const std::vector<std::span<const int64_t>> spans(seeds[c].begin(), seeds[c].end());
            if (c % 3 == 0) {
              got[c].clear();
              for (const DeviceMiniBatch& d : gpu_sampler.sample_device(spans, static_cast<uint64_t>(7 * c), stream)) {
                got[c].push_back(d.to_host());
              }
            } else {
              got[c] = gpu_sampler.sample(spans, static_cast<uint64_t>(7 * c), stream);
            }
          }
        } catch (...) {
          errors[t] = std::current_exception();
        }
      };
      std::thread first(worker, 0), second(worker, 1);
      first.join();
      second.join();
      for (const std::exception_ptr& e : errors) {
        if (e) std::rethrow_exception(e);
      }
      for (int c = 0; c < 2 * kCalls; ++c) {
        SCOPED_TRACE("call " + std::to_string(c) + (own_streams ? " own streams" : " default stream"));
        ASSERT_EQ(got[c].size(), want[c].size());
        for (std::size_t b = 0; b < want[c].size(); ++b) test::expect_same_minibatch(got[c][b], want[c][b]);
      }
    }
  }
#endif
}

TEST(BulkSampler, CudaSamplerNeedsCuda) {
  if (cuda_available()) GTEST_SKIP() << "CUDA present: the Unsupported path is not reachable";
  const OwnedGraph g = tiny();
  EXPECT_THROW(CudaBulkSampler(g.sample_graph(), sage({2})), Unsupported);
}

}  // namespace
}  // namespace graphtier::sample
