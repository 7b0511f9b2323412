// Typed (per-relation) neighbour sampling: golden cases on a tiny typed graph, the naive
// per-relation reference on random typed graphs, the one-relation case against the homogeneous
// sampler, uniformity within a segment, the split of a block by type, and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <string>

#include "graphtier/core/error.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/sample/hetero_block.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"
#include "graphtier/sample/random.hpp"
#include "graphtier/sample/sampler.hpp"
#include "hetero_steps.hpp"
#include "neighbor_steps.hpp"
#include "sample_test_util.hpp"

namespace graphtier::sample {
namespace {

using test::OwnedGraph;
using test::TypedEdge;
using test::TypedGraph;

// Types: paper 0..3, author 4..6, institute (none). Relations: 0 cites paper -> paper, 1 writes
// author -> paper, 2 written_by paper -> author, 3 affiliated institute -> author (no edges).
// CSC positions: column 0: cites 1, 2, 3 (0..2), writes 4, 5 (3, 4); column 1: cites 0 (5),
// writes 4 (6); column 2: cites 3 (7), writes 6 (8); column 3: none; column 4: written_by 0, 1
// (9, 10); column 5: written_by 0 (11); column 6: written_by 2 (12).
TypedGraph tiny_typed() {
  return TypedGraph::from_edges({4, 3, 0}, {{0, 0}, {1, 0}, {0, 1}, {2, 1}},
                                {{4, 0, 1}, {1, 0, 0}, {2, 0, 0}, {5, 0, 1}, {3, 0, 0}, {0, 1, 0}, {4, 1, 1},
                                 {3, 2, 0}, {6, 2, 1}, {0, 4, 2}, {1, 4, 2}, {0, 5, 2}, {2, 6, 2}});
}

NeighborSamplerOptions hetero_options(std::vector<int64_t> fanouts, std::vector<std::vector<int64_t>> relation_fanouts,
                                     bool replace = false) {
  NeighborSamplerOptions o;
  o.fanouts = std::move(fanouts);
  o.relation_fanouts = std::move(relation_fanouts);
  o.replace = replace;
  o.seed = 11;
  return o;
}

void expect_invalid(const std::function<void()>& f, const std::string& words) {
  try {
    f();
    ADD_FAILURE() << "no InvalidArgument; expected one saying '" << words << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(HeteroSampler, TinyGraphIsWellFormed) {
  const TypedGraph g = tiny_typed();
  EXPECT_EQ(g.type_per_edge, (std::vector<uint8_t>{0, 0, 0, 1, 1, 0, 1, 0, 1, 2, 2, 2, 2}));
  EXPECT_EQ(g.graph.indices, (std::vector<int32_t>{1, 2, 3, 4, 5, 0, 4, 3, 6, 0, 1, 0, 2}));
  check_hetero_view(g.view(), g.graph.csc(), "tiny");
}

TEST(HeteroSampler, GoldenAllNeighboursCarryTheirRelations) {
  const TypedGraph g = tiny_typed();
  const NeighborSampler sampler(g.sample_graph(), hetero_options({-1}, {}));
  const std::vector<int64_t> seeds = {0};
  const MiniBatch b = sampler.sample(seeds, 0);
  EXPECT_EQ(b.blocks[0].src_nodes, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(b.blocks[0].indptr, (std::vector<int64_t>{0, 5}));
  EXPECT_EQ(b.blocks[0].indices, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(b.blocks[0].edge_ids, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(b.blocks[0].edge_types, (std::vector<uint8_t>{0, 0, 0, 1, 1}));
  check_minibatch(b, g.num_nodes(), g.num_edges(), g.view());
}

TEST(HeteroSampler, GoldenPerRelationFanoutsAndSeedsOfTwoTypes) {
  // cites 0 (none), the others all: paper 0 keeps its authors 4, 5; author 4 its papers 0, 1.
  const TypedGraph g = tiny_typed();
  const NeighborSampler sampler(g.sample_graph(), hetero_options({}, {{0}, {-1}, {-1}, {-1}}));
  const std::vector<int64_t> seeds = {0, 4};
  const MiniBatch b = sampler.sample(seeds, 5);
  const Block& block = b.blocks[0];
  EXPECT_EQ(block.src_nodes, (std::vector<int64_t>{0, 4, 5, 1}));
  EXPECT_EQ(block.indptr, (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(block.indices, (std::vector<int64_t>{1, 2, 0, 3}));
  EXPECT_EQ(block.edge_ids, (std::vector<int64_t>{3, 4, 9, 10}));
  EXPECT_EQ(block.edge_types, (std::vector<uint8_t>{1, 1, 2, 2}));
  check_minibatch(b, g.num_nodes(), g.num_edges(), g.view());

  // By type: papers 0, 1 (dst 0), authors 4, 5 (dst 4), no institutes; every relation present.
  const HeteroBlock h = split_block(block, g.view());
  EXPECT_EQ(h.num_dst, (std::vector<int64_t>{1, 1, 0}));
  ASSERT_EQ(h.src_nodes.size(), 3u);
  EXPECT_EQ(h.src_nodes[0], (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(h.src_nodes[1], (std::vector<int64_t>{4, 5}));
  EXPECT_TRUE(h.src_nodes[2].empty());
  ASSERT_EQ(h.relations.size(), 4u);
  EXPECT_EQ(h.relations[0].indptr, (std::vector<int64_t>{0, 0}));
  EXPECT_TRUE(h.relations[0].indices.empty());
  EXPECT_EQ(h.relations[1].indptr, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(h.relations[1].indices, (std::vector<int64_t>{0, 1}));  // authors 4, 5
  EXPECT_EQ(h.relations[1].block_edges, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(h.relations[2].indptr, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(h.relations[2].indices, (std::vector<int64_t>{0, 1}));  // papers 0, 1
  EXPECT_EQ(h.relations[2].block_edges, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(h.relations[3].indptr, (std::vector<int64_t>{0, 0}));  // affiliated: one author dst, no edges
}

TEST(HeteroSampler, GoldenFloydDrawsPerRelationByHand) {
  // Column 0: cites at 0..2 (fanout 2 of 3), writes at 3..4 (fanout 1 of 2), each from its own
  // relation stream; relation 0's is the layer's.
  const TypedGraph g = tiny_typed();
  const NeighborSamplerOptions o = hetero_options({}, {{2}, {1}, {1}, {1}});
  const NeighborSampler sampler(g.sample_graph(), o);
  const std::vector<int64_t> seeds = {0};
  const Block b = sampler.sample(seeds, 3).blocks[0];
  const uint64_t ls = layer_stream(3, 0);
  ASSERT_EQ(relation_stream(ls, 0), ls);
  ASSERT_NE(relation_stream(ls, 1), ls);
  const auto t0 = static_cast<int64_t>(bounded_u64(node_pair_bits(o.seed, ls, 0, 0), 2));
  const auto t1 = static_cast<int64_t>(bounded_u64(node_pair_bits(o.seed, ls, 0, 1), 3));
  std::set<int64_t> cites = {t0};
  cites.insert(t1 == t0 ? 2 : t1);
  const auto w = static_cast<int64_t>(bounded_u64(node_pair_bits(o.seed, relation_stream(ls, 1), 0, 0), 2));
  std::vector<int64_t> want(cites.begin(), cites.end());
  want.push_back(3 + w);
  EXPECT_EQ(b.edge_ids, want);
  EXPECT_EQ(b.edge_types, (std::vector<uint8_t>{0, 0, 1}));
}

TEST(HeteroSampler, SegmentsAndTypesFromTheSharedRoutines) {
  // The host/device routines against a scan, over random sorted columns (some relations absent).
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint8_t> column(rng() % 40);
    for (uint8_t& t : column) t = static_cast<uint8_t>(rng() % 6);
    std::sort(column.begin(), column.end());
    const auto n = static_cast<int64_t>(column.size());
    for (int r = 0; r < 7; ++r) {
      int64_t first = 0, last = 0;
      typed::relation_segment(column.data(), 0, n, r, &first, &last);
      const auto lo = std::lower_bound(column.begin(), column.end(), r) - column.begin();
      const auto hi = std::upper_bound(column.begin(), column.end(), r) - column.begin();
      EXPECT_EQ(first, lo);
      EXPECT_EQ(last, hi);
      EXPECT_EQ(typed::segment_end(column.data(), 0, n, r), hi);
    }
  }
  const std::vector<int64_t> offset = {0, 3, 3, 7, 7, 8};  // types 1 and 3 empty
  const int want[] = {0, 0, 0, 2, 2, 2, 2, 4};
  for (int64_t v = 0; v < 8; ++v) EXPECT_EQ(typed::node_type_of(offset.data(), 5, v), want[v]) << v;
}

TypedGraph random_typed_graph(uint64_t seed) {
  // Type 2 is empty; relation 5 starts there and has no edges; types 0 and 1 cite themselves.
  return TypedGraph::random({300, 200, 0, 50}, {{0, 0}, {1, 0}, {0, 1}, {3, 1}, {1, 3}, {2, 1}, {1, 1}}, 5.0, seed);
}

TEST(HeteroSampler, MatchesTheNaivePerRelationReference) {
  for (const bool replace : {false, true}) {
    for (const bool weighted : {false, true}) {
      SCOPED_TRACE(std::string(replace ? "replace" : "distinct") + (weighted ? ", weighted" : ""));
      TypedGraph g = random_typed_graph(replace * 2 + weighted + 1);
      if (weighted) {
        std::mt19937_64 rng(9);
        for (int64_t e = 0; e < g.num_edges(); ++e) g.graph.weights.push_back(rng() % 5 == 0 ? 0.0f : 0.5f + rng() % 7);
      }
      const NeighborSamplerOptions o =
          hetero_options({5, 3}, {{3, 2}, {-1, 1}, {2, 0}, {0, 5}, {4, -1}, {}, {1, 30}}, replace);
      const NeighborSampler sampler(g.sample_graph(), o);
      for (uint64_t stream = 0; stream < 4; ++stream) {
        const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 40, stream);
        const MiniBatch got = sampler.sample(seeds, stream);
        test::expect_same_minibatch(got, test::reference_sample(g, seeds, o, stream));
        check_minibatch(got, g.num_nodes(), g.num_edges(), g.view());
      }
    }
  }
}

/// One typed layer as the GPU lays it out, from the shared decisions alone: a row per (dst node,
/// relation) (typed::typed_row), its segment found through a type accessor split at `split_edge`
/// like a topology's hot and cold parts, its count by nbr::sample_count, the counts scanned and read
/// at each node's first row for indptr, the draws of nbr::floyd_draw / floyd_step (or the
/// repeated ones) from relation_stream. Unweighted.
struct RowLayer {
  std::vector<int64_t> indptr, positions;
  std::vector<uint8_t> types;
};

RowLayer gpu_rows_layer(const TypedGraph& g, std::span<const int64_t> dst, std::span<const int64_t> fanouts, bool replace,
                        uint64_t seed, uint64_t layer, int64_t split_edge) {
  const auto relations = static_cast<int>(fanouts.size());
  const std::vector<uint8_t> hot(g.type_per_edge.begin(), g.type_per_edge.begin() + split_edge);
  const std::vector<uint8_t> cold(g.type_per_edge.begin() + split_edge, g.type_per_edge.end());
  const auto type_at = [&](int64_t p) {
    return p < split_edge ? hot[static_cast<std::size_t>(p)] : cold[static_cast<std::size_t>(p - split_edge)];
  };
  const auto rows = static_cast<int64_t>(dst.size()) * relations;
  const auto segment = [&](int64_t k, int64_t* v, int* r, int64_t* first, int64_t* last) {
    int64_t w = 0;
    typed::typed_row(k, relations, &w, r);
    *v = dst[static_cast<std::size_t>(w)];
    typed::relation_segment_at(type_at, g.graph.indptr[*v], g.graph.indptr[*v + 1], *r, first, last);
  };
  std::vector<int64_t> offsets(static_cast<std::size_t>(rows + 1), 0);
  for (int64_t k = 0; k < rows; ++k) {
    int64_t v = 0, first = 0, last = 0;
    int r = 0;
    segment(k, &v, &r, &first, &last);
    offsets[k + 1] = offsets[k] + nbr::sample_count(fanouts[r], replace, false, last - first, last - first);
  }
  RowLayer out;
  for (std::size_t w = 0; w <= dst.size(); ++w) out.indptr.push_back(offsets[w * relations]);
  out.positions.resize(static_cast<std::size_t>(offsets[rows]));
  out.types.resize(out.positions.size());
  for (int64_t k = 0; k < rows; ++k) {
    int64_t v = 0, first = 0, last = 0;
    int r = 0;
    segment(k, &v, &r, &first, &last);
    const int64_t d = last - first, n = offsets[k + 1] - offsets[k];
    const uint64_t stream = relation_stream(layer, r);
    int64_t* pos = out.positions.data() + offsets[k];
    for (int64_t i = 0; i < n; ++i) {
      out.types[static_cast<std::size_t>(offsets[k] + i)] = static_cast<uint8_t>(r);
      if (fanouts[r] < 0 || (!replace && n == d)) {
        pos[i] = first + i;
      } else if (replace) {
        pos[i] = first + static_cast<int64_t>(bounded_u64(node_bits(seed, stream, v, i), static_cast<uint64_t>(d)));
      } else {
        nbr::floyd_step(pos, i, first, d - n + i, nbr::floyd_draw(seed, stream, v, d, n, i));
      }
    }
  }
  return out;
}

TEST(HeteroSampler, TheGpuRowsOfTheSharedDecisionsAreTheCpuSamplersBlocks) {
  for (const bool replace : {false, true}) {
    const TypedGraph g = random_typed_graph(replace ? 12 : 13);
    const auto relations = static_cast<int>(g.relations.size());
    // 40: the serial Floyd's fanouts on the long segments; -1 and 0 rows.
    const NeighborSamplerOptions o = hetero_options({5, 3}, {{3, 2}, {-1, 1}, {2, 0}, {0, 5}, {4, -1}, {}, {40, 30}}, replace);
    const std::vector<int64_t> table = relation_fanout_table(o, relations);
    const NeighborSampler sampler(g.sample_graph(), o);
    for (uint64_t stream = 0; stream < 3; ++stream) {
      SCOPED_TRACE(std::string(replace ? "replace" : "distinct") + " stream " + std::to_string(stream));
      const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 50, stream);
      const MiniBatch b = sampler.sample(seeds, stream);
      std::span<const int64_t> dst = b.seeds;
      for (std::size_t l = 0; l < b.blocks.size(); ++l) {
        const std::span<const int64_t> fanouts(table.data() + l * relations, static_cast<std::size_t>(relations));
        const RowLayer rows = gpu_rows_layer(g, dst, fanouts, replace, o.seed, layer_stream(stream, static_cast<int>(l)),
                                             g.num_edges() / 3);
        EXPECT_EQ(rows.indptr, b.blocks[l].indptr);
        EXPECT_EQ(rows.positions, b.blocks[l].edge_ids);
        EXPECT_EQ(rows.types, b.blocks[l].edge_types);
        // The host's bound of the layer's edges per dst node.
        const int64_t bound = typed::layer_fanout_bound(fanouts);
        for (std::size_t w = 0; bound >= 0 && w + 1 < rows.indptr.size(); ++w) {
          EXPECT_LE(rows.indptr[w + 1] - rows.indptr[w], bound);
        }
        dst = b.blocks[l].src_nodes;
      }
    }
  }
  const int64_t some[] = {3, 0, 40};
  const int64_t all[] = {3, -1, 40};
  EXPECT_EQ(typed::layer_fanout_bound(some), 43);
  EXPECT_EQ(typed::layer_fanout_bound(all), -1);
  int64_t w = 0;
  int r = 0;
  typed::typed_row(17, 7, &w, &r);
  EXPECT_EQ(w, 2);
  EXPECT_EQ(r, 3);
}

TEST(HeteroSampler, EachRelationKeepsMinOfFanoutAndDegreeDistinctExistingEdges) {
  const TypedGraph g = random_typed_graph(21);
  const int relations = static_cast<int>(g.relations.size());
  const NeighborSamplerOptions o = hetero_options({4, 2}, {{3, 2}, {-1, 1}, {2, 0}, {0, 5}, {4, -1}, {}, {1, 30}});
  const std::vector<int64_t> table = relation_fanout_table(o, relations);
  const NeighborSampler sampler(g.sample_graph(), o);
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 60, 4);
  const MiniBatch b = sampler.sample(seeds, 17);
  check_minibatch(b, g.num_nodes(), g.num_edges(), g.view());
  int64_t checked = 0;
  for (std::size_t l = 0; l < b.blocks.size(); ++l) {
    const Block& block = b.blocks[l];
    for (int64_t i = 0; i < block.num_dst; ++i) {
      const int64_t v = block.src_nodes[i];
      std::vector<int64_t> degree(relations, 0), kept(relations, 0);
      for (int64_t p = g.graph.indptr[v]; p < g.graph.indptr[v + 1]; ++p) ++degree[g.type_per_edge[p]];
      std::set<int64_t> distinct;
      for (int64_t e = block.indptr[i]; e < block.indptr[i + 1]; ++e) {
        const int64_t p = block.edge_ids[e];
        ASSERT_TRUE(p >= g.graph.indptr[v] && p < g.graph.indptr[v + 1]) << "edge " << p << " is not in column " << v;
        EXPECT_EQ(g.type_per_edge[p], block.edge_types[e]);
        EXPECT_EQ(g.graph.indices[p], block.src_nodes[block.indices[e]]);
        EXPECT_TRUE(distinct.insert(p).second) << "edge " << p << " sampled twice";
        ++kept[block.edge_types[e]];
      }
      for (int r = 0; r < relations; ++r) {
        const int64_t f = table[l * relations + r];
        EXPECT_EQ(kept[r], f < 0 ? degree[r] : std::min(f, degree[r])) << "node " << v << ", relation " << r;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 500);
}

TEST(HeteroSampler, IndependentOfThreadsAndOfTheOtherSeeds) {
  const TypedGraph g = random_typed_graph(8);
  const NeighborSampler sampler(g.sample_graph(), hetero_options({6, 3}, {{3, 2}, {-1, 1}, {2, 0}, {0, 5}, {4, -1}, {}, {1, 30}}));
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 400, 2);  // parallel parts: >= 256 dst nodes
  const MiniBatch serial = sampler.sample(seeds, 9);
  for (const int threads : {2, 3}) {
    ThreadPool pool(threads);
    test::expect_same_minibatch(sampler.sample(seeds, 9, &pool), serial);
  }
  // A seed's row of block 0 is the same alone as among 399 others.
  for (const std::size_t k : {std::size_t{0}, std::size_t{123}, std::size_t{399}}) {
    const std::vector<int64_t> one = {seeds[k]};
    const Block alone = sampler.sample(one, 9).blocks[0];
    const Block& all = serial.blocks[0];
    EXPECT_EQ(alone.edge_ids, std::vector<int64_t>(all.edge_ids.begin() + all.indptr[k], all.edge_ids.begin() + all.indptr[k + 1]));
    EXPECT_EQ(alone.edge_types,
              std::vector<uint8_t>(all.edge_types.begin() + all.indptr[k], all.edge_types.begin() + all.indptr[k + 1]));
  }
}

TEST(HeteroSampler, OneRelationSamplesAsTheHomogeneousGraph) {
  for (const bool replace : {false, true}) {
    for (const bool weighted : {false, true}) {
      SCOPED_TRACE(std::string(replace ? "replace" : "distinct") + (weighted ? ", weighted" : ""));
      OwnedGraph g = OwnedGraph::random(400, 8.0, 3);
      if (weighted) {
        for (int64_t e = 0; e < g.num_edges(); ++e) g.weights.push_back(static_cast<float>(e % 7));
      }
      const std::vector<int64_t> offset = {0, g.num_nodes()};
      const std::vector<graph::RelationTypes> relations = {{0, 0}};
      const std::vector<uint8_t> types(static_cast<std::size_t>(g.num_edges()), 0);
      const SampleGraph typed{g.csc(), g.weights, {offset, relations, types}};
      NeighborSamplerOptions o = hetero_options({5, -1, 2}, {}, replace);
      const NeighborSampler homogeneous(g.sample_graph(), o);
      const NeighborSampler one_relation(typed, o);
      o.fanouts.clear();
      o.relation_fanouts = {{5, -1, 2}};
      const NeighborSampler listed(typed, o);
      const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 50, 1);
      MiniBatch want = homogeneous.sample(seeds, 4);
      for (Block& b : want.blocks) {
        EXPECT_TRUE(b.edge_types.empty());
        b.edge_types.assign(static_cast<std::size_t>(b.num_edges()), 0);
      }
      test::expect_same_minibatch(one_relation.sample(seeds, 4), want);
      test::expect_same_minibatch(listed.sample(seeds, 4), want);
    }
  }
}

TEST(HeteroSampler, PicksAreUniformWithinASegment) {
  // Column 0: relation 0 at positions 0..4, relation 1 at 5..12; fanouts 0 and 2 over 8000
  // batches: relation 0 never, each of relation 1's 8 edges with probability 1/4 (7 degrees of
  // freedom: the 99.9% quantile is 24.3). Then fanouts 2 and 2: relation 0's 5 edges with
  // probability 2/5 each (4 degrees of freedom: 18.5), relation 1's unchanged by it.
  std::vector<TypedEdge> edges;
  for (int64_t u = 1; u <= 5; ++u) edges.push_back({u, 0, 0});
  for (int64_t u = 6; u <= 13; ++u) edges.push_back({u, 0, 1});
  const TypedGraph g = TypedGraph::from_edges({14}, {{0, 0}, {0, 0}}, edges);
  const NeighborSampler only_one(g.sample_graph(), hetero_options({}, {{0}, {2}}));
  const NeighborSampler both(g.sample_graph(), hetero_options({}, {{2}, {2}}));
  const std::vector<int64_t> seeds = {0};
  std::vector<int64_t> first(5, 0), second(8, 0);
  int64_t second_changed = 0;
  for (uint64_t stream = 0; stream < 8000; ++stream) {
    const Block a = only_one.sample(seeds, stream).blocks[0];
    const Block b = both.sample(seeds, stream).blocks[0];
    for (int64_t p : a.edge_ids) {
      ASSERT_GE(p, 5) << "relation 0 has fanout 0";
      ++second[p - 5];
    }
    for (int64_t p : b.edge_ids) {
      if (p < 5) ++first[p];
    }
    // Relation 1's picks do not depend on relation 0's fanout.
    if (std::vector<int64_t>(b.edge_ids.end() - 2, b.edge_ids.end()) != a.edge_ids) ++second_changed;
  }
  EXPECT_LT(test::chi_square_uniform(second), 24.3);
  EXPECT_LT(test::chi_square_uniform(first), 18.5);
  EXPECT_EQ(second_changed, 0);
}

TEST(HeteroSampler, BadFanoutsAreRefusedByName) {
  const TypedGraph g = tiny_typed();
  const auto make = [&](NeighborSamplerOptions o) { return [&g, o] { NeighborSampler(g.sample_graph(), o); }; };
  expect_invalid(make(hetero_options({2}, {{1}, {1}, {1}, {1}, {1}})), "5 lists for a graph of 4 relations");
  expect_invalid(make(hetero_options({2}, {{1}, {1}, {1}})), "3 lists for a graph of 4 relations");
  expect_invalid(make(hetero_options({2, 2}, {{1}, {}, {}, {}})), "relation_fanouts[0] has 1 hops, fanouts has 2");
  expect_invalid(make(hetero_options({}, {{1, 1}, {1}, {1, 1}, {1, 1}})),
                 "relation_fanouts[1] has 1 hops, relation_fanouts[0] has 2");
  expect_invalid(make(hetero_options({}, {{1}, {}, {1}, {1}})), "relation_fanouts[1] is empty and there are no fanouts");
  expect_invalid(make(hetero_options({2}, {{1}, {1}, {-2}, {1}})), "relation_fanouts[2][0] is -2");
  expect_invalid(make(hetero_options({}, {})), "at least one layer");
  const OwnedGraph plain = OwnedGraph::from_edges(3, {{1, 0}});
  expect_invalid([&] { NeighborSampler(plain.sample_graph(), hetero_options({2}, {{1}})); }, "the graph has no relations");
}

TEST(HeteroSampler, MalformedTypesAreRefused) {
  const TypedGraph good = tiny_typed();
  const auto check = [&](const TypedGraph& g) { return [g] { check_hetero_view(g.view(), g.graph.csc(), "typed"); }; };
  TypedGraph g = good;
  std::swap(g.type_per_edge[2], g.type_per_edge[3]);  // column 0: 0, 0, 1, 0, 1, sources unmoved
  expect_invalid(check(g), "edge 2 of relation 1 starts at node 3 of type 0, not of type 1");
  std::swap(g.graph.indices[2], g.graph.indices[3]);  // the edges moved whole: only the order is wrong
  expect_invalid(check(g), "edges of column 0 are not sorted by relation: edge 3 has relation 0 after 1");
  g = good;
  g.type_per_edge[12] = 1;  // writes (author -> paper) ending at author 6
  expect_invalid(check(g), "edge 12 of relation 1 ends at node 6 of type 1");
  g = good;
  g.type_per_edge[12] = 9;
  expect_invalid(check(g), "relation 9 of edge 12 (column 6) is out of range [0, 4)");
  g = good;
  g.type_per_edge.pop_back();
  expect_invalid(check(g), "type_per_edge has 12 entries for 13 edges");
  g = good;
  g.node_type_offset.back() = 6;
  expect_invalid(check(g), "must run from 0 to the 7 nodes");
  g = good;
  g.relations[3].src_type = 3;
  expect_invalid(check(g), "relation 3 goes from type 3 to type 1, outside the 3 node types");
  // The sampler checks the graph it is given.
  g = good;
  std::swap(g.type_per_edge[2], g.type_per_edge[3]);
  std::swap(g.graph.indices[2], g.graph.indices[3]);
  expect_invalid([&] { NeighborSampler(g.sample_graph(), hetero_options({2}, {})); }, "not sorted by relation");
}

TEST(HeteroSampler, TypedInvariantsOfABatchAreChecked) {
  const TypedGraph g = tiny_typed();
  const NeighborSampler sampler(g.sample_graph(), hetero_options({-1, -1}, {}));
  const std::vector<int64_t> seeds = {0, 4};
  const MiniBatch good = sampler.sample(seeds, 0);
  check_minibatch(good, g.num_nodes(), g.num_edges(), g.view());
  MiniBatch b = good;
  b.blocks[0].edge_types[0] = 2;  // written_by (paper -> author) into paper 0
  expect_invalid([&] { check_minibatch(b, g.num_nodes(), g.num_edges(), g.view()); }, "goes from a node of type 0 to one of type 0");
  expect_invalid([&] { split_block(b.blocks[0], g.view()); }, "goes from type 0 to type 0");
  b = good;
  b.blocks[1].edge_types.clear();
  check_minibatch(b, g.num_nodes(), g.num_edges());  // untyped: no edge types is fine
  expect_invalid([&] { check_minibatch(b, g.num_nodes(), g.num_edges(), g.view()); }, "one edge type per edge");
  expect_invalid([&] { split_block(b.blocks[1], g.view()); }, "0 edge types for");
}

TEST(HeteroSampler, SplitBlocksChainByTypeAcrossLayers) {
  const TypedGraph g = random_typed_graph(13);
  const NeighborSampler sampler(g.sample_graph(), hetero_options({4, 3, 2}, {}));
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 30, 6);
  const MiniBatch b = sampler.sample(seeds, 2);
  std::vector<HeteroBlock> split;
  for (const Block& block : b.blocks) split.push_back(split_block(block, g.view()));
  const graph::HeteroView view = g.view();
  for (std::size_t l = 0; l < split.size(); ++l) {
    const HeteroBlock& h = split[l];
    ASSERT_EQ(h.src_nodes.size(), 4u);
    ASSERT_EQ(h.relations.size(), g.relations.size());
    int64_t edges = 0;
    for (std::size_t r = 0; r < h.relations.size(); ++r) {
      const RelationBlock& rb = h.relations[r];
      const graph::RelationTypes rel = g.relations[r];
      ASSERT_EQ(static_cast<int64_t>(rb.indptr.size()), h.num_dst[rel.dst_type] + 1);
      for (int64_t j = 0; j < h.num_dst[rel.dst_type]; ++j) {
        for (int64_t k = rb.indptr[j]; k < rb.indptr[j + 1]; ++k) {
          const int64_t e = rb.block_edges[k];
          // The edge of the block it came from, in type-local positions.
          EXPECT_EQ(b.blocks[l].edge_types[e], r);
          EXPECT_EQ(h.src_nodes[rel.src_type][rb.indices[k]], b.blocks[l].src_nodes[b.blocks[l].indices[e]]);
          EXPECT_EQ(g.graph.indices[b.blocks[l].edge_ids[e]], h.src_nodes[rel.src_type][rb.indices[k]]);
          const int64_t dst = h.src_nodes[rel.dst_type][j];
          EXPECT_TRUE(b.blocks[l].edge_ids[e] >= g.graph.indptr[dst] && b.blocks[l].edge_ids[e] < g.graph.indptr[dst + 1]);
        }
      }
      edges += rb.num_edges();
    }
    EXPECT_EQ(edges, b.blocks[l].num_edges());
    for (int t = 0; t < 4; ++t) {
      for (int64_t v : h.src_nodes[t]) EXPECT_TRUE(v >= view.node_type_offset[t] && v < view.node_type_offset[t + 1]);
      // Block l's dst nodes of type t are block l-1's src nodes of type t (the seeds' for l = 0).
      std::vector<int64_t> want;
      for (int64_t v : l == 0 ? b.seeds : b.blocks[l - 1].src_nodes) {
        if (v >= view.node_type_offset[t] && v < view.node_type_offset[t + 1]) want.push_back(v);
      }
      EXPECT_EQ(std::vector<int64_t>(h.src_nodes[t].begin(), h.src_nodes[t].begin() + h.num_dst[t]), want);
    }
  }
}

TEST(HeteroSampler, ReachedThroughMakeSampler) {
  const TypedGraph g = random_typed_graph(4);
  SamplerSpec spec;
  spec.fanouts = {3, 2};
  spec.relation_fanouts = {{3, 2}, {-1, 1}, {2, 0}, {0, 5}, {4, -1}, {}, {1, 30}};
  spec.seed = 11;
  const auto sampler = make_sampler(spec, g.sample_graph());
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 25, 3);
  test::expect_same_minibatch(sampler->sample(seeds, 6),
                              test::reference_sample(g, seeds, neighbor_options(spec), 6));
  SamplerSpec bulk = spec;
  bulk.bulk = true;
  expect_invalid([&] { make_sampler(bulk, g.sample_graph()); }, "sampled per relation by the neighbor method");
  SamplerSpec ladies = spec;
  ladies.kind = SamplerKind::kLadies;
  expect_invalid([&] { layer_options(ladies); }, "relation_fanouts: the ladies sampler has no per-relation fanouts");
  expect_invalid([&] { bulk_options(bulk); }, "relation_fanouts: the bulk sampler");
  ladies.relation_fanouts.clear();
  expect_invalid([&] { make_sampler(ladies, g.sample_graph()); }, "not ladies");
  // On the GPU the neighbour sampler takes a typed graph (cuda_hetero_sampler_test.cpp) from a
  // DeviceTopology; the bulk one is refused before any device is touched, in every build.
  expect_invalid([&] { make_sampler(spec, g.sample_graph(), {.device = 0}); }, "none was given");
  expect_invalid([&] { make_sampler(bulk, g.sample_graph(), {.device = 0}); }, "sampled per relation by the neighbor method");
}

}  // namespace
}  // namespace graphtier::sample
