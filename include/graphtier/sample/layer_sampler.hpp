// Layer-wise sampling: LADIES (Zou et al., 2019) and FastGCN (Chen et al., 2018), as the
// matrix-based bulk sampling paper (§2.2.2 and §4.2; docs/references.md) describes them. Each
// layer draws one set of nodes shared by all its dst nodes, instead of neighbours per dst node.
//
// Definitions (the CPU and CUDA backends follow them exactly, so both give the same MiniBatch):
//   Â = row-normalised (A + I): row i (a dst node, in-degree d_i counting every CSC entry) holds
//   1 / (d_i + 1) at each of its CSC entries and at the added self-loop. Every CSC entry is its own
//   nonzero: multi-edges and stored self-loops are not merged (equal to the matrix definition on
//   simple graphs, the usual case after `prepare`).
//   Column weight c_u = Σ over the nonzeros (i, u) of the rows used of Â[i, u]^2, in fixed point:
//   each nonzero adds floor(2^62 / (d_i + 1)^2) (at least 1) to a 128-bit integer, so the sum is
//   exact and independent of summation order. With T = Σ_u c_u over the candidates and
//   k = max(0, bits(T) - 52), the draw weight is w_u = max(1, c_u >> k) (all < 2^53 in total, so
//   every weight and every sum of them is exact in double); p_u = w_u / Σ w.
//   - LADIES: the rows used are the layer's dst nodes; the candidates are their in-neighbours and
//     themselves (A + I), in ascending id order.
//   - FastGCN: the rows used are all nodes (layer-independent importance, computed once when the
//     sampler is built); the candidates are all nodes in id order.
//   Draw (successive sampling without replacement, the law of numpy's choice(replace=False, p) as
//   in the LADIES and FastGCN reference code), as a race: each candidate u gets a key
//   K_u ~ Exp(w_u) and the s smallest (key, candidate position) pairs win, which has exactly the
//   successive-sampling law (Efraimidis-Spirakis). The keys come from the layer's stream
//   (seed, layer_stream) top-down over a complete binary tree of the weights, defined exactly in
//   layer_draws.hpp (race_root_key, race_child_key), so that the host finds the winners in
//   O(s log #candidates) and the device in parallel, with the same bits. s = min(layer size,
//   #candidates); layer size -1 (or >= #candidates) takes every candidate without drawing, 0 draws
//   nothing.
//   Block l: dst = the previous block's src nodes (the seeds for block 0). The layer keeps its dst
//   nodes: the src set is dst ∪ drawn. Row i lists its CSC entries u (position order) with u in
//   the src set, then its self-loop (i, i) last. src_nodes = dst, then the other nodes in order of
//   first appearance in the block's indices (so a FastGCN node with no edge to this layer's dst is
//   dropped: it would carry no message). weights[e] for edge (i, u) = (1 / w_u) / Σ_{e' in row i}
//   (1 / w_u') in double, rounded to float: Â[i, u] / p_u row-normalised (LADIES' debiasing), so
//   every row sums to 1 (Â[i, u] is the same for the whole row, so it cancels). The sum is a
//   pairwise tree over the row's terms in edge order: the complete binary tree over them padded
//   with zeros to a power of two (src/sample/layer_row_sums.hpp), which the device computes with
//   whole warps, however long the row. Block::edge_ids is left empty: the self-loops are not
//   edges of the graph, and check_minibatch wants ids in [0, E).
// Choices: the paper's §4.2 matrix form (P = Q·A, rows divided by their sums) weights a column by
// its number of batch neighbours; we follow LADIES itself (squared norms of the row-normalised
// A + I). FastGCN's paper draws i.i.d.; repeats would break the MiniBatch rule
// of no duplicates, so it draws without replacement like the LADIES authors' FastGCN baseline.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/sample/device_topology.hpp"
#include "graphtier/sample/minibatch.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"

namespace graphtier::sample {

enum class LayerMethod : uint8_t { kLadies, kFastGcn };

struct LayerSamplerOptions {
  /// Nodes drawn per block, blocks[0] first (the CLI's "fanouts"): -1 = every candidate,
  /// 0 = none (the block keeps only its dst nodes and their self-loops).
  std::vector<int64_t> layer_sizes;
  LayerMethod method = LayerMethod::kLadies;
  uint64_t seed = 0;
};

/// Throws InvalidArgument for bad options (no layers, a size < -1 or >= 2^24), a graph the draws
/// cannot address (2^40 nodes or more) or edge weights (the layer samplers use the structure only).
void check_layer_sampler_inputs(const SampleGraph& graph, const LayerSamplerOptions& options);

/// CPU backend. Thread-safe: one sampler may serve several threads at once. FastGCN builds its
/// global probabilities and their race tree (O(nodes + edges), at most 24 bytes per node) in the
/// constructor.
class LayerSampler {
 public:
  LayerSampler(SampleGraph graph, LayerSamplerOptions options);

  /// Samples the MiniBatch of `seeds` for minibatch `stream`. With a pool, the block edges of each
  /// layer are built in parallel; the result does not depend on the pool.
  MiniBatch sample(std::span<const int64_t> seeds, uint64_t stream, ThreadPool* pool = nullptr) const;

  /// FastGCN's draw weights w_u, one per node (empty for LADIES).
  std::span<const uint64_t> fastgcn_weights() const noexcept { return fastgcn_weights_; }
  const LayerSamplerOptions& options() const noexcept { return options_; }
  const SampleGraph& graph() const noexcept { return graph_; }

 private:
  SampleGraph graph_;
  LayerSamplerOptions options_;
  std::vector<uint64_t> fastgcn_weights_;  // [num_nodes] (FastGCN only)
  std::vector<uint64_t> fastgcn_tree_;     // race tree of fastgcn_weights_ (layer_draws.hpp)
};

/// CUDA backend: the same MiniBatch as LayerSampler for the same inputs, bit for bit. Reads the
/// graph from `topology` (borrowed: it must outlive the sampler; any placement, no edge weights),
/// as CudaNeighborSampler does, and keeps a host copy of the row pointers of `graph` (the same graph
/// on the host, read only by the constructor; 8 bytes per node: the host sizes every array from
/// the dst rows' degrees instead of asking the device). Throws Unsupported in a build without CUDA
/// or on a machine without a GPU. sample() runs on `cuda_stream` (default: the legacy default
/// stream), allocates its scratch stream-ordered (from the device pool, which keeps its memory),
/// and returns host memory. Synchronisation budget: one per layer (each block comes back through
/// pinned staging in one wait), none for an empty layer; no pageable copies.
/// sample_device leaves the blocks in device memory (DeviceMiniBatch, minibatch.hpp:
/// every array sized by the host's bounds and allocated stream-ordered from the kept pool, owned
/// by `storage`) with the same budget, one wait per non-empty layer (DeviceMiniBatch::host_syncs):
/// it reads four counts through pinned staging, the block's edges and new nodes and the next
/// layer's bounds (the row nonzeros of the block's src nodes, their sum and largest, found on the
/// device); with a sink, the device writes the input node ids into the sink's page-locked memory
/// before the last wait.
/// Several threads may sample at once on different streams.
class CudaLayerSampler {
 public:
  CudaLayerSampler(const DeviceTopology& topology, SampleGraph graph, LayerSamplerOptions options);
  ~CudaLayerSampler();
  CudaLayerSampler(CudaLayerSampler&&) noexcept;
  CudaLayerSampler& operator=(CudaLayerSampler&&) noexcept;

  MiniBatch sample(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream = {}) const;

  /// The same sample left in device memory, complete when this returns (readable from any
  /// stream); blocks carry their edge weights (DeviceBlock::weights). With `input_nodes`, the
  /// input node ids also reach the host within the last layer's wait.
  DeviceMiniBatch sample_device(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream = {},
                                const InputNodesSink& input_nodes = {}) const;

  const LayerSamplerOptions& options() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphtier::sample
