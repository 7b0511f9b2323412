// Front door of neighbour sampling: argument checks, and the layer loop of the CPU backend
// (the layer in cpu/neighbor_sampler_cpu.cpp: draws in cpu/neighbor_draws.cpp, compaction in
// cpu/compact_cpu.cpp).
#include "graphtier/sample/neighbor_sampler.hpp"

#include <cmath>

#include "graphtier/core/error.hpp"
#include "graphtier/sample/random.hpp"
#include "cpu/neighbor_sampler_cpu.hpp"

namespace graphtier::sample {

void check_sampler_inputs(const SampleGraph& graph, const NeighborSamplerOptions& options) {
  check_sample_graph(graph, "sampler graph");
  GRAPHTIER_EXPECTS(!options.fanouts.empty(), InvalidArgument, "fanouts: at least one layer is needed");
  for (std::size_t l = 0; l < options.fanouts.size(); ++l) {
    const int64_t f = options.fanouts[l];
    GRAPHTIER_EXPECTS(f >= -1 && f < kMaxDraws, InvalidArgument, "fanouts[", l, "] is ", f,
                      ": expected -1 (all neighbours), 0, or a count below 2^24");
  }
  if (!graph.edge_weights.empty()) {
    GRAPHTIER_EXPECTS(static_cast<int64_t>(graph.edge_weights.size()) == graph.csc.num_edges(), InvalidArgument,
                      "edge weights: ", graph.edge_weights.size(), " values for ", graph.csc.num_edges(), " edges");
    for (std::size_t e = 0; e < graph.edge_weights.size(); ++e) {
      const float w = graph.edge_weights[e];
      GRAPHTIER_EXPECTS(std::isfinite(w) && w >= 0, InvalidArgument, "edge weight ", e, " is ", w,
                        ": weights must be finite and >= 0");
    }
  }
}

NeighborSampler::NeighborSampler(SampleGraph graph, NeighborSamplerOptions options)
    : graph_(graph), options_(std::move(options)) {
  check_sampler_inputs(graph_, options_);
}

MiniBatch NeighborSampler::sample(std::span<const int64_t> seeds, uint64_t stream, ThreadPool* pool) const {
  check_seeds(seeds, graph_.csc.num_nodes());
  MiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  std::span<const int64_t> dst = batch.seeds;
  batch.blocks.reserve(options_.fanouts.size());
  for (std::size_t l = 0; l < options_.fanouts.size(); ++l) {
    const cpu::DrawContext ctx{options_.seed, layer_stream(stream, static_cast<int>(l)), options_.fanouts[l],
                               options_.replace, graph_.edge_weights};
    batch.blocks.push_back(cpu::neighbor_layer(graph_.csc, dst, ctx, options_.edge_ids, pool));
    dst = batch.blocks.back().src_nodes;
  }
  return batch;
}

}  // namespace graphtier::sample
