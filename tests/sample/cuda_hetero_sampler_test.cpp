// Typed (per-relation) neighbour sampling on the GPU: the CUDA MiniBatch equals the CPU
// NeighborSampler's field by field (positions, edge types, src node order) for every placement,
// draw mode and index width, hub segments included, and split_block of it equals the CPU's; one
// host wait per minibatch. Without a GPU every test skips visibly.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/sample/cuda_neighbor_sampler.hpp"
#include "graphtier/sample/hetero_block.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"
#include "graphtier/sample/sampler.hpp"
#include "sample_test_util.hpp"

namespace graphtier::sample {
namespace {

using test::TypedEdge;
using test::TypedGraph;

// Type 2 is empty; relation 5 has no edges; types 0 and 1 cite themselves (hetero_sampler_test's shape).
TypedGraph random_typed(uint64_t seed) {
  return TypedGraph::random({300, 200, 0, 50}, {{0, 0}, {1, 0}, {0, 1}, {3, 1}, {1, 3}, {2, 1}, {1, 1}}, 5.0, seed);
}

/// The graph with int64 indices.
struct Typed64 {
  std::vector<int64_t> indices;
  SampleGraph of(const TypedGraph& g) {
    indices.assign(g.graph.indices.begin(), g.graph.indices.end());
    return {{g.graph.indptr, graph::IndexSpan(std::span<const int64_t>(indices))}, g.graph.weights, g.view()};
  }
};

void add_weights(TypedGraph& g, uint64_t seed) {
  std::mt19937_64 rng(seed);
  g.graph.weights.clear();
  for (int64_t e = 0; e < g.num_edges(); ++e) g.graph.weights.push_back(rng() % 5 == 0 ? 0.0f : 0.5f + rng() % 7);
}

NeighborSamplerOptions typed_options(std::vector<int64_t> fanouts, std::vector<std::vector<int64_t>> relation_fanouts,
                                     bool replace) {
  NeighborSamplerOptions o;
  o.fanouts = std::move(fanouts);
  o.relation_fanouts = std::move(relation_fanouts);
  o.replace = replace;
  o.edge_ids = true;
  o.seed = 11;
  return o;
}

void expect_same_split(const MiniBatch& gpu, const MiniBatch& cpu, const graph::HeteroView& view) {
  for (std::size_t l = 0; l < cpu.blocks.size(); ++l) {
    const HeteroBlock a = split_block(gpu.blocks[l], view);
    const HeteroBlock b = split_block(cpu.blocks[l], view);
    EXPECT_EQ(a.num_dst, b.num_dst);
    EXPECT_EQ(a.src_nodes, b.src_nodes);
    ASSERT_EQ(a.relations.size(), b.relations.size());
    for (std::size_t r = 0; r < b.relations.size(); ++r) {
      EXPECT_EQ(a.relations[r].indptr, b.relations[r].indptr);
      EXPECT_EQ(a.relations[r].indices, b.relations[r].indices);
      EXPECT_EQ(a.relations[r].block_edges, b.relations[r].block_edges);
    }
  }
}

TEST(CudaHeteroSampler, MatchesTheCpuSamplerInEveryPlacementAndMode) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: typed CUDA/CPU equality not checked";
  // -1 (whole segments), 0 (none), 30 (the serial Floyd on the rare long segments) and small fanouts.
  const std::vector<std::vector<int64_t>> relation_fanouts = {{3, 2}, {-1, 1}, {2, 0}, {0, 5}, {4, -1}, {}, {1, 30}};
  for (const bool replace : {false, true}) {
    for (const bool weighted : {false, true}) {
      TypedGraph g = random_typed(replace * 2 + weighted + 1);
      if (weighted) add_weights(g, 9);
      const NeighborSamplerOptions o = typed_options({5, 3}, relation_fanouts, replace);
      const NeighborSampler cpu(g.sample_graph(), o);
      const int64_t edge_bytes = 4 + (weighted ? 4 : 0) + 1;
      for (const bool index64 : {false, true}) {
        Typed64 g64;
        const SampleGraph sg = index64 ? g64.of(g) : g.sample_graph();
        for (const TopologyPlacement p : {TopologyPlacement::kDevice, TopologyPlacement::kPinned, TopologyPlacement::kCached}) {
          const DeviceTopology t(sg, {.placement = p, .cache_bytes = g.num_edges() / 3 * edge_bytes});
          ASSERT_EQ(t.num_relations(), static_cast<int32_t>(g.relations.size()));
          const CudaNeighborSampler gpu(t, o);
          for (uint64_t stream = 0; stream < 3; ++stream) {
            SCOPED_TRACE(std::string(replace ? "replace" : "distinct") + (weighted ? " weighted" : " uniform") +
                         (index64 ? " int64 " : " int32 ") + std::to_string(static_cast<int>(p)) + " stream " +
                         std::to_string(stream));
            const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 60, stream);
            const MiniBatch got = gpu.sample(seeds, stream);
            const MiniBatch want = cpu.sample(seeds, stream);
            test::expect_same_minibatch(got, want);
            check_minibatch(got, g.num_nodes(), g.num_edges(), g.view());
            expect_same_split(got, want, g.view());
            if (HasFailure()) return;
          }
        }
      }
    }
  }
}

TEST(CudaHeteroSampler, HubSegmentsMatchTheCpuSampler) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: typed hub segments not checked";
  // Paper 0 has 12000 citing papers (a hub segment) and 3000 authors; paper 1 11000 authors (the
  // hub in its second relation); the others a few of each.
  std::vector<TypedEdge> edges;
  std::mt19937_64 rng(4);
  const int64_t papers = 2000, authors = 1000;
  for (int64_t k = 0; k < 12000; ++k) edges.push_back({static_cast<int64_t>(rng() % papers), 0, 0});
  for (int64_t k = 0; k < 3000; ++k) edges.push_back({papers + static_cast<int64_t>(rng() % authors), 0, 1});
  for (int64_t k = 0; k < 11000; ++k) edges.push_back({papers + static_cast<int64_t>(rng() % authors), 1, 1});
  for (int64_t v = 2; v < papers; ++v) {
    for (int64_t k = 0; k < 4; ++k) edges.push_back({static_cast<int64_t>(rng() % papers), v, 0});
    edges.push_back({papers + static_cast<int64_t>(rng() % authors), v, 1});
  }
  TypedGraph uniform = TypedGraph::from_edges({papers, authors}, {{0, 0}, {1, 0}}, edges);
  TypedGraph weighted = uniform;
  add_weights(weighted, 6);
  const std::vector<int64_t> seeds = {1, 0, 5, 7, 1999};
  // Whole segments (-1, a fanout above the hub's degree) run the block kernels; 40 and 3 draw.
  const std::vector<std::vector<std::vector<int64_t>>> fanout_sets = {
      {{-1}, {3}}, {{20'000}, {40}}, {{3, 2}, {-1, 2}}};
  for (const TypedGraph* g : {&uniform, &weighted}) {
    const DeviceTopology t(g->sample_graph(), {});
    for (const bool replace : {false, true}) {
      for (const auto& rf : fanout_sets) {
        SCOPED_TRACE(std::string(g->graph.weights.empty() ? "uniform" : "weighted") + (replace ? " replace" : " distinct") +
                     " relation 0 fanout " + std::to_string(rf[0][0]));
        const NeighborSamplerOptions o = typed_options({}, rf, replace);
        const MiniBatch got = CudaNeighborSampler(t, o).sample(seeds, 2);
        test::expect_same_minibatch(got, NeighborSampler(g->sample_graph(), o).sample(seeds, 2));
        if (HasFailure()) return;
      }
    }
  }
}

TEST(CudaHeteroSampler, OneSynchronisationPerMinibatchAndTheDeviceBatch) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the typed sync budget not checked";
  const TypedGraph g = random_typed(3);
  const DeviceTopology t(g.sample_graph(), {});
  struct Case {
    std::vector<std::vector<int64_t>> relation_fanouts;
    int64_t budget;  // one wait, plus one per layer where some relation keeps all its edges
  };
  for (const Case& c : {Case{{{3, 2}, {1, 1}, {2, 0}, {0, 5}, {4, 1}, {1, 1}, {1, 3}}, 1},
                        Case{{{3, 2}, {-1, 1}, {2, 0}, {0, 5}, {4, -1}, {1, 1}, {1, 3}}, 3}}) {
    const NeighborSamplerOptions o = typed_options({}, c.relation_fanouts, false);
    const CudaNeighborSampler gpu(t, o);
    const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 80, 5);
    const DeviceMiniBatch d = gpu.sample_device(seeds, 5);
    EXPECT_EQ(d.host_syncs, c.budget);
    ASSERT_EQ(d.blocks.size(), 2u);
    EXPECT_NE(d.blocks[0].edge_types, nullptr);
    test::expect_same_minibatch(d.to_host(), NeighborSampler(g.sample_graph(), o).sample(seeds, 5));
    // Bounded unless some relation keeps all its edges.
    if (c.budget == 1) {
      EXPECT_GT(gpu.device_bytes_bound(80), 0);
    } else {
      EXPECT_EQ(gpu.device_bytes_bound(80), -1);
    }
  }
  // Through make_sampler, and a topology of another graph is refused.
  SamplerSpec spec;
  spec.relation_fanouts = {{3, 2}, {-1, 1}, {2, 0}, {0, 5}, {4, -1}, {1, 1}, {1, 3}};
  spec.seed = 11;
  const auto sampler = make_sampler(spec, g.sample_graph(), {.device = 0, .topology = &t});
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 25, 3);
  test::expect_same_minibatch(sampler->sample(seeds, 6), NeighborSampler(g.sample_graph(), neighbor_options(spec)).sample(seeds, 6));
  const test::OwnedGraph untyped = test::OwnedGraph::random(100, 4, 1);
  const DeviceTopology other(untyped.sample_graph(), {});
  EXPECT_THROW(make_sampler(spec, g.sample_graph(), {.device = 0, .topology = &other}), InvalidArgument);
}

}  // namespace
}  // namespace graphtier::sample
