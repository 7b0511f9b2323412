// The GPU temporal sampler's layer (src/sample/cuda/temporal_sampler_cuda.cu) rebuilt on the host
// from the shared decisions (temporal_steps.hpp) in exactly the kernels' order and shape: dst rows
// as tree keys, each column read through its tier (hot prefix / cold rest, rebased as
// temporal_column does), the count pass's windows and hub list, the fill pass's independent picks
// (pick_at, per lane or per thread of a hub block) or Floyd's draws on one lane translated in
// place, the compaction by first appearance of (tree, node) keys, the keys split into src nodes
// and trees. It must equal the CPU temporal sampler bit for bit on random timed graphs (node and
// edge times, uniform and last, with and without replacement, with hub windows); a GPU kernel that
// decides differently would have to bypass these functions. Runs without a GPU.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "graphtier/sample/neighbor_sampler.hpp"
#include "graphtier/sample/random.hpp"
#include "graphtier/sample/temporal.hpp"
#include "sample_test_util.hpp"
#include "temporal_steps.hpp"

namespace graphtier::sample {
namespace {

using test::OwnedGraph;

/// The device's view of a column (temporal_column): columns of nodes below `hot_nodes` read the
/// hot arrays at their own positions, the others the cold arrays (the tail from split_edge on) at
/// rebased positions.
struct ColumnView {
  const int64_t* time;
  const int64_t* order;
  int64_t begin;
  int64_t end;
};

ColumnView column_view(const OwnedGraph& g, const TemporalIndex& index, int64_t split_edge, int64_t v) {
  const int64_t begin = g.indptr[v], end = g.indptr[v + 1];
  if (begin < split_edge) return {index.time.data(), index.order.data(), begin, end};
  return {index.time.data() + split_edge, index.order.data() + split_edge, begin - split_edge, end - split_edge};
}

/// The GPU layer loop, serially. `hub_rows` counts the rows the hub kernel would take.
MiniBatch kernel_shaped(const OwnedGraph& g, const TemporalIndex& index, int64_t hot_nodes,
                        const std::vector<int64_t>& seeds, const std::vector<int64_t>& seed_times,
                        const NeighborSamplerOptions& o, uint64_t stream, int64_t& hub_rows) {
  const int64_t split_edge = g.indptr[hot_nodes];
  MiniBatch batch;
  batch.seeds = seeds;
  std::vector<int64_t> dst_keys;
  for (std::size_t i = 0; i < seeds.size(); ++i) dst_keys.push_back(temporal::tree_key(static_cast<int64_t>(i), seeds[i]));
  for (std::size_t l = 0; l < o.fanouts.size(); ++l) {
    const int64_t fanout = o.fanouts[l];
    const uint64_t ls = layer_stream(stream, static_cast<int>(l));
    const auto nd = static_cast<int64_t>(dst_keys.size());
    // temporal_count_kernel, then the scan.
    std::vector<int64_t> indptr(static_cast<std::size_t>(nd + 1), 0);
    std::vector<temporal::Window> windows(static_cast<std::size_t>(nd));
    std::vector<ColumnView> columns;
    for (int64_t k = 0; k < nd; ++k) {
      const int64_t v = temporal::key_node(dst_keys[k]), tree = temporal::key_tree(dst_keys[k]);
      columns.push_back(column_view(g, index, split_edge, v));
      const ColumnView& c = columns.back();
      windows[k] = temporal::window(c.time, c.begin, c.end, seed_times[tree], fanout, o.replace, o.temporal_strategy);
      if (temporal::hub_window(windows[k], fanout, o.replace)) ++hub_rows;
      indptr[k + 1] = indptr[k] + windows[k].count;
    }
    // temporal_fill_kernel and temporal_hub_fill_kernel: slot i of row k.
    std::vector<int64_t> positions(static_cast<std::size_t>(indptr[nd])), keys(positions.size());
    for (int64_t k = 0; k < nd; ++k) {
      const int64_t v = temporal::key_node(dst_keys[k]), tree = temporal::key_tree(dst_keys[k]);
      const temporal::Window& w = windows[k];
      const ColumnView& c = columns[k];
      const uint64_t tree_stream = temporal::tree_stream(ls, tree);
      int64_t* pos = positions.data() + indptr[k];
      const auto emit = [&](int64_t i, int64_t p) {
        const int64_t csc = c.order[p];
        pos[i] = csc;
        keys[indptr[k] + i] = temporal::tree_key(tree, g.indices[csc]);
      };
      if (temporal::independent_picks(w, o.replace)) {
        for (int64_t i = 0; i < w.count; ++i) emit(i, temporal::pick_at(w, o.replace, o.seed, tree_stream, v, i));
      } else {
        EXPECT_FALSE(temporal::hub_window(w, fanout, o.replace)) << "a hub window the hub kernel cannot draw";
        temporal::draw(w, o.replace, o.seed, tree_stream, v, pos);  // lane 0, into the output slots
        for (int64_t i = 0; i < w.count; ++i) emit(i, pos[i]);
      }
    }
    // compact_insert / compact_rank / compact_write on the keys, then split_keys_kernel.
    std::vector<int64_t> src_keys = dst_keys;
    std::unordered_map<int64_t, int64_t> first;
    for (int64_t k = 0; k < nd; ++k) first.emplace(dst_keys[k], k);
    Block b;
    b.num_dst = nd;
    b.indptr = indptr;
    for (const int64_t key : keys) {
      const auto [it, fresh] = first.emplace(key, static_cast<int64_t>(src_keys.size()));
      if (fresh) src_keys.push_back(key);
      b.indices.push_back(it->second);
    }
    for (const int64_t key : src_keys) {
      b.src_nodes.push_back(temporal::key_node(key));
      b.src_trees.push_back(temporal::key_tree(key));
    }
    if (o.edge_ids) b.edge_ids = positions;
    batch.blocks.push_back(std::move(b));
    dst_keys = std::move(src_keys);
  }
  return batch;
}

struct StepCase {
  std::vector<int64_t> fanouts;
  bool replace;
  TemporalStrategy strategy;
};

TEST(TemporalGpuSteps, KernelShapedLayersMatchTheCpuSampler) {
  const OwnedGraph g = OwnedGraph::two_hubs(5);
  std::mt19937_64 rng(8);
  std::vector<int64_t> node_time(static_cast<std::size_t>(g.num_nodes())), edge_time(static_cast<std::size_t>(g.num_edges()));
  for (auto& t : node_time) t = static_cast<int64_t>(rng() % 100);
  for (auto& t : edge_time) t = static_cast<int64_t>(rng() % 100);
  // The hubs twice (two trees: late, so their windows are hubs', and early), repeats, the rest random.
  std::vector<int64_t> seeds{0, 1, 0, 1}, seed_times{99, 99, 20, 98};
  for (int i = 0; i < 60; ++i) {
    seeds.push_back(static_cast<int64_t>(rng() % g.num_nodes()));
    seed_times.push_back(static_cast<int64_t>(rng() % 110));
  }
  const std::vector<StepCase> cases = {
      {{5, 3}, false, TemporalStrategy::kUniform},      // Floyd
      {{40, 2}, false, TemporalStrategy::kUniform},     // Floyd above a warp
      {{-1, 2}, false, TemporalStrategy::kUniform},     // whole windows: hubs
      {{20000, 3}, false, TemporalStrategy::kUniform},  // a fanout above the hub's window: whole, hubs
      {{4, 3}, true, TemporalStrategy::kUniform},       // draws with replacement
      {{-1, 2}, true, TemporalStrategy::kUniform},      // as many draws as the window: hubs
      {{3, 2}, false, TemporalStrategy::kLast},
      {{-1, 1}, false, TemporalStrategy::kLast},
      {{0, 3}, false, TemporalStrategy::kUniform},
  };
  int64_t hub_rows = 0;
  for (const TimeSource source : {TimeSource::kNode, TimeSource::kEdge}) {
    const TemporalIndex index =
        TemporalIndex::build(g.csc(), source == TimeSource::kNode ? node_time : edge_time, source);
    SampleGraph graph = g.sample_graph();
    graph.temporal = &index;
    for (const StepCase& c : cases) {
      NeighborSamplerOptions o;
      o.fanouts = c.fanouts;
      o.replace = c.replace;
      o.seed = 13;
      o.temporal_strategy = c.strategy;
      const NeighborSampler cpu(graph, o);
      for (const int64_t hot_nodes : {g.num_nodes(), int64_t{0}, int64_t{1}, g.num_nodes() / 2}) {
        for (uint64_t stream = 0; stream < 2; ++stream) {
          SCOPED_TRACE(std::string(source == TimeSource::kNode ? "node" : "edge") + " times, fanout " +
                       std::to_string(c.fanouts[0]) + (c.replace ? " replace " : " ") +
                       std::string(temporal_strategy_name(c.strategy)) + ", hot nodes " + std::to_string(hot_nodes) +
                       ", stream " + std::to_string(stream));
          const MiniBatch want = cpu.sample_temporal(seeds, seed_times, stream);
          const MiniBatch got = kernel_shaped(g, index, hot_nodes, seeds, seed_times, o, stream, hub_rows);
          test::expect_same_minibatch(got, want);
          check_minibatch(got, g.num_nodes(), g.num_edges());
          if (HasFailure()) return;
        }
      }
    }
  }
  EXPECT_GT(hub_rows, 0) << "no hub window was sampled: the hub path is untested";
}

TEST(TemporalGpuSteps, PicksAndKeys) {
  const std::vector<int64_t> time{1, 2, 2, 3, 5, 8};
  // Whole windows and draws with replacement are independent picks; Floyd's are not.
  const temporal::Window all = temporal::window(time.data(), 0, 6, 4, -1, false, TemporalStrategy::kUniform);
  EXPECT_TRUE(temporal::independent_picks(all, false));
  for (int64_t i = 0; i < all.count; ++i) EXPECT_EQ(temporal::pick_at(all, false, 1, 2, 3, i), i);
  const temporal::Window some = temporal::window(time.data(), 0, 6, 4, 2, false, TemporalStrategy::kUniform);
  EXPECT_FALSE(temporal::independent_picks(some, false));
  EXPECT_TRUE(temporal::independent_picks(some, true));
  // pick_at with replacement is draw's draw i.
  std::vector<int64_t> drawn(2);
  temporal::draw(some, true, 1, 2, 3, drawn.data());
  EXPECT_EQ(drawn[0], temporal::pick_at(some, true, 1, 2, 3, 0));
  EXPECT_EQ(drawn[1], temporal::pick_at(some, true, 1, 2, 3, 1));
  // Only windows of at least kHubDegree whose draw reads all of them are hubs'.
  const temporal::Window big{0, nbr::kHubDegree, nbr::kHubDegree};
  EXPECT_TRUE(temporal::hub_window(big, -1, false));
  EXPECT_TRUE(temporal::hub_window(big, nbr::kHubDegree, false));
  EXPECT_FALSE(temporal::hub_window(big, 5, false));
  EXPECT_FALSE(temporal::hub_window(big, 5, true));
  EXPECT_FALSE(temporal::hub_window({0, nbr::kHubDegree - 1, nbr::kHubDegree - 1}, -1, false));
  // Keys carry (tree, node) both ways.
  const int64_t key = temporal::tree_key(temporal::kMaxTrees - 1, (int64_t{1} << 40) - 1);
  EXPECT_GT(key, 0);
  EXPECT_EQ(temporal::key_tree(key), temporal::kMaxTrees - 1);
  EXPECT_EQ(temporal::key_node(key), (int64_t{1} << 40) - 1);
}

TEST(TemporalGpuSteps, DeviceBytesBoundCountsANodeOncePerTree) {
  const std::vector<int64_t> fanouts{10, 5};
  // 100 trees over a graph of 50 nodes: the untimed bound caps src nodes at 50, the temporal one
  // may not (each tree may reach all 50).
  const int64_t untimed = nbr::call_device_bytes(100, fanouts, false, true, 50, 400);
  const int64_t timed = temporal::call_device_bytes(100, fanouts, false, true, 50, 400);
  EXPECT_GT(timed, untimed);
  const nbr::LayerBound first = nbr::layer_bound(100, 10, false, 100 * 50, 100 * 400);
  EXPECT_EQ(first.num_src, 1100);  // 100 dst + 1000 edges, above the graph's 50 nodes
  EXPECT_EQ(temporal::call_device_bytes(100, std::vector<int64_t>{-1, 5}, false, true, 50, 400), -1);
}

}  // namespace
}  // namespace graphtier::sample
