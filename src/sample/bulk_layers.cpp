#include "bulk_layers.hpp"

#include "graphtier/core/error.hpp"
#include "graphtier/sample/random.hpp"
#include "cpu/compact_cpu.hpp"

namespace graphtier::sample::bulk {

StackedFrontier stack_frontier(std::span<const std::span<const int64_t>> dsts, std::span<const uint64_t> streams,
                               const BulkSamplerOptions& options, int layer) {
  const bool ladies = options.algorithm == BulkAlgorithm::kLadies;
  StackedFrontier frontier;
  frontier.offsets.push_back(0);
  for (std::size_t b = 0; b < dsts.size(); ++b) {
    const std::span<const int64_t> dst = dsts[b];
    GRAPHTIER_EXPECTS(!ladies || static_cast<int64_t>(dst.size()) <= kMaxLadiesFrontier, InvalidArgument,
                      "LADIES layer ", layer, " of batch ", b, " has ", dst.size(), " dst nodes; at most ",
                      kMaxLadiesFrontier, " keep the probabilities exact");
    frontier.nodes.insert(frontier.nodes.end(), dst.begin(), dst.end());
    frontier.offsets.push_back(frontier.rows());
    frontier.layer_streams.push_back(sample::layer_stream(streams[b], layer));
  }
  return frontier;
}

void compact_blocks(const StackedFrontier& frontier, const StackedDraws& draws, bool edge_ids,
                    std::span<Block* const> blocks, ThreadPool* pool) {
  const int64_t k = frontier.num_batches();
  const auto compact = [&](int64_t b) {
    const int64_t r0 = frontier.offsets[b], r1 = frontier.offsets[b + 1];
    const int64_t e0 = draws.indptr[r0], e1 = draws.indptr[r1];
    Block& block = *blocks[b];
    block.num_dst = r1 - r0;
    block.indptr.resize(static_cast<std::size_t>(r1 - r0 + 1));
    for (int64_t r = r0; r <= r1; ++r) block.indptr[r - r0] = draws.indptr[r] - e0;
    const std::span<const int64_t> dst(frontier.nodes.data() + r0, static_cast<std::size_t>(r1 - r0));
    const std::span<const int64_t> neighbours(draws.nodes.data() + e0, static_cast<std::size_t>(e1 - e0));
    cpu::compact_layer(dst, neighbours, block.src_nodes, block.indices);
    if (edge_ids) block.edge_ids.assign(draws.edge_ids.begin() + e0, draws.edge_ids.begin() + e1);
    if (!draws.weights.empty()) block.weights.assign(draws.weights.begin() + e0, draws.weights.begin() + e1);
  };
  if (pool == nullptr || k == 1) {
    for (int64_t b = 0; b < k; ++b) compact(b);
  } else {
    pool->parallel_for(0, k, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b) compact(b);
    });
  }
}

std::vector<MiniBatch> run_layers(std::span<const std::span<const int64_t>> batches_of_seeds,
                                  std::span<const uint64_t> streams, const BulkSamplerOptions& options,
                                  int64_t num_nodes, const LayerSampler& sample_layer, ThreadPool* pool) {
  const auto k = static_cast<int64_t>(batches_of_seeds.size());
  GRAPHTIER_EXPECTS(streams.size() == batches_of_seeds.size(), InvalidArgument, "bulk sampling of ", k,
                    " batches got ", streams.size(), " streams (one per batch)");
  std::vector<MiniBatch> batches(static_cast<std::size_t>(k));
  for (int64_t b = 0; b < k; ++b) {
    check_seeds(batches_of_seeds[b], num_nodes);
    batches[b].seeds.assign(batches_of_seeds[b].begin(), batches_of_seeds[b].end());
    batches[b].blocks.resize(options.fanouts.size());
  }
  std::vector<std::span<const int64_t>> dsts(static_cast<std::size_t>(k));
  std::vector<Block*> blocks(static_cast<std::size_t>(k));
  for (std::size_t l = 0; l < options.fanouts.size(); ++l) {
    for (int64_t b = 0; b < k; ++b) {
      dsts[b] = l == 0 ? std::span<const int64_t>(batches[b].seeds)
                       : std::span<const int64_t>(batches[b].blocks[l - 1].src_nodes);
      blocks[b] = &batches[b].blocks[l];
    }
    const StackedFrontier frontier = stack_frontier(dsts, streams, options, static_cast<int>(l));
    compact_blocks(frontier, sample_layer(frontier, static_cast<int>(l)), options.edge_ids, blocks, pool);
  }
  return batches;
}

}  // namespace graphtier::sample::bulk
