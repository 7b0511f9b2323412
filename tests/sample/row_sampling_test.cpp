// Sampling on fetched rows: chaining extract_rows and sample_*_layer over the layers gives the
// single-process samplers' MiniBatch (NeighborSampler, LayerSampler, BulkSampler), bit for bit,
// whether the rows come from the whole CSC or from block rows of it (the graph-partitioned
// distributed mode).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "graphtier/core/error.hpp"
#include "graphtier/sample/bulk_sampler.hpp"
#include "graphtier/sample/epoch.hpp"
#include "graphtier/sample/layer_sampler.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"
#include "graphtier/sample/random.hpp"
#include "graphtier/sample/row_sampling.hpp"
#include "sample_test_util.hpp"

namespace graphtier::sample {
namespace {

using test::OwnedGraph;

/// Heavy-tailed in-degrees with multi-edges (neighbours drawn with repeats, some doubled on
/// purpose), stored self-loops, and isolated nodes (every 9th node has no in-edge, and nodes past
/// 90% of the ids are never anyone's neighbour).
OwnedGraph random_graph(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> tail(1.0);
  std::uniform_int_distribution<int64_t> node(0, n * 9 / 10 - 1);
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t v = 0; v < n; ++v) {
    if (v % 9 == 0 || v >= n * 9 / 10) continue;
    const double x = tail(rng);
    const auto degree = static_cast<int64_t>(4.0 * x * x);
    for (int64_t k = 0; k < degree; ++k) {
      const int64_t u = node(rng);
      edges.emplace_back(u, v);
      if (k % 5 == 1) edges.emplace_back(u, v);  // a parallel edge
    }
    if (v % 4 == 0) edges.emplace_back(v, v);  // a stored self-loop
  }
  return OwnedGraph::from_edges(n, edges);
}

/// The graph split into block rows at `bounds`: block i keeps the in-edges of [bounds[i],
/// bounds[i + 1]) (the rest have none), as a rank of the partitioned mode stores it.
struct BlockRows {
  std::vector<std::vector<int64_t>> indptr;
  std::vector<std::vector<int32_t>> indices;
  std::vector<int64_t> bounds;
  std::vector<int64_t> edge_offsets;

  BlockRows(const OwnedGraph& g, std::vector<int64_t> bounds_) : bounds(std::move(bounds_)) {
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
      const int64_t lo = bounds[i], hi = bounds[i + 1];
      std::vector<int64_t> ip(g.indptr.size(), 0);
      for (int64_t v = 0; v < g.num_nodes(); ++v) {
        const int64_t d = v >= lo && v < hi ? g.indptr[v + 1] - g.indptr[v] : 0;
        ip[v + 1] = ip[v] + d;
      }
      indptr.push_back(std::move(ip));
      indices.emplace_back(g.indices.begin() + g.indptr[lo], g.indices.begin() + g.indptr[hi]);
      edge_offsets.push_back(g.indptr[lo]);
    }
  }
  graph::CscView csc(std::size_t i) const { return {indptr[i], std::span<const int32_t>(indices[i])}; }
};

void append(NeighborRows& to, const NeighborRows& from) {
  const int64_t base = to.indptr.empty() ? 0 : to.indptr.back();
  if (to.indptr.empty()) to.indptr.push_back(0);
  to.nodes.insert(to.nodes.end(), from.nodes.begin(), from.nodes.end());
  for (std::size_t k = 1; k < from.indptr.size(); ++k) to.indptr.push_back(base + from.indptr[k]);
  to.indices.insert(to.indices.end(), from.indices.begin(), from.indices.end());
  to.first_edge.insert(to.first_edge.end(), from.first_edge.begin(), from.first_edge.end());
}

/// The rows of `dst` plus some other nodes (a bulk union holds other batches' frontiers), each
/// fetched from its owner's block row, owners in reverse order: any order must do.
NeighborRows fetch(const BlockRows& blocks, std::span<const int64_t> dst, uint64_t seed) {
  std::vector<int64_t> wanted(dst.begin(), dst.end());
  const int64_t n = blocks.bounds.back();
  std::mt19937_64 rng(seed);
  for (int k = 0; k < 5; ++k) wanted.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(n)));
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  NeighborRows rows;
  for (std::size_t i = blocks.edge_offsets.size(); i-- > 0;) {
    std::vector<int64_t> mine;
    for (const int64_t v : wanted) {
      if (v >= blocks.bounds[i] && v < blocks.bounds[i + 1]) mine.push_back(v);
    }
    std::shuffle(mine.begin(), mine.end(), rng);
    append(rows, extract_rows(blocks.csc(i), mine, blocks.edge_offsets[i]));
  }
  if (rows.indptr.empty()) rows.indptr.push_back(0);
  return rows;
}

constexpr int64_t kNodes = 600;

std::vector<int64_t> seeds_of(int64_t epoch, int64_t b, int64_t batch_size) {
  std::vector<int64_t> ids(kNodes);
  std::iota(ids.begin(), ids.end(), 0);
  const std::vector<int64_t> order = shuffled_ids(ids, 3, static_cast<uint64_t>(epoch));
  const auto s = batch_seeds(order, batch_size, b);
  return {s.begin(), s.end()};
}

TEST(RowSampling, NeighborLayersOnFetchedRowsEqualNeighborSampler) {
  const OwnedGraph g = random_graph(kNodes, 11);
  const BlockRows blocks(g, {0, 150, 151, 420, kNodes});  // uneven, one block of a single node
  ThreadPool pool(3);
  for (const bool replace : {false, true}) {
    for (const auto& fanouts : std::vector<std::vector<int64_t>>{{5, 3}, {-1, 2, 0}, {0, 4}, {2, -1, 3}, {25, 25}}) {
      NeighborSamplerOptions o;
      o.fanouts = fanouts;
      o.replace = replace;
      o.seed = 42;
      const NeighborSampler sampler(g.sample_graph(), o);
      for (int64_t b = 0; b < 4; ++b) {
        SCOPED_TRACE("replace " + std::to_string(replace) + " batch " + std::to_string(b) + " fanouts[0] " +
                     std::to_string(fanouts[0]));
        const uint64_t stream = minibatch_stream(2, b);
        const std::vector<int64_t> seeds = b == 3 ? seeds_of(2, 1, 300) : seeds_of(2, b, 37);  // 300: parallel parts
        const MiniBatch want = sampler.sample(seeds, stream, &pool);
        MiniBatch got;
        got.seeds = seeds;
        std::vector<int64_t> dst = seeds;
        for (std::size_t l = 0; l < fanouts.size(); ++l) {
          const NeighborRows rows = fetch(blocks, dst, b * 10 + l);
          const uint64_t ls = layer_stream(stream, static_cast<int>(l));
          got.blocks.push_back(sample_neighbor_layer(rows, dst, fanouts[l], replace, true, o.seed, ls,
                                                     b % 2 ? &pool : nullptr));
          dst = got.blocks.back().src_nodes;
        }
        test::expect_same_minibatch(got, want);
      }
    }
  }
}

/// One layer of k batches drawn by the owners (draw_rows, or draw_bulk_rows with `bulk`, on each
/// block row, the requests of every batch sent to their owner in shuffled order, batch by batch)
/// and assembled by the requester.
std::vector<Block> owner_drawn_layer(const BlockRows& blocks, const std::vector<std::vector<int64_t>>& dsts,
                                     const std::vector<uint64_t>& layer_streams, int64_t fanout, bool replace,
                                     uint64_t seed, uint64_t shuffle_seed, ThreadPool* pool, bool bulk = false) {
  std::mt19937_64 rng(shuffle_seed);
  std::vector<int64_t> req_nodes, req_batches;
  RowDraws all;
  for (std::size_t o = blocks.edge_offsets.size(); o-- > 0;) {
    std::vector<int64_t> nodes, sizes;
    for (std::size_t b = 0; b < dsts.size(); ++b) {
      std::vector<int64_t> mine;
      for (const int64_t v : dsts[b]) {
        if (v >= blocks.bounds[o] && v < blocks.bounds[o + 1]) mine.push_back(v);
      }
      std::shuffle(mine.begin(), mine.end(), rng);
      nodes.insert(nodes.end(), mine.begin(), mine.end());
      sizes.push_back(static_cast<int64_t>(mine.size()));
      req_batches.insert(req_batches.end(), mine.size(), static_cast<int64_t>(b));
    }
    req_nodes.insert(req_nodes.end(), nodes.begin(), nodes.end());
    const auto draw = bulk ? draw_bulk_rows : draw_rows;
    const RowDraws d = draw(blocks.csc(o), blocks.edge_offsets[o], nodes, sizes, layer_streams, fanout, replace, seed,
                            pool);
    all.counts.insert(all.counts.end(), d.counts.begin(), d.counts.end());
    all.neighbors.insert(all.neighbors.end(), d.neighbors.begin(), d.neighbors.end());
    all.edge_ids.insert(all.edge_ids.end(), d.edge_ids.begin(), d.edge_ids.end());
  }
  const std::vector<std::span<const int64_t>> spans(dsts.begin(), dsts.end());
  return neighbor_blocks_of_draws(spans, req_nodes, req_batches, all, true);
}

/// The minibatches of `seeds` (batch k drawn from minibatch stream streams[k]) with every layer
/// drawn by the owners (owner_drawn_layer, the pool on odd layers), as the samplers would.
std::vector<MiniBatch> owner_drawn_batches(const BlockRows& blocks, const std::vector<std::vector<int64_t>>& seeds,
                                           const std::vector<uint64_t>& streams, const std::vector<int64_t>& fanouts,
                                           bool replace, uint64_t seed, ThreadPool* pool, bool bulk) {
  std::vector<MiniBatch> got(seeds.size());
  std::vector<std::vector<int64_t>> dsts = seeds;
  for (std::size_t k = 0; k < seeds.size(); ++k) got[k].seeds = seeds[k];
  for (std::size_t l = 0; l < fanouts.size(); ++l) {
    std::vector<uint64_t> layer_streams;
    for (const uint64_t s : streams) layer_streams.push_back(layer_stream(s, static_cast<int>(l)));
    std::vector<Block> layer = owner_drawn_layer(blocks, dsts, layer_streams, fanouts[l], replace, seed, 7 + l,
                                                 l % 2 ? pool : nullptr, bulk);
    for (std::size_t k = 0; k < seeds.size(); ++k) {
      dsts[k] = layer[k].src_nodes;
      got[k].blocks.push_back(std::move(layer[k]));
    }
  }
  return got;
}

TEST(RowSampling, NeighborLayersDrawnByOwnersEqualNeighborSampler) {
  const OwnedGraph g = random_graph(kNodes, 13);
  const BlockRows blocks(g, {0, 150, 151, 420, kNodes});
  ThreadPool pool(3);
  for (const bool replace : {false, true}) {
    for (const auto& fanouts : std::vector<std::vector<int64_t>>{{5, 3}, {-1, 2, 0}, {0, 4}, {25, 25}}) {
      NeighborSamplerOptions o;
      o.fanouts = fanouts;
      o.replace = replace;
      o.seed = 42;
      const NeighborSampler sampler(g.sample_graph(), o);
      // Three batches per exchange, one of 300 seeds (parallel parts); batches share nodes.
      const std::vector<int64_t> ids{0, 1, 5};
      std::vector<MiniBatch> want;
      std::vector<std::vector<int64_t>> seeds;
      std::vector<uint64_t> streams;
      for (const int64_t b : ids) {
        seeds.push_back(b == 5 ? seeds_of(2, 1, 300) : seeds_of(2, b, 37));
        streams.push_back(minibatch_stream(2, b));
        want.push_back(sampler.sample(seeds.back(), streams.back(), &pool));
      }
      const std::vector<MiniBatch> got = owner_drawn_batches(blocks, seeds, streams, fanouts, replace, o.seed, &pool,
                                                             /*bulk=*/false);
      for (std::size_t k = 0; k < ids.size(); ++k) {
        SCOPED_TRACE("replace " + std::to_string(replace) + " batch " + std::to_string(ids[k]) + " fanouts[0] " +
                     std::to_string(fanouts[0]));
        test::expect_same_minibatch(got[k], want[k]);
      }
    }
  }
}

TEST(RowSampling, OwnerDrawsRejectBadRequests) {
  const OwnedGraph g = random_graph(kNodes, 13);
  const BlockRows blocks(g, {0, 300, kNodes});
  const std::vector<int64_t> nodes{1, 2, 3};
  const std::vector<uint64_t> one{7}, two{7, 8};
  const std::vector<int64_t> all{3};
  EXPECT_THROW(draw_rows(blocks.csc(0), 0, nodes, all, two, 2, false, 1), InvalidArgument);
  EXPECT_THROW(draw_rows(blocks.csc(0), 0, nodes, std::vector<int64_t>{2}, one, 2, false, 1), InvalidArgument);
  EXPECT_THROW(draw_rows(blocks.csc(0), 0, std::vector<int64_t>{1, 2, kNodes}, all, one, 2, false, 1), OutOfRange);
  EXPECT_THROW(draw_rows(blocks.csc(0), 0, nodes, all, one, -2, false, 1), InvalidArgument);
  const RowDraws d = draw_rows(blocks.csc(0), 0, nodes, all, one, 2, false, 1);
  const std::vector<int64_t> batch0{0, 0, 0};
  const std::vector<int64_t> dst{1, 2, 3}, missing{1, 2, 4}, repeated{1, 2, 2};
  const std::vector<std::span<const int64_t>> ok{dst}, no_row{missing}, twice{repeated};
  EXPECT_EQ(neighbor_blocks_of_draws(ok, nodes, batch0, d, true).size(), 1u);
  EXPECT_THROW(neighbor_blocks_of_draws(no_row, nodes, batch0, d, true), InvalidArgument);
  EXPECT_THROW(neighbor_blocks_of_draws(twice, nodes, batch0, d, true), InvalidArgument);
  EXPECT_THROW(neighbor_blocks_of_draws(ok, nodes, std::vector<int64_t>{0, 0, 1}, d, true), InvalidArgument);
  EXPECT_THROW(neighbor_blocks_of_draws(ok, std::vector<int64_t>{1, 1, 3}, batch0, d, true), InvalidArgument);
}

TEST(RowSampling, LadiesLayersOnFetchedRowsEqualLayerSampler) {
  const OwnedGraph g = random_graph(kNodes, 12);
  const BlockRows blocks(g, {0, 200, 380, kNodes});
  ThreadPool pool(3);
  for (const auto& sizes : std::vector<std::vector<int64_t>>{{20, 20}, {-1, 5}, {0, 30}, {7, 0, -1}, {1000, 3}}) {
    LayerSamplerOptions o;
    o.layer_sizes = sizes;
    o.method = LayerMethod::kLadies;
    o.seed = 9;
    const LayerSampler sampler(g.sample_graph(), o);
    for (int64_t b = 0; b < 3; ++b) {
      SCOPED_TRACE("batch " + std::to_string(b) + " sizes[0] " + std::to_string(sizes[0]));
      const uint64_t stream = minibatch_stream(1, b);
      const std::vector<int64_t> seeds = b == 2 ? seeds_of(1, 1, 300) : seeds_of(1, b, 25);
      const MiniBatch want = sampler.sample(seeds, stream, &pool);
      MiniBatch got;
      got.seeds = seeds;
      std::vector<int64_t> dst = seeds;
      for (std::size_t l = 0; l < sizes.size(); ++l) {
        const NeighborRows rows = fetch(blocks, dst, b * 10 + l);
        got.blocks.push_back(sample_ladies_layer(rows, dst, sizes[l], o.seed, layer_stream(stream, static_cast<int>(l)),
                                                 b % 2 ? &pool : nullptr));
        dst = got.blocks.back().src_nodes;
      }
      test::expect_same_minibatch(got, want);
    }
  }
}

/// Chains sample_bulk_layer over the layers for the batches `seeds` (streams[b] each), the rows of
/// each layer fetched once for the union of the batches' frontiers, as BulkSampler::sample would
/// sample them.
std::vector<MiniBatch> bulk_on_fetched_rows(const BlockRows& blocks, const std::vector<std::vector<int64_t>>& seeds,
                                            const std::vector<uint64_t>& streams, const BulkSamplerOptions& o,
                                            ThreadPool* pool) {
  std::vector<MiniBatch> got(seeds.size());
  for (std::size_t b = 0; b < seeds.size(); ++b) got[b].seeds = seeds[b];
  for (std::size_t l = 0; l < o.fanouts.size(); ++l) {
    std::vector<std::span<const int64_t>> dsts;
    std::vector<int64_t> all;
    for (const MiniBatch& batch : got) {
      const std::vector<int64_t>& dst = l == 0 ? batch.seeds : batch.blocks[l - 1].src_nodes;
      dsts.emplace_back(dst);
      all.insert(all.end(), dsts.back().begin(), dsts.back().end());
    }
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    const NeighborRows rows = fetch(blocks, all, 100 + l);
    std::vector<Block> layer = sample_bulk_layer(rows, dsts, streams, o, static_cast<int>(l), pool);
    EXPECT_EQ(layer.size(), seeds.size());
    for (std::size_t b = 0; b < seeds.size(); ++b) got[b].blocks.push_back(std::move(layer[b]));
  }
  return got;
}

TEST(RowSampling, BulkLayersOnFetchedRowsEqualBulkSampler) {
  const OwnedGraph g = random_graph(kNodes, 15);
  const BlockRows blocks(g, {0, 150, 151, 420, kNodes});
  ThreadPool pool(3);
  struct Case {
    BulkAlgorithm algorithm;
    bool replace;
    std::vector<int64_t> fanouts;
  };
  const std::vector<Case> cases = {
      {BulkAlgorithm::kGraphSage, false, {5, 3}},      {BulkAlgorithm::kGraphSage, false, {-1, 2, 0}},
      {BulkAlgorithm::kGraphSage, true, {5, 3}},       {BulkAlgorithm::kGraphSage, true, {0, 4}},
      {BulkAlgorithm::kGraphSage, true, {2, -1, 3}},   {BulkAlgorithm::kGraphSage, false, {25, 25}},
      {BulkAlgorithm::kLadies, false, {20, 20}},       {BulkAlgorithm::kLadies, false, {0, 30}},
      {BulkAlgorithm::kLadies, false, {7, 0, 1000}},   {BulkAlgorithm::kLadies, false, {1000, 3}},
  };
  for (const Case& c : cases) {
    BulkSamplerOptions o;
    o.algorithm = c.algorithm;
    o.fanouts = c.fanouts;
    o.replace = c.replace;
    o.seed = 42;
    const BulkSampler sampler(g.sample_graph(), o, &pool);
    // Three batches of epoch 2 that are not consecutive (every 4th, as a rank of 4 takes them),
    // one of 300 seeds so that the pool splits the rows.
    std::vector<std::vector<int64_t>> seeds;
    std::vector<uint64_t> streams;
    for (const int64_t b : {1, 5, 9}) {
      seeds.push_back(b == 5 ? seeds_of(2, 0, 300) : seeds_of(2, b, 37));
      streams.push_back(minibatch_stream(2, b));
    }
    std::vector<std::span<const int64_t>> spans(seeds.begin(), seeds.end());
    const std::vector<MiniBatch> want = sampler.sample(spans, streams, &pool);
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      const std::vector<MiniBatch> got = bulk_on_fetched_rows(blocks, seeds, streams, o, p);
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t b = 0; b < want.size(); ++b) {
        SCOPED_TRACE((c.algorithm == BulkAlgorithm::kLadies ? "LADIES" : "GraphSAGE") + std::string(" replace ") +
                     std::to_string(c.replace) + " fanouts[0] " + std::to_string(c.fanouts[0]) + " batch " +
                     std::to_string(b) + (p ? " pool" : ""));
        test::expect_same_minibatch(got[b], want[b]);
      }
    }
    // One batch alone gives that batch's blocks too (a batch does not depend on the others).
    const std::vector<MiniBatch> alone = bulk_on_fetched_rows(blocks, {seeds[1]}, {streams[1]}, o, nullptr);
    test::expect_same_minibatch(alone[0], want[1]);
  }
}

TEST(RowSampling, BulkGraphSageLayersDrawnByOwnersEqualBulkSampler) {
  const OwnedGraph g = random_graph(kNodes, 15);
  const BlockRows blocks(g, {0, 150, 151, 420, kNodes});
  ThreadPool pool(3);
  for (const bool replace : {false, true}) {
    for (const auto& fanouts : std::vector<std::vector<int64_t>>{{5, 3}, {-1, 2, 0}, {0, 4}, {25, 25}}) {
      BulkSamplerOptions o;
      o.fanouts = fanouts;
      o.replace = replace;
      o.seed = 42;
      const BulkSampler sampler(g.sample_graph(), o, &pool);
      // Three batches of epoch 2, not consecutive, one of 300 seeds; batches share nodes, so one
      // owner gets one node's requests in several segments.
      std::vector<std::vector<int64_t>> seeds;
      std::vector<uint64_t> streams;
      for (const int64_t b : {1, 5, 9}) {
        seeds.push_back(b == 5 ? seeds_of(2, 0, 300) : seeds_of(2, b, 37));
        streams.push_back(minibatch_stream(2, b));
      }
      const std::vector<std::span<const int64_t>> spans(seeds.begin(), seeds.end());
      const std::vector<MiniBatch> want = sampler.sample(spans, streams, &pool);
      const std::vector<MiniBatch> got = owner_drawn_batches(blocks, seeds, streams, fanouts, replace, o.seed, &pool,
                                                             /*bulk=*/true);
      for (std::size_t k = 0; k < got.size(); ++k) {
        SCOPED_TRACE("replace " + std::to_string(replace) + " batch " + std::to_string(k) + " fanouts[0] " +
                     std::to_string(fanouts[0]));
        test::expect_same_minibatch(got[k], want[k]);
      }
    }
  }
  // The bulk draws are not NeighborSampler's: the owners must draw by the bulk rule.
  const std::vector<std::vector<int64_t>> dsts{seeds_of(2, 1, 37)};
  const std::vector<uint64_t> one{layer_stream(minibatch_stream(2, 1), 0)};
  EXPECT_NE(owner_drawn_layer(blocks, dsts, one, 5, false, 42, 3, nullptr, true)[0].indices,
            owner_drawn_layer(blocks, dsts, one, 5, false, 42, 3, nullptr, false)[0].indices);
}

TEST(RowSampling, BulkOwnerDrawsRejectBadRequests) {
  const OwnedGraph g = random_graph(kNodes, 13);
  const BlockRows blocks(g, {0, 300, kNodes});
  const std::vector<int64_t> nodes{1, 2, 3};
  const std::vector<uint64_t> one{7}, two{7, 8};
  const std::vector<int64_t> all{3};
  EXPECT_THROW(draw_bulk_rows(blocks.csc(0), 0, nodes, all, two, 2, false, 1), InvalidArgument);
  EXPECT_THROW(draw_bulk_rows(blocks.csc(0), 0, nodes, std::vector<int64_t>{2}, one, 2, false, 1), InvalidArgument);
  EXPECT_THROW(draw_bulk_rows(blocks.csc(0), 0, std::vector<int64_t>{1, 2, kNodes}, all, one, 2, false, 1),
               OutOfRange);
  EXPECT_THROW(draw_bulk_rows(blocks.csc(0), 0, nodes, all, one, -2, false, 1), InvalidArgument);
  EXPECT_THROW(draw_bulk_rows(blocks.csc(0), -1, nodes, all, one, 2, false, 1), InvalidArgument);
  // A node asked for twice in one segment is drawn twice alike (its requests share the row).
  const RowDraws d = draw_bulk_rows(blocks.csc(0), 0, std::vector<int64_t>{4, 4}, std::vector<int64_t>{2}, one, 3,
                                    false, 1);
  ASSERT_EQ(d.counts.size(), 2u);
  EXPECT_EQ(d.counts[0], d.counts[1]);
  const auto half = static_cast<std::ptrdiff_t>(d.counts[0]);
  EXPECT_TRUE(std::equal(d.neighbors.begin(), d.neighbors.begin() + half, d.neighbors.begin() + half));
}

TEST(RowSampling, BulkLayerRejectsMissingRowsAndBadInput) {
  const OwnedGraph g = random_graph(kNodes, 14);
  const std::vector<int64_t> nodes = {5, 17, 33};
  const NeighborRows rows = extract_rows(g.csc(), nodes, 0);
  BulkSamplerOptions o;
  o.fanouts = {3, 2};
  const std::vector<int64_t> ok = {17, 5}, missing = {33, 34};
  const std::vector<std::span<const int64_t>> dsts = {ok, missing};
  const std::vector<uint64_t> streams = {1, 2};
  try {
    sample_bulk_layer(rows, dsts, streams, o, 0);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("dst node 34"), std::string::npos) << e.what();
  }
  const std::vector<std::span<const int64_t>> good = {ok, nodes};
  EXPECT_EQ(sample_bulk_layer(rows, good, streams, o, 1).size(), 2u);
  EXPECT_THROW(sample_bulk_layer(rows, good, streams, o, 2), InvalidArgument);
  EXPECT_THROW(sample_bulk_layer(rows, good, std::vector<uint64_t>{1}, o, 0), InvalidArgument);
  o.algorithm = BulkAlgorithm::kLadies;
  o.replace = true;
  EXPECT_THROW(sample_bulk_layer(rows, good, streams, o, 0), InvalidArgument);
  o.replace = false;
  o.fanouts = {-1};
  EXPECT_THROW(sample_bulk_layer(rows, good, streams, o, 0), InvalidArgument);
  // No batch at all: no block.
  o.fanouts = {3};
  EXPECT_TRUE(sample_bulk_layer(rows, {}, {}, o, 0).empty());
}

TEST(RowSampling, ExtractRowsFromABlockRowGivesTheGlobalRows) {
  const OwnedGraph g = random_graph(kNodes, 13);
  const BlockRows blocks(g, {0, 250, kNodes});
  std::vector<int64_t> nodes;
  for (int64_t v = 249; v >= 0; v -= 7) nodes.push_back(v);
  nodes.push_back(0);  // isolated (no in-edge)
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  const NeighborRows want = extract_rows(g.csc(), nodes, 0);
  const NeighborRows got = extract_rows(blocks.csc(0), nodes, blocks.edge_offsets[0]);
  EXPECT_EQ(got.nodes, want.nodes);
  EXPECT_EQ(got.indptr, want.indptr);
  EXPECT_EQ(got.indices, want.indices);
  EXPECT_EQ(got.first_edge, want.first_edge);
  // And the second block, with a nonzero offset, and int64 indices on the global side.
  const std::vector<int64_t> wide(g.indices.begin(), g.indices.end());
  const graph::CscView global64{g.indptr, std::span<const int64_t>(wide)};
  const std::vector<int64_t> upper = {599, 250, 400, 431};
  const NeighborRows a = extract_rows(blocks.csc(1), upper, blocks.edge_offsets[1]);
  const NeighborRows b = extract_rows(global64, upper, 0);
  ASSERT_GT(blocks.edge_offsets[1], 0);
  EXPECT_EQ(a.indptr, b.indptr);
  EXPECT_EQ(a.indices, b.indices);
  EXPECT_EQ(a.first_edge, b.first_edge);
  for (std::size_t k = 0; k < upper.size(); ++k) {
    const int64_t v = upper[k];
    EXPECT_EQ(b.first_edge[k], g.indptr[v]);
    ASSERT_EQ(b.indptr[k + 1] - b.indptr[k], g.indptr[v + 1] - g.indptr[v]);
    for (int64_t p = 0; p < g.indptr[v + 1] - g.indptr[v]; ++p) {
      EXPECT_EQ(b.indices[b.indptr[k] + p], g.indices[g.indptr[v] + p]);
    }
  }
}

TEST(RowSampling, RejectsMissingRowsAndBadInput) {
  const OwnedGraph g = random_graph(kNodes, 14);
  const std::vector<int64_t> nodes = {5, 17, 33};
  const NeighborRows rows = extract_rows(g.csc(), nodes, 0);
  const std::vector<int64_t> dst = {17, 34, 5};
  try {
    sample_neighbor_layer(rows, dst, 3, false, true, 1, 2);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("dst node 34"), std::string::npos) << e.what();
  }
  EXPECT_THROW(sample_ladies_layer(rows, dst, 3, 1, 2), InvalidArgument);
  EXPECT_THROW(sample_neighbor_layer(rows, std::vector<int64_t>{5, 17, 5}, 3, false, true, 1, 2), InvalidArgument);
  EXPECT_THROW(sample_neighbor_layer(rows, nodes, -2, false, true, 1, 2), InvalidArgument);
  EXPECT_THROW(sample_ladies_layer(rows, nodes, kMaxDraws, 1, 2), InvalidArgument);
  NeighborRows twice = rows;
  append(twice, extract_rows(g.csc(), std::vector<int64_t>{17}, 0));
  EXPECT_THROW(sample_neighbor_layer(twice, nodes, 3, false, true, 1, 2), InvalidArgument);
  NeighborRows short_indptr = rows;
  short_indptr.indptr.pop_back();
  EXPECT_THROW(sample_ladies_layer(short_indptr, nodes, 3, 1, 2), InvalidArgument);
  EXPECT_THROW(extract_rows(g.csc(), std::vector<int64_t>{3, kNodes}, 0), OutOfRange);
  EXPECT_THROW(extract_rows(g.csc(), std::vector<int64_t>{3, 3}, 0), InvalidArgument);
  // No dst at all: an empty block.
  const Block empty = sample_neighbor_layer(rows, {}, 3, false, true, 1, 2);
  EXPECT_EQ(empty.num_dst, 0);
  EXPECT_EQ(empty.indptr, std::vector<int64_t>{0});
}

}  // namespace
}  // namespace graphtier::sample
