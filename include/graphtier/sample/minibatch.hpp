// The output of every sampler (docs/architecture.md, MiniBatch): per-layer CSC blocks in message-flow-graph
// order, as DGL, GraphBolt and PyG lay them out.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace graphtier::sample {

/// One layer: a bipartite CSC graph from `src_nodes` (messages' sources) to its first `num_dst`
/// entries (the dst nodes are a prefix of the src nodes). Host memory, owned.
struct Block {
  int64_t num_dst = 0;
  std::vector<int64_t> src_nodes;  // [num_src] global ids, no duplicates; dst nodes first
  std::vector<int64_t> indptr;     // [num_dst + 1], 0 .. num_edges
  std::vector<int64_t> indices;    // [num_edges] local positions in src_nodes
  std::vector<int64_t> edge_ids;   // [num_edges] positions in the input graph's indices, or empty
  std::vector<float> weights;      // [num_edges] edge values (LADIES/FastGCN normalisation), or empty

  int64_t num_src() const noexcept { return static_cast<int64_t>(src_nodes.size()); }
  int64_t num_edges() const noexcept { return indptr.empty() ? 0 : indptr.back(); }
  std::span<const int64_t> dst_nodes() const noexcept { return {src_nodes.data(), static_cast<std::size_t>(num_dst)}; }
};

/// blocks[0] is next to the seeds, blocks[L-1] next to the input features: the dst nodes of block
/// l are exactly the src nodes of block l-1 (the seeds for block 0). Node order in every block:
/// the dst nodes in order, then newly reached nodes in order of first appearance in the block's
/// indices (dst by dst, each dst's edges in order). No duplicates.
struct MiniBatch {
  std::vector<int64_t> seeds;
  std::vector<Block> blocks;

  /// The nodes whose features the first GNN layer reads: src of the last block (the seeds when
  /// there are no blocks).
  std::span<const int64_t> input_nodes() const noexcept {
    return blocks.empty() ? std::span<const int64_t>(seeds) : std::span<const int64_t>(blocks.back().src_nodes);
  }
  int64_t num_edges() const noexcept;
};

/// Checks the contract above (shapes, prefix and chaining, no duplicates, local and global ids in
/// range, edge ids in [0, num_graph_edges) when present); throws InvalidArgument saying which
/// block breaks which rule. For tests, tools and debug builds: O(size of the batch).
void check_minibatch(const MiniBatch& batch, int64_t num_graph_nodes, int64_t num_graph_edges);

/// {"seeds": [...], "input_nodes": [...], "blocks": [{"num_dst", "src_nodes", "indptr", "indices",
/// "edge_ids"?, "weights"?}, ...]}: the `graphtier sample --json` output.
std::string minibatch_to_json(const MiniBatch& batch);

}  // namespace graphtier::sample
