// CUDA neighbour sampler: the CUDA MiniBatch equals the CPU NeighborSampler's field by field, for
// every topology placement and draw mode; without a GPU the constructor throws Unsupported and the
// comparisons skip visibly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/core/device_memory.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/portable_math.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/sample/random.hpp"
#include "graphtier/sample/cuda_neighbor_sampler.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"
#include "sample_test_util.hpp"
#include "neighbor_steps.hpp"
#if GRAPHTIER_WITH_CUDA
#include <cuda_runtime.h>

#include "cuda/neighbor_sampler_cuda.hpp"
#endif

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

/// A graph with hubs of degree 100K and 150K (nodes 0 and 1), a node just above the hub
/// threshold, and nodes whose degrees straddle the two Floyd paths (fanouts 32 and 33).
OwnedGraph hub_graph() {
  std::vector<std::pair<int64_t, int64_t>> edges;
  std::mt19937_64 rng(21);
  const int64_t n = 3000;
  const int64_t degrees[] = {100'000, 150'000, 10'300};
  for (int64_t v = 0; v < n; ++v) {
    const int64_t degree = v < 3 ? degrees[v] : 28 + static_cast<int64_t>(rng() % 12);  // 28..39
    for (int64_t k = 0; k < degree; ++k) edges.emplace_back(static_cast<int64_t>(rng() % n), v);
  }
  return OwnedGraph::from_edges(n, edges);
}

TEST(CudaNeighborSampler, FloydBoundaryAndHubsMatchCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: fanouts 32/33 and hubs of degree >= 1e5 not checked";
  OwnedGraph weighted = hub_graph();
  add_weights(weighted, 22);
  OwnedGraph uniform = weighted;
  uniform.weights.clear();
  std::vector<int64_t> seeds = {1, 0, 2};
  for (int64_t v = 3; v < 200; v += 7) seeds.push_back(v);
  // 32 and 33: the warp Floyd and the serial one on nodes of degree 28..39; a fanout above the
  // hubs' degree copies them whole (all_edges / positive_edges by a block); -1 likewise.
  const std::vector<std::vector<int64_t>> fanout_sets = {{32, 3}, {33, 3}, {200'000}, {-1}, {10, 10}};
  for (const OwnedGraph* g : {&uniform, &weighted}) {
    const DeviceTopology t(g->sample_graph(), {});
    for (bool replace : {false, true}) {
      for (const auto& fanouts : fanout_sets) {
        const NeighborSamplerOptions o{.fanouts = fanouts, .replace = replace, .edge_ids = true, .seed = 5};
        const CudaNeighborSampler gpu(t, o);
        const DeviceMiniBatch d = gpu.sample_device(seeds, 3);
        int64_t minus_one = 0;
        for (int64_t f : fanouts) minus_one += f < 0 ? 1 : 0;
        EXPECT_LE(d.host_syncs, 1 + minus_one);
        expect_same(d.to_host(), NeighborSampler(g->sample_graph(), o).sample(seeds, 3),
                    std::string(g->weights.empty() ? "uniform" : "weighted") + (replace ? " replace" : " distinct") +
                        " fanouts[0] " + std::to_string(fanouts[0]));
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(CudaNeighborSampler, OneSynchronisationPerMinibatch) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the sync budget not checked";
  OwnedGraph g = OwnedGraph::random(5000, 10, 31);
  const DeviceTopology t(g.sample_graph(), {});
  struct Case {
    std::vector<int64_t> fanouts;
    int64_t budget;
  };
  for (const Case& c : {Case{{15, 10, 5}, 1}, Case{{-1, 5}, 2}, Case{{5, -1, -1}, 3}, Case{{0, 3}, 1}}) {
    const NeighborSamplerOptions o{.fanouts = c.fanouts, .seed = 2};
    const CudaNeighborSampler gpu(t, o);
    for (uint64_t stream = 0; stream < 5; ++stream) {
      const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 256, stream);
      const DeviceMiniBatch d = gpu.sample_device(seeds, stream);
      EXPECT_EQ(d.host_syncs, c.budget) << "fanouts[0] " << c.fanouts[0];
      expect_same(d.to_host(), NeighborSampler(g.sample_graph(), o).sample(seeds, stream), "sync budget");
    }
  }
  const CudaNeighborSampler gpu(t, NeighborSamplerOptions{.fanouts = {4, 4}});
  EXPECT_EQ(gpu.sample_device(std::vector<int64_t>{}, 0).host_syncs, 1);
}

TEST(CudaNeighborSampler, HubKernelsRunExactlyWhenSomeDegreeMakesAHub) {
  // nbr::hubs_possible against every degree from kHubDegree up (and far above it).
  std::vector<int64_t> degrees;
  for (int64_t d = nbr::kHubDegree; d < nbr::kHubDegree + 64; ++d) degrees.push_back(d);
  for (const int64_t d : {int64_t{1} << 20, int64_t{1} << 30}) degrees.push_back(d);
  for (const int64_t fanout : {int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{5}, int64_t{15}, int64_t{32},
                               nbr::kHubDegree - 1, nbr::kHubDegree, nbr::kHubDegree + 1, int64_t{1} << 21}) {
    for (const bool replace : {false, true}) {
      for (const bool weighted : {false, true}) {
        bool any = false;
        for (const int64_t d : degrees) any = any || nbr::cost_grows_with_degree(fanout, replace, weighted, d);
        EXPECT_EQ(nbr::hubs_possible(fanout, replace, weighted), any)
            << "fanout " << fanout << " replace " << replace << " weighted " << weighted;
      }
    }
  }
  // The loader's default fanouts never launch a hub kernel on an unweighted graph.
  for (const int64_t fanout : {15, 10, 5}) EXPECT_FALSE(nbr::hubs_possible(fanout, false, false));
}

TEST(CudaNeighborSampler, CountPerThreadOnlyWhereTheCountNeedsTheDegreeAlone) {
  // Where count_per_thread holds, the count kernel passes `positive` = d: the count must not
  // depend on the positive edges; where it does not hold, it does for some degree.
  for (const int64_t fanout : {-1, 0, 1, 3, 15}) {
    for (const bool replace : {false, true}) {
      for (const bool weighted : {false, true}) {
        bool depends = false;
        for (int64_t d = 0; d <= 20; ++d) {
          for (int64_t positive = 0; positive <= d; ++positive) {
            const int64_t with_degree = nbr::sample_count(fanout, replace, weighted, d, d);
            const int64_t real = nbr::sample_count(fanout, replace, weighted, d, weighted ? positive : d);
            depends = depends || with_degree != real;
          }
        }
        EXPECT_EQ(nbr::count_per_thread(fanout, weighted), !depends)
            << "fanout " << fanout << " replace " << replace << " weighted " << weighted;
      }
    }
  }
}

TEST(CudaNeighborSampler, ACallsDeviceBytesAreBoundedByItsLayers) {
  // [15, 10, 5] from 1024 seeds on a graph of 20M nodes and 385M edges, by hand: the layers'
  // bounds are (nd, ne, num_src) = (1024, 15360, 16384), (16384, 163840, 180224),
  // (180224, 901120, 1081344), with tables of 2^15, 2^19 and 2^22 slots.
  const std::vector<int64_t> fanouts{15, 10, 5};
  const int64_t n = 20'000'000, e = 385'000'000;
  int64_t batch = 1024 * 8, workspace = 0;
  const int64_t layers[3][4] = {{1024, 15360, 16384, 1 << 15}, {16384, 163840, 180224, 1 << 19},
                                {180224, 901120, 1081344, 1 << 22}};
  for (const auto& l : layers) {
    batch += (l[0] + 1) * 8 + l[2] * 8 + l[1] * 8 + l[1] * 8;  // indptr, src nodes, indices, edge ids
    workspace += l[0] * 8 + 2 * l[1] * 8 + l[3] * 16 + (l[0] + l[1]) * 4 + l[1] * 8;
  }
  EXPECT_EQ(nbr::call_device_bytes(1024, fanouts, false, true, n, e), batch + workspace + workspace / 2);
  EXPECT_LT(nbr::call_device_bytes(1024, fanouts, false, true, n, e), int64_t{256} << 20);  // per stream
  EXPECT_LT(nbr::call_device_bytes(1024, fanouts, false, false, n, e),
            nbr::call_device_bytes(1024, fanouts, false, true, n, e));
  EXPECT_LE(nbr::call_device_bytes(512, fanouts, false, true, n, e),
            nbr::call_device_bytes(1024, fanouts, false, true, n, e));
  // A fanout -1 layer has no bound before sampling; fanout 0 layers hold only their indptr.
  EXPECT_EQ(nbr::call_device_bytes(1024, std::vector<int64_t>{10, -1}, false, true, n, e), -1);
  EXPECT_GT(nbr::call_device_bytes(1024, std::vector<int64_t>{0}, false, true, n, e), 0);
}

TEST(CudaNeighborSampler, TheDevicePoolKeepsTheRulesShare) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the pool's release threshold not checked";
#if GRAPHTIER_WITH_CUDA
  const OwnedGraph g = OwnedGraph::random(2000, 6, 91);
  const DeviceTopology t(g.sample_graph(), {});
  const CudaNeighborSampler gpu(t, NeighborSamplerOptions{.fanouts = {5, 5}});
  static_cast<void>(gpu.sample(test::random_seeds(g.num_nodes(), 64, 1), 1));
  cudaMemPool_t pool = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
  uint64_t threshold = 0;
  ASSERT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold), cudaSuccess);
  const char* setting = std::getenv(kPoolKeepVariable);
  EXPECT_EQ(threshold, static_cast<uint64_t>(pool_release_threshold(device_memory(0).total_bytes,
                                                                    setting == nullptr ? "" : setting)));
  EXPECT_NE(threshold, UINT64_MAX) << "the pool keeps its peak forever";
#endif
}

TEST(CudaNeighborSampler, ATopologyLargerThanTheFreeMemoryFailsAtCreation) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the topology's budget check not checked";
#if GRAPHTIER_WITH_CUDA
  const OwnedGraph g = OwnedGraph::random(1 << 20, 4, 17);
  const auto needed = static_cast<int64_t>(g.indptr.size() * sizeof(int64_t) + g.indices.size() * sizeof(int32_t));
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  test::DeviceFill fill(needed);
  if (const std::string why = fill.unfilled(); !why.empty()) GTEST_SKIP() << why;
  const int64_t free_now = fill.free_bytes();
  try {
    const DeviceTopology t(g.sample_graph(), {});
    ADD_FAILURE() << "a topology of " << needed << " bytes was made with " << free_now << " free";
  } catch (const OutOfMemory& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("DeviceTopology"), std::string::npos) << m;
    EXPECT_NE(m.find("free"), std::string::npos) << m;
  }
  fill.release();
  // With the memory back, the same topology is made.
  EXPECT_NO_THROW(DeviceTopology(g.sample_graph(), {}));
#endif
}

TEST(CudaNeighborSampler, SamplingLeavesTheCallersCurrentDeviceAsItWas) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the caller's current device not checked";
#if GRAPHTIER_WITH_CUDA
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  if (devices < 2) GTEST_SKIP() << "needs two GPUs (the topology on one, the caller on the other); has " << devices;
  const OwnedGraph g = OwnedGraph::random(2000, 6, 93);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const DeviceTopology t(g.sample_graph(), TopologyOptions{.device = 1});
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0) << "after the topology's upload";
  const OwnedCudaStream stream(1);
  const CudaNeighborSampler gpu(t, NeighborSamplerOptions{.fanouts = {5, 5}});
  const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 64, 3);
  const MiniBatch got = gpu.sample(seeds, 3, stream.get());
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0) << "after sampling and the copy to the host";
  expect_same(got, NeighborSampler(g.sample_graph(), NeighborSamplerOptions{.fanouts = {5, 5}}).sample(seeds, 3),
              "on device 1");
#endif
}

TEST(CudaNeighborSampler, PinnedStagingIsReusedAcrossMinibatches) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the pinned staging pool not checked";
#if GRAPHTIER_WITH_CUDA
  const OwnedGraph g = OwnedGraph::random(3000, 8, 51);
  const DeviceTopology t(g.sample_graph(), {});
  const NeighborSamplerOptions o{.fanouts = {10, 5}, .seed = 4};
  cuda::PinnedStagingPool pool;
  Buffer input_nodes;  // page-locked: the sink's memory, grown as the bounds ask
  const InputNodesSink sink = [&](int64_t bound) {
    const auto bytes = static_cast<std::size_t>(std::max<int64_t>(bound, 1)) * sizeof(int64_t);
    if (input_nodes.size() < bytes) input_nodes = Buffer(MemoryKind::kPinned, bytes);
    return static_cast<int64_t*>(input_nodes.data());
  };
  for (uint64_t stream = 0; stream < 20; ++stream) {
    const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 200 + static_cast<int64_t>(stream % 3), stream);
    // Odd batches also send their input nodes to the host, within the same one wait.
    const DeviceMiniBatch d =
        cuda::sample_device(t.state(), o, o.fanouts, seeds, stream, {}, pool, stream % 2 ? sink : nullptr);
    EXPECT_EQ(d.host_syncs, 1);
    const MiniBatch cpu = NeighborSampler(g.sample_graph(), o).sample(seeds, stream);
    expect_same(d.to_host(), cpu, "pooled staging");
    if (stream % 2) {
      const auto* ids = static_cast<const int64_t*>(input_nodes.data());
      const std::vector<int64_t> got(ids, ids + d.blocks.back().num_src);
      EXPECT_EQ(got, cpu.blocks.back().src_nodes) << "input nodes written to the sink, batch " << stream;
    }
  }
  EXPECT_EQ(pool.allocations(), 1);  // one call at a time: one buffer, allocated once
#endif
}

TEST(CudaNeighborSampler, NonDefaultStreamConsumedOnAnother) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: non-default streams not checked";
  const OwnedGraph g = OwnedGraph::random(20000, 12, 41);
  const DeviceTopology t(g.sample_graph(), {.placement = TopologyPlacement::kPinned});
  const NeighborSamplerOptions o{.fanouts = {15, 10, 5}, .seed = 8};
  const CudaNeighborSampler gpu(t, o);
  const OwnedCudaStream producer(0), consumer(0);  // non-blocking: no implicit ordering between them
  for (uint64_t stream = 0; stream < 4; ++stream) {
    const std::vector<int64_t> seeds = test::random_seeds(g.num_nodes(), 1024, stream);
    DeviceMiniBatch d = gpu.sample_device(seeds, stream, producer.get());
    EXPECT_LE(d.host_syncs, 1);
    // The arrays are complete when sample_device returns: a reader on another stream, ordered
    // after nothing on the producer, must see the whole minibatch.
    d.stream = consumer.get();
    expect_same(d.to_host(), NeighborSampler(g.sample_graph(), o).sample(seeds, stream), "consumer stream");
    d.stream = producer.get();
  }
}

TEST(CudaNeighborSampler, PortableLogAndKeysOnTheDeviceMatchTheHostBitForBit) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the device's portable_log and es_key not checked";
#if GRAPHTIER_WITH_CUDA
  std::vector<double> x = {1.0, 2.0, 0.5, 0x1.999999999999ap-4, 0x1p-60, 0x1.fffffffffffffp-1, 0x1p-1022, 3.0, 10.0};
  for (int64_t i = 0; i < 1'000'000; ++i) {
    double u = u64_to_unit_double(philox_u64(7, 1, static_cast<uint64_t>(i)));
    if (i % 5 == 0) u = std::ldexp(u, -static_cast<int>(i % 60));
    x.push_back(std::fmax(u, 0x1p-60));
  }
  std::vector<int64_t> edges;
  std::vector<float> w;
  std::mt19937_64 rng(6);
  for (int64_t e = 0; e < 1'000'000; ++e) {
    edges.push_back(static_cast<int64_t>(rng() % (int64_t{1} << 40)));
    w.push_back(e % 3 == 0 ? static_cast<float>(rng() % 50 + 1) / 8.0f : std::ldexp(static_cast<float>(rng() % 1000 + 1), -static_cast<int>(rng() % 40)));
  }
  std::vector<double> logs, keys;
  cuda::device_log_and_keys(x, 11, 12, edges, w, 0, logs, keys);
  ASSERT_EQ(logs.size(), x.size());
  ASSERT_EQ(keys.size(), edges.size());
  const auto bits = [](double v) {
    uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  };
  EXPECT_EQ(bits(logs[0]), bits(0.0));
  EXPECT_EQ(bits(logs[1]), bits(0x1.62e42fefa39efp-1));
  EXPECT_EQ(bits(logs[4]), bits(-0x1.4cb5ecf0a965p+5));
  int64_t log_differ = 0, key_differ = 0;
  for (std::size_t i = 0; i < x.size(); ++i) log_differ += bits(logs[i]) != bits(portable_log(x[i])) ? 1 : 0;
  for (std::size_t k = 0; k < edges.size(); ++k) key_differ += bits(keys[k]) != bits(es_key(11, 12, edges[k], w[k])) ? 1 : 0;
  EXPECT_EQ(log_differ, 0);
  EXPECT_EQ(key_differ, 0);
#endif
}

}  // namespace
}  // namespace graphtier::sample
