// Front door of neighbour sampling: argument checks, and the layer loop of the CPU backend
// (draws in cpu/neighbor_draws.cpp, compaction in cpu/compact_cpu.cpp).
#include "graphtier/sample/neighbor_sampler.hpp"

#include <cmath>
#include <variant>

#include "graphtier/core/error.hpp"
#include "graphtier/sample/random.hpp"
#include "cpu/compact_cpu.hpp"
#include "cpu/neighbor_draws.hpp"

namespace graphtier::sample {

void check_sample_graph(const SampleGraph& graph, const char* what) {
  graph.csc.check_shape(what);
  GRAPHTIER_EXPECTS(graph.csc.num_nodes() < kMaxSampleNodes, InvalidArgument, what,
                    ": the samplers address fewer than 2^40 nodes, the graph has ", graph.csc.num_nodes());
}

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

void check_seeds(std::span<const int64_t> seeds, int64_t num_nodes) {
  cpu::IdMap seen(static_cast<int64_t>(seeds.size()));
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    GRAPHTIER_EXPECTS(seeds[i] >= 0 && seeds[i] < num_nodes, OutOfRange, "seed ", seeds[i], " (position ", i,
                      ") is outside [0, ", num_nodes, ")");
    GRAPHTIER_EXPECTS(seen.find_or_insert(seeds[i], static_cast<int64_t>(i)) == static_cast<int64_t>(i), InvalidArgument, "seed ", seeds[i], " appears more than once");
  }
}

NeighborSampler::NeighborSampler(SampleGraph graph, NeighborSamplerOptions options)
    : graph_(graph), options_(std::move(options)) {
  check_sampler_inputs(graph_, options_);
}

namespace {

/// Sampled edges of one layer before compaction: per dst node its chosen edge positions.
struct LayerDraws {
  std::vector<int64_t> indptr;     // [num_dst + 1]
  std::vector<int64_t> positions;  // edge positions in the input graph
};

LayerDraws draw_layer(const SampleGraph& graph, std::span<const int64_t> dst, const cpu::DrawContext& ctx,
                      ThreadPool* pool) {
  const auto n = static_cast<int64_t>(dst.size());
  const std::span<const int64_t> indptr = graph.csc.indptr;
  LayerDraws draws;
  draws.indptr.assign(static_cast<std::size_t>(n + 1), 0);
  const auto draw_range = [&](int64_t lo, int64_t hi, std::vector<int64_t>& out) {
    std::vector<double> scratch;
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t v = dst[i];
      const std::size_t before = out.size();
      cpu::draw_neighbours(ctx, v, indptr[v], indptr[v + 1], out, scratch);
      draws.indptr[i + 1] = static_cast<int64_t>(out.size() - before);
    }
  };
  // Per-part buffers concatenated in part order: the result is the same for any pool size.
  const int parts = pool == nullptr || n < 256 ? 1 : pool->size();
  if (parts == 1) {
    draw_range(0, n, draws.positions);
  } else {
    std::vector<std::vector<int64_t>> chunks(static_cast<std::size_t>(parts));
    pool->parallel_parts(0, n, [&](int part, int64_t lo, int64_t hi) { draw_range(lo, hi, chunks[part]); });
    std::size_t total = 0;
    for (const auto& c : chunks) total += c.size();
    draws.positions.reserve(total);
    for (const auto& c : chunks) draws.positions.insert(draws.positions.end(), c.begin(), c.end());
  }
  for (int64_t i = 0; i < n; ++i) draws.indptr[i + 1] += draws.indptr[i];
  return draws;
}

std::vector<int64_t> neighbour_ids(const graph::IndexSpan& indices, std::span<const int64_t> positions) {
  std::vector<int64_t> ids(positions.size());
  std::visit(
      [&](auto span) {
        for (std::size_t e = 0; e < positions.size(); ++e) ids[e] = static_cast<int64_t>(span[positions[e]]);
      },
      indices);
  return ids;
}

}  // namespace

MiniBatch NeighborSampler::sample(std::span<const int64_t> seeds, uint64_t stream, ThreadPool* pool) const {
  check_seeds(seeds, graph_.csc.num_nodes());
  MiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  std::span<const int64_t> dst = batch.seeds;
  batch.blocks.reserve(options_.fanouts.size());
  for (std::size_t l = 0; l < options_.fanouts.size(); ++l) {
    const cpu::DrawContext ctx{options_.seed, layer_stream(stream, static_cast<int>(l)), options_.fanouts[l],
                               options_.replace, graph_.edge_weights};
    LayerDraws draws = draw_layer(graph_, dst, ctx, pool);
    Block& block = batch.blocks.emplace_back();
    block.num_dst = static_cast<int64_t>(dst.size());
    block.indptr = std::move(draws.indptr);
    const std::vector<int64_t> ids = neighbour_ids(graph_.csc.indices, draws.positions);
    cpu::compact_layer(dst, ids, block.src_nodes, block.indices);
    if (options_.edge_ids) block.edge_ids = std::move(draws.positions);
    dst = block.src_nodes;
  }
  return batch;
}

}  // namespace graphtier::sample
