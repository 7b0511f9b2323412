// The output of every sampler (docs/architecture.md, MiniBatch): per-layer CSC blocks in message-flow-graph
// order, as DGL, GraphBolt and PyG lay them out; in host memory (MiniBatch) or, from the GPU
// samplers, in device memory (DeviceMiniBatch).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/graph/hetero_view.hpp"

namespace graphtier::sample {

/// One layer: a bipartite CSC graph from `src_nodes` (messages' sources) to its first `num_dst`
/// entries (the dst nodes are a prefix of the src nodes). Host memory, owned.
struct Block {
  int64_t num_dst = 0;
  std::vector<int64_t> src_nodes;  // [num_src] global ids, no duplicates (per tree); dst nodes first
  std::vector<int64_t> indptr;     // [num_dst + 1], 0 .. num_edges
  std::vector<int64_t> indices;    // [num_edges] local positions in src_nodes
  std::vector<int64_t> edge_ids;   // [num_edges] positions in the input graph's indices, or empty
  std::vector<float> weights;      // [num_edges] edge values (LADIES/FastGCN normalisation), or empty
  /// [num_edges] the relation id of each edge (graph/hetero_view.hpp), typed graphs only, else
  /// empty. Within a dst node's edges, relations ascend. split_block (hetero_block.hpp) splits a
  /// block by node type and relation.
  std::vector<uint8_t> edge_types;
  /// [num_src] the tree (seed index) of each src node, dst nodes first: temporal sampling's
  /// disjoint trees (temporal.hpp), where a global id may appear once per tree; else empty.
  std::vector<int64_t> src_trees;

  int64_t num_src() const noexcept { return static_cast<int64_t>(src_nodes.size()); }
  int64_t num_edges() const noexcept { return indptr.empty() ? 0 : indptr.back(); }
  std::span<const int64_t> dst_nodes() const noexcept { return {src_nodes.data(), static_cast<std::size_t>(num_dst)}; }
};

/// blocks[0] is next to the seeds, blocks[L-1] next to the input features: the dst nodes of block
/// l are exactly the src nodes of block l-1 (the seeds for block 0). Node order in every block:
/// the dst nodes in order, then newly reached nodes in order of first appearance in the block's
/// indices (dst by dst, each dst's edges in order). No duplicates (temporal batches: no (tree, id)
/// twice; seed i is tree i and its tree's nodes are those whose src_trees is i).
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

/// One layer of a DeviceMiniBatch: the Block contract (minibatch.hpp) in device memory, every
/// array int64 but the weights (float, as Block::weights). The pointers stay valid while the
/// DeviceMiniBatch that holds them lives.
struct DeviceBlock {
  int64_t num_dst = 0;
  int64_t num_src = 0;
  int64_t num_edges = 0;
  const int64_t* src_nodes = nullptr;  // [num_src] global ids, dst nodes first
  const int64_t* indptr = nullptr;     // [num_dst + 1]
  const int64_t* indices = nullptr;    // [num_edges] local positions in src_nodes
  const int64_t* edge_ids = nullptr;   // [num_edges], or nullptr when the options ask for none
  const float* weights = nullptr;      // [num_edges] edge values (layer-wise samplers), or nullptr
  const uint8_t* edge_types = nullptr; // [num_edges] each edge's relation (typed graphs), or nullptr
  const int64_t* src_trees = nullptr;  // [num_src] each src node's tree (temporal batches), or nullptr
};

/// A MiniBatch whose blocks live on the GPU, for the loader. Its arrays are written in order on
/// `stream` and freed in order on it: destroy the batch before the stream, and synchronise the
/// stream (or order work after it) before reading them from another stream.
struct DeviceMiniBatch {
  std::vector<int64_t> seeds;  // host copy
  std::vector<DeviceBlock> blocks;
  CudaStream stream;
  int device = 0;
  std::vector<std::shared_ptr<void>> storage;  // owns the device arrays of `blocks`
  /// Times the host waited for the device while sampling it (the sampler's synchronisation budget).
  int64_t host_syncs = 0;

  /// Copies the blocks to the host (waits for the stream).
  MiniBatch to_host() const;
};

/// Where a device minibatch's input nodes (its last block's src nodes) go on the host: called once,
/// with an upper bound on their count, during sample_device; returns page-locked memory
/// (cudaHostAlloc) for at least that many ids, which the sampler fills before its last host
/// wait. The count is the last block's num_src.
using InputNodesSink = std::function<int64_t*(int64_t bound)>;

/// Where batch `batch`'s input node ids (its last block's src nodes) go on the host in a device-form
/// bulk call: called once per batch, with an upper bound on their count, before the last layer's
/// wait; returns page-locked memory (cudaHostAlloc) for at least that many ids (null or a bound of
/// 0: none wanted), which the device fills before that wait. The count is the last block's num_src.
using BulkInputNodesSink = std::function<int64_t*(int64_t batch, int64_t bound)>;

/// Checks the contract above (shapes, prefix and chaining, no duplicates, local and global ids in
/// range, edge ids in [0, num_graph_edges) when present, edge_types empty or one per edge;
/// src_trees empty in every block or in none, one per src node, each edge within one tree); throws
/// InvalidArgument saying which block breaks which rule. For tests, tools and debug builds: O(size
/// of the batch).
void check_minibatch(const MiniBatch& batch, int64_t num_graph_nodes, int64_t num_graph_edges);
/// The same for a typed graph's batch, and its typed invariants: every block has one relation per
/// edge, each below R, ascending within each dst node's edges, whose src and dst node types are
/// the edge's src and dst nodes' types; with edge ids, the graph's relation of that edge
/// (hetero.type_per_edge). `hetero` must be well formed (check_hetero_view).
void check_minibatch(const MiniBatch& batch, int64_t num_graph_nodes, int64_t num_graph_edges,
                     const graph::HeteroView& hetero);

/// {"seeds": [...], "input_nodes": [...], "blocks": [{"num_dst", "src_nodes", "indptr", "indices",
/// "edge_ids"?, "weights"?, "edge_types"?}, ...]}: the `graphtier sample --json` output.
std::string minibatch_to_json(const MiniBatch& batch);

}  // namespace graphtier::sample
