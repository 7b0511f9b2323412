// Temporal neighbour sampling on the GPU (CudaNeighborSampler::sample_temporal): the CUDA MiniBatch
// equals the CPU NeighborSampler's field by field (src nodes, src trees, indices, edge ids) for
// every placement, index width, time source, strategy and draw mode, hub windows included; one host
// wait per minibatch plus one per fanout -1 layer; the front door's dispatch and refusals. Without
// a GPU every test skips visibly (temporal_gpu_steps_test.cpp checks the kernels' decisions on the
// host).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/sample/cuda_neighbor_sampler.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"
#include "graphtier/sample/sampler.hpp"
#include "graphtier/sample/temporal.hpp"
#include "sample_test_util.hpp"

namespace graphtier::sample {
namespace {

using test::OwnedGraph;

/// A graph with its times and their TemporalIndex.
struct TimedGraph {
  OwnedGraph g = OwnedGraph::two_hubs(5);
  std::vector<int64_t> node_time, edge_time;
  std::vector<int64_t> indices64;
  TemporalIndex index;

  explicit TimedGraph(TimeSource source) {
    std::mt19937_64 rng(8);
    node_time.resize(static_cast<std::size_t>(g.num_nodes()));
    edge_time.resize(static_cast<std::size_t>(g.num_edges()));
    for (auto& t : node_time) t = static_cast<int64_t>(rng() % 100);
    for (auto& t : edge_time) t = static_cast<int64_t>(rng() % 100);
    index = TemporalIndex::build(g.csc(), source == TimeSource::kNode ? node_time : edge_time, source);
    indices64.assign(g.indices.begin(), g.indices.end());
  }
  SampleGraph graph(bool index64) {
    SampleGraph sg = g.sample_graph();
    if (index64) sg.csc = {g.indptr, graph::IndexSpan(std::span<const int64_t>(indices64))};
    sg.temporal = &index;
    return sg;
  }
};

void timed_seeds(int64_t num_nodes, std::vector<int64_t>& seeds, std::vector<int64_t>& seed_times, uint64_t seed) {
  std::mt19937_64 rng(seed);
  seeds = {0, 1, 0, 1};
  seed_times = {99, 99, 20, 98};
  for (int i = 0; i < 60; ++i) {
    seeds.push_back(static_cast<int64_t>(rng() % num_nodes));
    seed_times.push_back(static_cast<int64_t>(rng() % 110));
  }
}

NeighborSamplerOptions temporal_options(std::vector<int64_t> fanouts, bool replace, TemporalStrategy strategy) {
  NeighborSamplerOptions o;
  o.fanouts = std::move(fanouts);
  o.replace = replace;
  o.seed = 13;
  o.temporal_strategy = strategy;
  return o;
}

TEST(CudaTemporalSampler, MatchesTheCpuSamplerInEveryPlacementAndMode) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: temporal CUDA/CPU equality not checked";
  struct Case {
    std::vector<int64_t> fanouts;
    bool replace;
    TemporalStrategy strategy;
  };
  const std::vector<Case> cases = {
      {{5, 3}, false, TemporalStrategy::kUniform},      {{40, 2}, false, TemporalStrategy::kUniform},
      {{-1, 2}, false, TemporalStrategy::kUniform},     {{20000, 3}, false, TemporalStrategy::kUniform},
      {{4, 3}, true, TemporalStrategy::kUniform},       {{-1, 2}, true, TemporalStrategy::kUniform},
      {{3, 2}, false, TemporalStrategy::kLast},         {{-1, 1}, false, TemporalStrategy::kLast},
      {{0, 3}, false, TemporalStrategy::kUniform},
  };
  for (const TimeSource source : {TimeSource::kNode, TimeSource::kEdge}) {
    TimedGraph tg(source);
    std::vector<int64_t> seeds, seed_times;
    timed_seeds(tg.g.num_nodes(), seeds, seed_times, 3);
    for (const bool index64 : {false, true}) {
      const SampleGraph sg = tg.graph(index64);
      const int64_t edge_bytes = (index64 ? 8 : 4) + 16;
      for (const TopologyPlacement p : {TopologyPlacement::kDevice, TopologyPlacement::kPinned, TopologyPlacement::kCached}) {
        const DeviceTopology t(sg, {.placement = p, .cache_bytes = tg.g.num_edges() / 2 * edge_bytes});
        ASSERT_TRUE(t.temporal());
        for (const Case& c : cases) {
          const NeighborSamplerOptions o = temporal_options(c.fanouts, c.replace, c.strategy);
          const CudaNeighborSampler gpu(t, o);
          const NeighborSampler cpu(sg, o);
          for (uint64_t stream = 0; stream < 2; ++stream) {
            SCOPED_TRACE(std::string(source == TimeSource::kNode ? "node" : "edge") + " times, " +
                         (index64 ? "int64, " : "int32, ") + "placement " + std::to_string(static_cast<int>(p)) +
                         ", fanout " + std::to_string(c.fanouts[0]) + (c.replace ? " replace " : " ") +
                         std::string(temporal_strategy_name(c.strategy)) + ", stream " + std::to_string(stream));
            const MiniBatch got = gpu.sample_temporal(seeds, seed_times, stream);
            test::expect_same_minibatch(got, cpu.sample_temporal(seeds, seed_times, stream));
            check_minibatch(got, tg.g.num_nodes(), tg.g.num_edges());
            if (HasFailure()) return;
          }
        }
      }
    }
  }
}

TEST(CudaTemporalSampler, SynchronisationBudgetAndTheFrontDoor) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the temporal sync budget and GPU dispatch not checked";
  TimedGraph tg(TimeSource::kEdge);
  const SampleGraph sg = tg.graph(false);
  const DeviceTopology t(sg, {});
  std::vector<int64_t> seeds, seed_times;
  timed_seeds(tg.g.num_nodes(), seeds, seed_times, 4);
  struct Budget {
    std::vector<int64_t> fanouts;
    int64_t syncs;  // one per minibatch, plus one per fanout -1 layer
  };
  for (const Budget& b : {Budget{{5, 3}, 1}, Budget{{-1, 3}, 2}, Budget{{-1, -1}, 3}}) {
    const NeighborSamplerOptions o = temporal_options(b.fanouts, false, TemporalStrategy::kUniform);
    const CudaNeighborSampler gpu(t, o);
    Buffer input_nodes;  // page-locked: the sink's memory
    int64_t bound = -1;
    const InputNodesSink sink = [&](int64_t n) {
      bound = n;
      input_nodes = Buffer(MemoryKind::kPinned, static_cast<std::size_t>(std::max<int64_t>(n, 1)) * sizeof(int64_t));
      return static_cast<int64_t*>(input_nodes.data());
    };
    const DeviceMiniBatch d = gpu.sample_temporal_device(seeds, seed_times, 1, {}, sink);
    if (b.syncs == 1) {
      EXPECT_GT(gpu.device_bytes_bound(static_cast<int64_t>(seeds.size())), 0);
    } else {
      EXPECT_EQ(gpu.device_bytes_bound(static_cast<int64_t>(seeds.size())), -1);
    }
    EXPECT_EQ(d.host_syncs, b.syncs) << "fanouts " << b.fanouts[0] << ", " << b.fanouts[1];
    ASSERT_EQ(d.blocks.size(), 2u);
    EXPECT_NE(d.blocks[0].src_trees, nullptr);
    EXPECT_GE(bound, d.blocks[1].num_src);
    const MiniBatch want = NeighborSampler(sg, o).sample_temporal(seeds, seed_times, 1);
    test::expect_same_minibatch(d.to_host(), want);
    const auto* ids = static_cast<const int64_t*>(input_nodes.data());
    EXPECT_EQ(std::vector<int64_t>(ids, ids + d.blocks[1].num_src), want.blocks[1].src_nodes)
        << "input nodes written to the sink within the last wait";
  }
  // The front door dispatches to it; a topology without times and a typed temporal graph are refused.
  SamplerSpec spec;
  spec.fanouts = {4, 2};
  spec.seed = 13;
  spec.temporal_strategy = TemporalStrategy::kLast;
  const auto sampler = make_sampler(spec, sg, {.device = 0, .topology = &t});
  EXPECT_EQ(sampler->device(), 0);
  test::expect_same_minibatch(sampler->sample_temporal(seeds, seed_times, 6),
                              NeighborSampler(sg, neighbor_options(spec)).sample_temporal(seeds, seed_times, 6));
  const DeviceTopology untimed(tg.g.sample_graph(), {});
  EXPECT_THROW(make_sampler(spec, sg, {.device = 0, .topology = &untimed}), InvalidArgument);
  EXPECT_THROW(CudaNeighborSampler(untimed, neighbor_options(spec)).sample_temporal(seeds, seed_times, 0),
               InvalidArgument);
  EXPECT_THROW(CudaNeighborSampler(t, neighbor_options(spec)).sample_temporal(seeds, {}, 0), InvalidArgument);
}

}  // namespace
}  // namespace graphtier::sample
