// CUDA neighbour sampler: the CUDA MiniBatch equals the CPU NeighborSampler's field by field, for
// every topology placement and draw mode; without a GPU the constructor throws Unsupported and the
// comparisons skip visibly.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/sample/cuda_neighbor_sampler.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"
#include "sample_test_util.hpp"

namespace graphtier::sample {
namespace {

using test::OwnedGraph;

/// The same graph with int64 indices.
struct OwnedGraph64 {
  std::vector<int64_t> indptr;
  std::vector<int64_t> indices;
  std::vector<float> weights;
  explicit OwnedGraph64(const OwnedGraph& g)
      : indptr(g.indptr), indices(g.indices.begin(), g.indices.end()), weights(g.weights) {}
  SampleGraph sample_graph() const { return {{indptr, graph::IndexSpan(std::span<const int64_t>(indices))}, weights}; }
};

void add_weights(OwnedGraph& g, uint64_t seed) {
  std::mt19937_64 rng(seed);
  g.weights.resize(static_cast<std::size_t>(g.num_edges()));
  // A quarter weigh nothing (never sampled); equal weights are common, so ties in the prefix sums
  // and keys are exercised.
  for (float& w : g.weights) w = rng() % 4 == 0 ? 0.0f : static_cast<float>(rng() % 50 + 1) / 8.0f;
}

void expect_same(const MiniBatch& gpu, const MiniBatch& cpu, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(gpu.seeds, cpu.seeds);
  ASSERT_EQ(gpu.blocks.size(), cpu.blocks.size());
  for (std::size_t l = 0; l < cpu.blocks.size(); ++l) {
    SCOPED_TRACE(testing::Message() << "block " << l);
    const Block& a = gpu.blocks[l];
    const Block& b = cpu.blocks[l];
    ASSERT_EQ(a.num_dst, b.num_dst);
    ASSERT_EQ(a.indptr, b.indptr);
    ASSERT_EQ(a.edge_ids, b.edge_ids);
    ASSERT_EQ(a.src_nodes, b.src_nodes);
    ASSERT_EQ(a.indices, b.indices);
    ASSERT_EQ(a.weights, b.weights);
  }
}

std::string placement_name(TopologyPlacement p) {
  switch (p) {
    case TopologyPlacement::kDevice: return "device";
    case TopologyPlacement::kPinned: return "pinned";
    case TopologyPlacement::kCached: return "cached";
  }
  return "?";
}

TEST(CudaNeighborSampler, WithoutGpuTheConstructorThrowsUnsupported) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: the no-GPU answer is not checked";
  const OwnedGraph g = OwnedGraph::random(100, 4, 1);
  EXPECT_THROW(DeviceTopology(g.sample_graph(), {}), Unsupported);
  EXPECT_THROW(DeviceTopology(g.sample_graph(), {.placement = TopologyPlacement::kPinned}), Unsupported);
}

TEST(CudaNeighborSampler, RejectsBadInputs) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: argument checks of the CUDA sampler not checked";
  OwnedGraph g = OwnedGraph::random(100, 4, 1);
  EXPECT_THROW(DeviceTopology(g.sample_graph(), {.placement = TopologyPlacement::kCached, .cache_bytes = -1}),
               InvalidArgument);
  const DeviceTopology topology(g.sample_graph(), {});
  EXPECT_THROW(CudaNeighborSampler(topology, NeighborSamplerOptions{}), InvalidArgument);
  EXPECT_THROW(CudaNeighborSampler(topology, NeighborSamplerOptions{.fanouts = {-2}}), InvalidArgument);
  const CudaNeighborSampler sampler(topology, NeighborSamplerOptions{.fanouts = {2}});
  EXPECT_THROW(sampler.sample(std::vector<int64_t>{0, 100}, 0), OutOfRange);
  EXPECT_THROW(sampler.sample(std::vector<int64_t>{3, 3}, 0), InvalidArgument);
  g.weights.assign(static_cast<std::size_t>(g.num_edges()), -1.0f);
  EXPECT_THROW(DeviceTopology(g.sample_graph(), {}), InvalidArgument);
}

TEST(CudaNeighborSampler, CachedPlacementSplitsAtTheBudget) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: cache split not checked";
  const OwnedGraph g = OwnedGraph::random(1000, 10, 2);
  const int64_t budget = g.num_edges() / 2 * static_cast<int64_t>(sizeof(int32_t));
  const DeviceTopology t(g.sample_graph(), {.placement = TopologyPlacement::kCached, .cache_bytes = budget});
  const int64_t h = t.cached_nodes();
  ASSERT_GT(h, 0);
  ASSERT_LT(h, g.num_nodes());
  // The largest prefix that fits: one more node would not.
  EXPECT_LE(g.indptr[h] * 4, budget);
  EXPECT_GT(g.indptr[h + 1] * 4, budget);
  EXPECT_EQ(t.pinned_bytes(), (g.num_edges() - g.indptr[h]) * 4);
  EXPECT_EQ(t.device_bytes(), g.indptr[h] * 4 + (g.num_nodes() + 1) * 8);
  const DeviceTopology pinned(g.sample_graph(), {.placement = TopologyPlacement::kPinned});
  EXPECT_EQ(pinned.cached_nodes(), 0);
  EXPECT_EQ(pinned.device_bytes(), 0);
  const DeviceTopology device(g.sample_graph(), {});
  EXPECT_EQ(device.cached_nodes(), g.num_nodes());
  EXPECT_EQ(device.pinned_bytes(), 0);
}

TEST(CudaNeighborSampler, GoldenFullNeighbourhoodOnTinyGraph) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU golden case not checked";
  // 0 <- 1, 2, 3;  1 <- 0, 4;  2 <- 4;  3 <- (none);  4 <- 0
  const OwnedGraph g = OwnedGraph::from_edges(5, {{1, 0}, {2, 0}, {3, 0}, {0, 1}, {4, 1}, {4, 2}, {0, 4}});
  const DeviceTopology t(g.sample_graph(), {});
  const std::vector<int64_t> seeds = {2, 0};
  const MiniBatch b = CudaNeighborSampler(t, NeighborSamplerOptions{.fanouts = {-1, -1}}).sample(seeds, 0);
  ASSERT_EQ(b.blocks.size(), 2u);
  EXPECT_EQ(b.blocks[0].src_nodes, (std::vector<int64_t>{2, 0, 4, 1, 3}));
  EXPECT_EQ(b.blocks[0].indptr, (std::vector<int64_t>{0, 1, 4}));
  EXPECT_EQ(b.blocks[0].indices, (std::vector<int64_t>{2, 3, 0, 4}));
  EXPECT_EQ(b.blocks[0].edge_ids, (std::vector<int64_t>{5, 0, 1, 2}));
  EXPECT_EQ(b.blocks[1].indptr, (std::vector<int64_t>{0, 1, 4, 5, 7, 7}));
  EXPECT_EQ(b.blocks[1].indices, (std::vector<int64_t>{2, 3, 0, 4, 1, 1, 2}));
  check_minibatch(b, g.num_nodes(), g.num_edges());
}

struct Mode {
  bool replace;
  bool weighted;
};

class CudaMatchesCpu : public ::testing::TestWithParam<Mode> {};

TEST_P(CudaMatchesCpu, EveryPlacementFanoutAndIndexType) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: CUDA/CPU equality not checked";
  const Mode m = GetParam();
  OwnedGraph g = OwnedGraph::random(3000, 12, 11);
  if (m.weighted) add_weights(g, 5);
  const OwnedGraph64 g64(g);
  // A budget that puts roughly the first third of the edges on the device.
  const int64_t budget = g.num_edges() / 3 * static_cast<int64_t>(sizeof(int32_t) + (m.weighted ? 4 : 0));
  // {40} runs the serial Floyd path (fanout > 32) on the nodes whose degree exceeds 40.
  for (const std::vector<int64_t>& fanouts : {std::vector<int64_t>{15, 10, 5}, std::vector<int64_t>{-1, 0, 3},
                                              std::vector<int64_t>{40}}) {
    NeighborSamplerOptions o{.fanouts = fanouts, .replace = m.replace, .edge_ids = true, .seed = 7};
    const NeighborSampler cpu(g.sample_graph(), o);
    for (bool index64 : {false, true}) {
      const SampleGraph sg = index64 ? g64.sample_graph() : g.sample_graph();
      for (TopologyPlacement p : {TopologyPlacement::kDevice, TopologyPlacement::kPinned, TopologyPlacement::kCached}) {
        const DeviceTopology t(sg, {.placement = p, .cache_bytes = budget * (index64 ? 2 : 1)});
        if (p == TopologyPlacement::kCached) {
          ASSERT_GT(t.cached_nodes(), 0);
          ASSERT_LT(t.cached_nodes(), g.num_nodes());
        }
        const CudaNeighborSampler gpu(t, o);
        for (uint64_t stream = 0; stream < 3; ++stream) {
          const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 300, stream);
          const MiniBatch got = gpu.sample(seeds, stream);
          check_minibatch(got, g.num_nodes(), g.num_edges());
          expect_same(got, cpu.sample(seeds, stream),
                      placement_name(p) + (index64 ? " int64" : " int32") + " fanouts[0] " + std::to_string(fanouts[0]) +
                          " stream " + std::to_string(stream));
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, CudaMatchesCpu,
                         ::testing::Values(Mode{false, false}, Mode{true, false}, Mode{false, true}, Mode{true, true}),
                         [](const auto& info) {
                           return std::string(info.param.replace ? "Replace" : "Distinct") +
                                  (info.param.weighted ? "Weighted" : "Uniform");
                         });

TEST(CudaNeighborSampler, LongListsAndHubsMatchCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: long-list paths not checked";
  // Hubs of degree 300..2000 take the chunked paths (weighted lists longer than one shared-memory
  // chunk; keys recomputed per radix pass); edge ids off exercises the scratch positions.
  std::vector<std::pair<int64_t, int64_t>> edges;
  std::mt19937_64 rng(3);
  const int64_t n = 4000;
  for (int64_t v = 0; v < n; ++v) {
    const int64_t degree = v < 20 ? 300 + static_cast<int64_t>(rng() % 1700) : static_cast<int64_t>(rng() % 6);
    for (int64_t k = 0; k < degree; ++k) edges.emplace_back(static_cast<int64_t>(rng() % n), v);
  }
  OwnedGraph g = OwnedGraph::from_edges(n, edges);
  add_weights(g, 9);
  std::vector<int64_t> seeds(20);
  for (int64_t i = 0; i < 20; ++i) seeds[i] = 19 - i;
  for (bool replace : {false, true}) {
    for (bool weighted : {false, true}) {
      OwnedGraph h = g;
      if (!weighted) h.weights.clear();
      NeighborSamplerOptions o{.fanouts = {25, 10}, .replace = replace, .edge_ids = false, .seed = 3};
      const DeviceTopology t(h.sample_graph(), {.placement = TopologyPlacement::kPinned});
      const MiniBatch got = CudaNeighborSampler(t, o).sample(seeds, 4);
      check_minibatch(got, h.num_nodes(), h.num_edges());
      expect_same(got, NeighborSampler(h.sample_graph(), o).sample(seeds, 4),
                  std::string(replace ? "replace" : "distinct") + (weighted ? " weighted" : " uniform"));
    }
  }
}

TEST(CudaNeighborSampler, EmptySeedsAndDeviceResult) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: device-resident result not checked";
  const OwnedGraph g = OwnedGraph::random(500, 6, 4);
  const DeviceTopology t(g.sample_graph(), {});
  const CudaNeighborSampler gpu(t, NeighborSamplerOptions{.fanouts = {5, 5}, .seed = 1});
  const MiniBatch empty = gpu.sample(std::vector<int64_t>{}, 0);
  ASSERT_EQ(empty.blocks.size(), 2u);
  EXPECT_TRUE(empty.blocks[1].src_nodes.empty());
  EXPECT_EQ(empty.blocks[1].indptr, (std::vector<int64_t>{0}));
  expect_same(empty, NeighborSampler(g.sample_graph(), gpu.options()).sample(std::vector<int64_t>{}, 0), "empty seeds");
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 64, 1);
  const DeviceMiniBatch device = gpu.sample_device(seeds, 2);
  ASSERT_EQ(device.blocks.size(), 2u);
  EXPECT_EQ(device.blocks[1].num_dst, device.blocks[0].num_src);
  expect_same(device.to_host(), NeighborSampler(g.sample_graph(), gpu.options()).sample(seeds, 2), "device result");
}

}  // namespace
}  // namespace graphtier::sample
