// Link minibatches: negatives against their documented draws and properties (range, non-edges,
// reproducibility), seed numbering, and seed-edge exclusion against sampling the graph without the
// edges (a naive reference) on tiny and random graphs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/sample/link_batch.hpp"
#include "graphtier/sample/link_draws.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"
#include "sample_test_util.hpp"

namespace graphtier::sample {
namespace {

using test::OwnedGraph;
using Pair = std::pair<int64_t, int64_t>;

bool unordered_equal(int64_t a, int64_t b, int64_t u, int64_t v) { return (a == u && b == v) || (a == v && b == u); }

std::set<Pair> edge_set(const OwnedGraph& g) {
  std::set<Pair> out;
  for (int64_t v = 0; v < g.num_nodes(); ++v) {
    for (int64_t p = g.indptr[v]; p < g.indptr[v + 1]; ++p) out.emplace(g.indices[p], v);
  }
  return out;
}

TEST(LinkDraws, SortedPairSearchMatchesALinearScan) {
  const std::vector<int64_t> pairs{0, 3, 1, 1, 1, 4, 2, 0, 5, 5};
  for (int64_t u = -1; u <= 6; ++u) {
    for (int64_t v = -1; v <= 6; ++v) {
      bool found = false;
      for (std::size_t i = 0; i < pairs.size(); i += 2) found = found || (pairs[i] == u && pairs[i + 1] == v);
      EXPECT_EQ(sorted_pairs_contain(pairs.data(), 5, u, v), found) << u << ", " << v;
      bool reversed = found;
      for (std::size_t i = 0; i < pairs.size(); i += 2) reversed = reversed || (pairs[i] == v && pairs[i + 1] == u);
      EXPECT_EQ(is_excluded_edge(pairs.data(), 5, u, v, true), reversed);
      EXPECT_EQ(is_excluded_edge(pairs.data(), 5, u, v, false), found);
    }
  }
  EXPECT_FALSE(sorted_pairs_contain(pairs.data(), 0, 0, 3));
}

TEST(LinkDraws, CscHasEdgeReadsTheColumn) {
  const OwnedGraph g = OwnedGraph::from_edges(4, {{1, 0}, {2, 0}, {0, 3}, {3, 3}});
  const std::set<Pair> edges = edge_set(g);
  for (int64_t u = 0; u < 4; ++u) {
    for (int64_t v = 0; v < 4; ++v) {
      EXPECT_EQ(csc_has_edge(g.indptr.data(), g.indices.data(), u, v), edges.count({u, v}) == 1) << u << " -> " << v;
    }
  }
}

TEST(LinkSeeds, BinaryNegativesFollowTheDocumentedDraws) {
  const std::vector<int64_t> pairs{3, 7, 7, 3, 10, 2};
  NegativeOptions o;
  o.mode = NegativeMode::kBinary;
  o.amount = 1.5;  // ceil(1.5 * 3) = 5 negatives
  const LinkSeeds s = draw_link_seeds(pairs, 50, o, 11, 42);
  ASSERT_EQ(s.negatives.size(), 10u);
  const uint64_t ns = negative_stream(42);
  for (int64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(s.negatives[2 * i], negative_node(11, ns, 2 * i, 0, 50));
    EXPECT_EQ(s.negatives[2 * i + 1], negative_node(11, ns, 2 * i + 1, 0, 50));
  }
  // Nodes: the distinct endpoints, ascending; label rows: positives then negatives.
  std::vector<int64_t> all(pairs.begin(), pairs.end());
  all.insert(all.end(), s.negatives.begin(), s.negatives.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  EXPECT_EQ(s.nodes, all);
  ASSERT_EQ(s.label_src.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    const int64_t u = i < 3 ? pairs[2 * i] : s.negatives[2 * (i - 3)];
    const int64_t v = i < 3 ? pairs[2 * i + 1] : s.negatives[2 * (i - 3) + 1];
    EXPECT_EQ(s.nodes[s.label_src[i]], u);
    EXPECT_EQ(s.nodes[s.label_dst[i]], v);
  }
  EXPECT_TRUE(s.src_index.empty());
  // Reproducible per (seed, stream); another stream or seed draws others.
  EXPECT_EQ(draw_link_seeds(pairs, 50, o, 11, 42).negatives, s.negatives);
  EXPECT_NE(draw_link_seeds(pairs, 50, o, 11, 43).negatives, s.negatives);
  EXPECT_NE(draw_link_seeds(pairs, 50, o, 12, 42).negatives, s.negatives);
}

TEST(LinkSeeds, WithoutNegativesTheLabelsAreThePositives) {
  const std::vector<int64_t> pairs{5, 1, 1, 5};
  const LinkSeeds s = draw_link_seeds(pairs, 6, NegativeOptions{}, 0, 0);
  EXPECT_EQ(s.nodes, (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(s.label_src, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(s.label_dst, (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(s.negatives.empty());
}

TEST(LinkSeeds, TripletNegativesCorruptEachPositivesDestination) {
  const std::vector<int64_t> pairs{4, 9, 0, 4};
  NegativeOptions o;
  o.mode = NegativeMode::kTriplet;
  o.amount = 3;
  const LinkSeeds s = draw_link_seeds(pairs, 20, o, 5, 8);
  ASSERT_EQ(s.negatives.size(), 6u);
  ASSERT_EQ(s.dst_neg_index.size(), 6u);
  const uint64_t ns = negative_stream(8);
  for (int64_t k = 0; k < 2; ++k) {
    EXPECT_EQ(s.nodes[s.src_index[k]], pairs[2 * k]);
    EXPECT_EQ(s.nodes[s.dst_pos_index[k]], pairs[2 * k + 1]);
    for (int64_t j = 0; j < 3; ++j) {
      EXPECT_EQ(s.negatives[k * 3 + j], negative_node(5, ns, k * 3 + j, 0, 20));
      EXPECT_EQ(s.nodes[s.dst_neg_index[k * 3 + j]], s.negatives[k * 3 + j]);
    }
  }
  EXPECT_TRUE(s.label_src.empty());
}

TEST(LinkSeeds, NonEdgesAreNeverEdgesOfTheGraphTheBatchOrTheKnownPairs) {
  // Dense enough that plain draws hit edges often: 30 nodes, mean degree 8.
  const OwnedGraph g = OwnedGraph::random(30, 8, 3);
  const std::set<Pair> edges = edge_set(g);
  const graph::CscView csc = g.csc();
  const std::vector<int64_t> pairs{0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<int64_t> known{8, 9, 10, 11};  // sorted
  for (const NegativeMode mode : {NegativeMode::kBinary, NegativeMode::kTriplet}) {
    NegativeOptions o;
    o.mode = mode;
    o.amount = 25;
    o.non_edges = true;
    int64_t hits_without = 0;
    for (uint64_t stream = 0; stream < 20; ++stream) {
      const LinkSeeds s = draw_link_seeds(pairs, 30, o, 1, stream, &csc, known);
      EXPECT_EQ(s.unverified, 0);
      const auto check = [&](int64_t u, int64_t v) {
        EXPECT_EQ(edges.count({u, v}), 0u) << u << " -> " << v << " is an edge";
        for (std::span<const int64_t> list : {std::span<const int64_t>(pairs), std::span<const int64_t>(known)}) {
          for (std::size_t i = 0; i < list.size(); i += 2) {
            EXPECT_FALSE(unordered_equal(list[i], list[i + 1], u, v)) << u << ", " << v << " is a listed pair";
          }
        }
      };
      if (mode == NegativeMode::kBinary) {
        for (std::size_t i = 0; i < s.negatives.size(); i += 2) check(s.negatives[i], s.negatives[i + 1]);
      } else {
        for (std::size_t i = 0; i < s.negatives.size(); ++i) check(pairs[2 * (i / 25)], s.negatives[i]);
      }
      o.non_edges = false;
      const LinkSeeds plain = draw_link_seeds(pairs, 30, o, 1, stream, &csc, known);
      o.non_edges = true;
      for (std::size_t i = 0; mode == NegativeMode::kBinary && i < plain.negatives.size(); i += 2) {
        hits_without += static_cast<int64_t>(edges.count({plain.negatives[i], plain.negatives[i + 1]}));
      }
    }
    if (mode == NegativeMode::kBinary) {
      EXPECT_GT(hits_without, 0) << "the test graph is too sparse to test anything";
    }
  }
}

TEST(LinkSeeds, ANodeAdjacentToEverythingCountsUnverifiedNegatives) {
  std::vector<Pair> edges;
  for (int64_t v = 0; v < 4; ++v) edges.emplace_back(0, v);
  const OwnedGraph g = OwnedGraph::from_edges(4, edges);
  const graph::CscView csc = g.csc();
  NegativeOptions o;
  o.mode = NegativeMode::kTriplet;
  o.amount = 2;
  o.non_edges = true;
  o.max_attempts = 4;
  const std::vector<int64_t> pairs{0, 1};
  const LinkSeeds s = draw_link_seeds(pairs, 4, o, 0, 0, &csc);
  EXPECT_EQ(s.unverified, 2);  // every 0 -> v is an edge
  EXPECT_EQ(s.negatives.size(), 2u);
}

TEST(LinkSeeds, TemporalNegativesAreNoLaterThanTheirPositive) {
  // Times 0..39 by id, except node 7, the earliest (-1). Positive 0 at time 9, positive 1 at 25.
  std::vector<int64_t> node_time(40);
  for (int64_t v = 0; v < 40; ++v) node_time[v] = v;
  node_time[7] = -1;
  const std::vector<int64_t> pairs{3, 5, 20, 21};
  const std::vector<int64_t> pair_time{9, 25};
  NegativeOptions o;
  o.node_time = node_time;
  o.pair_time = pair_time;
  for (const NegativeMode mode : {NegativeMode::kBinary, NegativeMode::kTriplet}) {
    o.mode = mode;
    o.amount = 4;
    for (uint64_t stream = 0; stream < 20; ++stream) {
      const LinkSeeds s = draw_link_seeds(pairs, 40, o, 1, stream);
      for (std::size_t i = 0; i < s.negatives.size(); ++i) {
        // binary: pair i / 2 belongs to positive (i / 2) mod 2; triplet: negative i to positive i / 4.
        const int64_t positive = mode == NegativeMode::kBinary ? static_cast<int64_t>(i / 2) % 2 : static_cast<int64_t>(i / 4);
        EXPECT_LE(node_time[s.negatives[i]], pair_time[positive]) << "stream " << stream << " negative " << i;
      }
    }
  }
  // Untimed, the same draws reach later nodes (the constraint is what kept them out).
  NegativeOptions untimed;
  untimed.mode = NegativeMode::kTriplet;
  untimed.amount = 4;
  bool later = false;
  for (uint64_t stream = 0; stream < 20 && !later; ++stream) {
    for (const int64_t v : draw_link_seeds(pairs, 40, untimed, 1, stream).negatives) later = later || node_time[v] > 9;
  }
  EXPECT_TRUE(later);
  // A time before every node: no draw fits, each negative becomes the earliest node.
  const std::vector<int64_t> too_early{-5, -5};
  o.pair_time = too_early;
  o.mode = NegativeMode::kBinary;
  o.amount = 1;
  const LinkSeeds s = draw_link_seeds(pairs, 40, o, 1, 0);
  EXPECT_EQ(s.negatives, (std::vector<int64_t>{7, 7, 7, 7}));
  // Times of the wrong length, or one of the two alone, are refused.
  o.pair_time = std::span<const int64_t>(pair_time).first(1);
  EXPECT_THROW(draw_link_seeds(pairs, 40, o, 1, 0), InvalidArgument);
  o.pair_time = {};
  EXPECT_THROW(draw_link_seeds(pairs, 40, o, 1, 0), InvalidArgument);
}

TEST(LinkSeeds, RefusesBadInput) {
  const std::vector<int64_t> pairs{0, 1};
  NegativeOptions o;
  EXPECT_THROW(draw_link_seeds(std::vector<int64_t>{0, 1, 2}, 4, o, 0, 0), InvalidArgument);
  EXPECT_THROW(draw_link_seeds(std::vector<int64_t>{0, 4}, 4, o, 0, 0), OutOfRange);
  EXPECT_THROW(draw_link_seeds(std::vector<int64_t>{-1, 2}, 4, o, 0, 0), OutOfRange);
  o.mode = NegativeMode::kBinary;
  o.amount = 0;
  EXPECT_THROW(draw_link_seeds(pairs, 4, o, 0, 0), InvalidArgument);
  o.mode = NegativeMode::kTriplet;
  o.amount = 1.5;
  EXPECT_THROW(draw_link_seeds(pairs, 4, o, 0, 0), InvalidArgument);
  o.amount = 1;
  o.max_attempts = 0;
  EXPECT_THROW(draw_link_seeds(pairs, 4, o, 0, 0), InvalidArgument);
  EXPECT_EQ(parse_negative_mode("triplet"), NegativeMode::kTriplet);
  EXPECT_THROW(parse_negative_mode("ternary"), InvalidArgument);
}

TEST(LinkSeeds, ChecksNegativeOptionsWithoutABatch) {
  // What a loader checks when it is made: the options alone, for batches of up to 512 positives.
  NegativeOptions o;
  o.amount = -3;  // no negatives: the amount is not read
  EXPECT_NO_THROW(check_negative_options(o, 512));
  o.mode = NegativeMode::kTriplet;
  for (const double bad : {1.5, 0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    o.amount = bad;
    EXPECT_THROW(check_negative_options(o, 512), InvalidArgument) << bad;
  }
  o.amount = 3;
  EXPECT_NO_THROW(check_negative_options(o, 512));
  o.amount = 1e12;  // a whole number, but 5e14 draws a batch
  EXPECT_THROW(check_negative_options(o, 512), InvalidArgument);
  o.mode = NegativeMode::kBinary;
  for (const double bad : {0.0, -0.5, std::nan("")}) {
    o.amount = bad;
    EXPECT_THROW(check_negative_options(o, 512), InvalidArgument) << bad;
  }
  o.amount = 1.5;  // a fraction is a binary amount: ceil(1.5 P) pairs
  EXPECT_NO_THROW(check_negative_options(o, 512));
  o.max_attempts = 0;
  EXPECT_THROW(check_negative_options(o, 512), InvalidArgument);
}

/// The graph without the edges u -> v that (u, v) or (v, u) of `pairs` name.
OwnedGraph without(const OwnedGraph& g, const std::vector<int64_t>& pairs) {
  std::vector<Pair> edges;
  for (int64_t v = 0; v < g.num_nodes(); ++v) {
    for (int64_t p = g.indptr[v]; p < g.indptr[v + 1]; ++p) {
      const int64_t u = g.indices[p];
      bool excluded = false;
      for (std::size_t i = 0; i < pairs.size(); i += 2) excluded = excluded || unordered_equal(pairs[i], pairs[i + 1], u, v);
      if (!excluded) edges.emplace_back(u, v);
    }
  }
  return OwnedGraph::from_edges(g.num_nodes(), edges);
}

/// With every neighbour taken, excluding the seed edges from a batch is sampling the graph without
/// them: the same nodes in the same order and the same edges.
TEST(ExcludeSeedEdges, WithAllNeighboursIsSamplingTheGraphWithoutTheEdges) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const OwnedGraph g = OwnedGraph::random(40, 3, seed);
    // Supervision edges: some edges of the graph (either direction) and a non-edge.
    std::vector<int64_t> pairs;
    for (int64_t v = 0; v < g.num_nodes() && pairs.size() < 12; v += 3) {
      if (g.indptr[v + 1] > g.indptr[v]) {
        pairs.push_back(v);
        pairs.push_back(g.indices[g.indptr[v]]);  // v -> its first in-neighbour: the reverse is the edge
      }
    }
    pairs.push_back(1);
    pairs.push_back(2);
    std::vector<int64_t> seeds(pairs.begin(), pairs.end());
    std::sort(seeds.begin(), seeds.end());
    seeds.erase(std::unique(seeds.begin(), seeds.end()), seeds.end());
    NeighborSamplerOptions o;
    o.fanouts = {-1, -1, -1};
    o.edge_ids = false;
    o.seed = seed;
    const MiniBatch full = NeighborSampler(g.sample_graph(), o).sample(seeds, 7);
    const MiniBatch got = exclude_seed_edges(full, pairs, /*reverse=*/true);
    const OwnedGraph reduced = without(g, pairs);
    const MiniBatch want = NeighborSampler(reduced.sample_graph(), o).sample(seeds, 7);
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    test::expect_same_minibatch(got, want);
    EXPECT_NO_THROW(check_minibatch(got, g.num_nodes(), g.num_edges()));
    EXPECT_LT(got.num_edges(), full.num_edges());
  }
}

TEST(ExcludeSeedEdges, GoldenTinyBatchWithoutReverses) {
  // 0 <- {1, 2}, 1 <- {0, 2}, 2 <- {3}, 3 <- {}.
  const OwnedGraph g = OwnedGraph::from_edges(4, {{1, 0}, {2, 0}, {0, 1}, {2, 1}, {3, 2}});
  NeighborSamplerOptions o;
  o.fanouts = {-1, -1};
  const MiniBatch full = NeighborSampler(g.sample_graph(), o).sample(std::vector<int64_t>{0, 1}, 0);
  // Supervision edge 1 -> 0: only the message 1 -> 0 goes (its reverse 0 -> 1 stays).
  const MiniBatch got = exclude_seed_edges(full, std::vector<int64_t>{1, 0}, /*reverse=*/false);
  ASSERT_EQ(got.blocks.size(), 2u);
  EXPECT_EQ(got.blocks[0].src_nodes, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(got.blocks[0].indptr, (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(got.blocks[0].indices, (std::vector<int64_t>{2, 0, 2}));
  // Edge ids follow their edges: 2 -> 0 is CSC position 1; 0 -> 1 is 2, 2 -> 1 is 3.
  EXPECT_EQ(got.blocks[0].edge_ids, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(got.blocks[1].src_nodes, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(got.blocks[1].indptr, (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(got.blocks[1].indices, (std::vector<int64_t>{2, 0, 2, 3}));
  // With reverses, 0 -> 1 goes too.
  const MiniBatch both = exclude_seed_edges(full, std::vector<int64_t>{1, 0}, /*reverse=*/true);
  EXPECT_EQ(both.blocks[0].indptr, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(both.blocks[0].indices, (std::vector<int64_t>{2, 2}));
}

TEST(ExcludeSeedEdges, DropsNodesOnlyTheExcludedEdgesReached) {
  // A path 3 -> 2 -> 1 -> 0: excluding 2 -> 1 cuts 2 and 3 out of every block.
  const OwnedGraph g = OwnedGraph::from_edges(4, {{1, 0}, {2, 1}, {3, 2}});
  NeighborSamplerOptions o;
  o.fanouts = {-1, -1, -1};
  const MiniBatch full = NeighborSampler(g.sample_graph(), o).sample(std::vector<int64_t>{0}, 0);
  ASSERT_EQ(full.input_nodes().size(), 4u);
  const MiniBatch got = exclude_seed_edges(full, std::vector<int64_t>{1, 2});
  EXPECT_EQ(std::vector<int64_t>(got.input_nodes().begin(), got.input_nodes().end()), (std::vector<int64_t>{0, 1}));
  EXPECT_NO_THROW(check_minibatch(got, 4, 3));
  EXPECT_THROW(exclude_seed_edges(full, std::vector<int64_t>{1}), InvalidArgument);
}

/// Sampled fanouts: the result is a valid batch holding no excluded message, and every message
/// it drops is excluded or hangs off a node no longer reached.
TEST(ExcludeSeedEdges, PropertiesWithSampledFanouts) {
  const OwnedGraph g = OwnedGraph::random(300, 6, 9);
  NegativeOptions neg;
  std::vector<int64_t> pairs;
  for (int64_t v = 0; v < 300 && pairs.size() < 64; v += 7) {
    if (g.indptr[v + 1] > g.indptr[v]) {
      pairs.push_back(g.indices[g.indptr[v]]);
      pairs.push_back(v);
    }
  }
  const LinkSeeds seeds = draw_link_seeds(pairs, 300, neg, 0, 0);
  NeighborSamplerOptions o;
  o.fanouts = {5, 3};
  o.seed = 4;
  const MiniBatch full = NeighborSampler(g.sample_graph(), o).sample(seeds.nodes, 3);
  const MiniBatch got = exclude_seed_edges(full, pairs);
  check_minibatch(got, g.num_nodes(), g.num_edges());
  std::set<Pair> excluded;
  for (std::size_t i = 0; i < pairs.size(); i += 2) {
    excluded.emplace(pairs[i], pairs[i + 1]);
    excluded.emplace(pairs[i + 1], pairs[i]);
  }
  for (std::size_t l = 0; l < got.blocks.size(); ++l) {
    const Block& b = got.blocks[l];
    const Block& f = full.blocks[l];
    std::set<std::tuple<int64_t, int64_t, int64_t>> kept;  // (u, v, edge id)
    for (int64_t i = 0; i < b.num_dst; ++i) {
      for (int64_t e = b.indptr[i]; e < b.indptr[i + 1]; ++e) {
        const Pair m{b.src_nodes[b.indices[e]], b.src_nodes[i]};
        EXPECT_EQ(excluded.count(m), 0u);
        kept.emplace(m.first, m.second, b.edge_ids[e]);
      }
    }
    const std::set<int64_t> dst(b.src_nodes.begin(), b.src_nodes.begin() + b.num_dst);
    for (int64_t i = 0; i < f.num_dst; ++i) {
      for (int64_t e = f.indptr[i]; e < f.indptr[i + 1]; ++e) {
        const Pair m{f.src_nodes[f.indices[e]], f.src_nodes[i]};
        const bool should_stay = excluded.count(m) == 0 && dst.count(m.second) == 1;
        EXPECT_EQ(kept.count({m.first, m.second, f.edge_ids[e]}), should_stay ? 1u : 0u) << "block " << l;
      }
    }
  }
}

}  // namespace
}  // namespace graphtier::sample
