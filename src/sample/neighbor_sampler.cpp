// Front door of neighbour sampling: argument checks, and the layer loop of the CPU backend
// (the layer in cpu/neighbor_sampler_cpu.cpp: draws in cpu/neighbor_draws.cpp, compaction in
// cpu/compact_cpu.cpp).
#include "graphtier/sample/neighbor_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "graphtier/core/error.hpp"
#include "graphtier/sample/random.hpp"
#include "cpu/neighbor_sampler_cpu.hpp"
#include "cpu/temporal_sampler_cpu.hpp"
#include "temporal_steps.hpp"

namespace graphtier::sample {

namespace {

void check_fanout(int64_t f, const char* name, std::size_t r, std::size_t l, bool per_relation) {
  if (per_relation) {
    GRAPHTIER_EXPECTS(f >= -1 && f < kMaxDraws, InvalidArgument, name, "[", r, "][", l, "] is ", f,
                      ": expected -1 (all neighbours), 0, or a count below 2^24");
  } else {
    GRAPHTIER_EXPECTS(f >= -1 && f < kMaxDraws, InvalidArgument, name, "[", l, "] is ", f,
                      ": expected -1 (all neighbours), 0, or a count below 2^24");
  }
}

}  // namespace

std::vector<int64_t> relation_fanout_table(const NeighborSamplerOptions& options, int32_t num_relations) {
  const std::vector<std::vector<int64_t>>& lists = options.relation_fanouts;
  GRAPHTIER_EXPECTS(lists.empty() || num_relations > 0, InvalidArgument,
                    "relation_fanouts: the graph has no relations (no node and edge types); use fanouts");
  GRAPHTIER_EXPECTS(lists.empty() || lists.size() == static_cast<std::size_t>(num_relations), InvalidArgument,
                    "relation_fanouts: ", lists.size(), " lists for a graph of ", num_relations,
                    " relations (one per relation id, empty to take fanouts)");
  // The number of blocks: fanouts', else the first relation list's.
  std::size_t layers = options.fanouts.size();
  std::string source = "fanouts";
  for (std::size_t r = 0; layers == 0 && r < lists.size(); ++r) {
    if (!lists[r].empty()) {
      layers = lists[r].size();
      source = "relation_fanouts[" + std::to_string(r) + "]";
    }
  }
  GRAPHTIER_EXPECTS(layers > 0, InvalidArgument, "fanouts: at least one layer is needed");
  for (std::size_t l = 0; l < options.fanouts.size(); ++l) check_fanout(options.fanouts[l], "fanouts", 0, l, false);
  for (std::size_t r = 0; r < lists.size(); ++r) {
    GRAPHTIER_EXPECTS(!lists[r].empty() || !options.fanouts.empty(), InvalidArgument, "relation_fanouts[", r,
                      "] is empty and there are no fanouts for it to take");
    GRAPHTIER_EXPECTS(lists[r].empty() || lists[r].size() == layers, InvalidArgument, "relation_fanouts[", r,
                      "] has ", lists[r].size(), " hops, ", source, " has ", layers);
    for (std::size_t l = 0; l < lists[r].size(); ++l) check_fanout(lists[r][l], "relation_fanouts", r, l, true);
  }
  const std::size_t width = num_relations > 0 ? static_cast<std::size_t>(num_relations) : 1;
  std::vector<int64_t> table(layers * width);
  for (std::size_t l = 0; l < layers; ++l) {
    for (std::size_t r = 0; r < width; ++r) {
      const bool own = !lists.empty() && !lists[r].empty();
      table[l * width + r] = own ? lists[r][l] : options.fanouts[l];
    }
  }
  return table;
}

void check_sampler_inputs(const SampleGraph& graph, const NeighborSamplerOptions& options) {
  check_sample_graph(graph, "sampler graph");
  relation_fanout_table(options, graph.hetero.num_relations());
  if (!graph.edge_weights.empty()) {
    GRAPHTIER_EXPECTS(static_cast<int64_t>(graph.edge_weights.size()) == graph.csc.num_edges(), InvalidArgument,
                      "edge weights: ", graph.edge_weights.size(), " values for ", graph.csc.num_edges(), " edges");
    for (std::size_t e = 0; e < graph.edge_weights.size(); ++e) {
      const float w = graph.edge_weights[e];
      GRAPHTIER_EXPECTS(std::isfinite(w) && w >= 0, InvalidArgument, "edge weight ", e, " is ", w,
                        ": weights must be finite and >= 0");
    }
  }
  if (graph.temporal != nullptr) {
    GRAPHTIER_EXPECTS(graph.temporal->num_edges() == graph.csc.num_edges() &&
                          graph.temporal->time.size() == graph.temporal->order.size(),
                      InvalidArgument, "temporal index of ", graph.temporal->num_edges(), " entries for a graph of ",
                      graph.csc.num_edges(), " edges");
    GRAPHTIER_EXPECTS(graph.edge_weights.empty(), Unsupported, "temporal sampling of a weighted graph is not supported");
    check_temporal_strategy(options);
  }
}

void check_temporal_strategy(const NeighborSamplerOptions& options) {
  GRAPHTIER_EXPECTS(!(options.replace && options.temporal_strategy == TemporalStrategy::kLast), InvalidArgument,
                    "temporal strategy 'last' takes the most recent neighbours: it does not draw with replacement");
}

void check_temporal_seeds(std::span<const int64_t> seeds, std::span<const int64_t> seed_times, int64_t num_nodes) {
  GRAPHTIER_EXPECTS(seed_times.size() == seeds.size(), InvalidArgument, "temporal sampling: ", seed_times.size(),
                    " seed times for ", seeds.size(), " seeds");
  GRAPHTIER_EXPECTS(static_cast<int64_t>(seeds.size()) <= temporal::kMaxTrees, InvalidArgument,
                    "temporal sampling: at most 2^23 seeds per minibatch, got ", seeds.size());
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    GRAPHTIER_EXPECTS(seeds[i] >= 0 && seeds[i] < num_nodes, OutOfRange, "seed ", seeds[i], " (position ", i,
                      ") is outside [0, ", num_nodes, ")");
  }
}

NeighborSampler::NeighborSampler(SampleGraph graph, NeighborSamplerOptions options)
    : graph_(graph), options_(std::move(options)) {
  check_sampler_inputs(graph_, options_);
  fanout_table_ = relation_fanout_table(options_, graph_.hetero.num_relations());
  num_layers_ = static_cast<int64_t>(fanout_table_.size()) / std::max<int64_t>(1, graph_.hetero.num_relations());
}

MiniBatch NeighborSampler::sample(std::span<const int64_t> seeds, uint64_t stream, ThreadPool* pool) const {
  GRAPHTIER_EXPECTS(graph_.temporal == nullptr, InvalidArgument,
                    "a temporal graph is sampled from seed times (sample_temporal)");
  check_seeds(seeds, graph_.csc.num_nodes());
  MiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  std::span<const int64_t> dst = batch.seeds;
  const auto width = static_cast<std::size_t>(std::max<int64_t>(1, graph_.hetero.num_relations()));
  batch.blocks.reserve(static_cast<std::size_t>(num_layers_));
  for (int64_t l = 0; l < num_layers_; ++l) {
    const std::span<const int64_t> fanouts(fanout_table_.data() + static_cast<std::size_t>(l) * width, width);
    const cpu::DrawContext ctx{options_.seed, layer_stream(stream, static_cast<int>(l)), fanouts[0], options_.replace,
                               graph_.edge_weights};
    cpu::RelationDraws relations;
    if (!graph_.hetero.empty()) relations = {graph_.hetero.type_per_edge, fanouts};
    batch.blocks.push_back(cpu::neighbor_layer(graph_.csc, dst, ctx, options_.edge_ids, pool, relations));
    dst = batch.blocks.back().src_nodes;
  }
  return batch;
}

MiniBatch NeighborSampler::sample_temporal(std::span<const int64_t> seeds, std::span<const int64_t> seed_times,
                                           uint64_t stream, ThreadPool* pool) const {
  GRAPHTIER_EXPECTS(graph_.temporal != nullptr, InvalidArgument,
                    "temporal sampling needs the graph's time order (SampleGraph::temporal): the graph has no times");
  check_temporal_seeds(seeds, seed_times, graph_.csc.num_nodes());
  MiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  std::vector<int64_t> seed_trees(seeds.size());
  for (std::size_t i = 0; i < seeds.size(); ++i) seed_trees[i] = static_cast<int64_t>(i);
  std::span<const int64_t> dst = batch.seeds;
  std::span<const int64_t> trees = seed_trees;
  batch.blocks.reserve(static_cast<std::size_t>(num_layers_));
  const auto width = static_cast<std::size_t>(std::max<int64_t>(1, graph_.hetero.num_relations()));
  for (int64_t l = 0; l < num_layers_; ++l) {
    const std::span<const int64_t> fanouts(fanout_table_.data() + static_cast<std::size_t>(l) * width, width);
    cpu::TemporalDrawContext ctx{options_.seed, layer_stream(stream, static_cast<int>(l)), fanouts[0],
                                 options_.replace, options_.temporal_strategy};
    if (!graph_.hetero.empty()) {
      ctx.type_per_edge = graph_.hetero.type_per_edge;
      ctx.relation_fanouts = fanouts;
    }
    batch.blocks.push_back(cpu::temporal_layer(graph_.csc, *graph_.temporal, dst, trees, seed_times, ctx,
                                               options_.edge_ids, pool));
    dst = batch.blocks.back().src_nodes;
    trees = batch.blocks.back().src_trees;
  }
  return batch;
}

}  // namespace graphtier::sample
