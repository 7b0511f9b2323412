// Node-wise neighbour sampling (GraphSAGE) on the GPU: the same draws as the CPU NeighborSampler
// (neighbor_sampler.hpp), so both produce identical MiniBatches for the same seed and stream. The
// topology is a DeviceTopology (device_topology.hpp), in any of its placements. A typed graph's
// topology is sampled per relation (NeighborSamplerOptions::relation_fanouts), with the CPU's
// blocks, edge_types included. A temporal topology (DeviceTopology::temporal) is sampled from seed
// times (sample_temporal), with the CPU's blocks, src_trees included.
//
// Plain C++: no CUDA headers. A build without CUDA, or a machine without a GPU, throws
// Unsupported from the DeviceTopology constructor.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/sample/device_topology.hpp"
#include "graphtier/sample/minibatch.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"

namespace graphtier::sample {

namespace cuda {
class PinnedStagingPool;
}

/// CUDA backend of neighbour sampling. One sampler may be used from several host threads at once
/// as long as each uses its own stream.
///
/// Synchronisation budget: sample_device waits for the device ONCE per minibatch, plus once per
/// layer of fanout -1 (typed: of a relation's fanout -1). Every array is sized on the host by upper bounds (a layer of fanout f > 0
/// keeps at most nd * f edges, and at most the graph's edge count without replacement; new nodes
/// are at most the edges, src nodes at most nd + edges and at most the graph's nodes), the real
/// sizes stay in device memory where the kernels read them, and the host reads all layers' sizes
/// at the end in one asynchronous copy to pinned memory. Fanout -1 has no bound short of the
/// graph's edge count, so the host reads that layer's edge count before sizing its edge arrays.
/// DeviceMiniBatch::host_syncs counts the waits. Memory: the arrays hold the bounds, not the real
/// sizes: for 1024 seeds and fanouts [15, 10, 5] on a large graph, 27.7 MiB of batch arrays and
/// 90.1 MiB of workspace (reused across layers; 64 MiB of it the last layer's compaction hash
/// table, whose clearing and probing still follow the real sizes). The pinned staging of the
/// seeds and sizes is a pool the sampler keeps (one buffer per call in flight); the device arrays
/// come from the stream-ordered pool (no cudaMalloc/cudaFree per minibatch). Hubs (degree >=
/// 10240, neighbor_steps.hpp) whose draw costs in proportion to the degree are sampled by a
/// whole thread block, with no extra synchronisation.
class CudaNeighborSampler {
 public:
  /// Borrows `topology` (it must outlive the sampler). Throws InvalidArgument for bad options.
  CudaNeighborSampler(const DeviceTopology& topology, NeighborSamplerOptions options);

  /// Samples the MiniBatch of `seeds` (host memory) for minibatch `stream`, identical to
  /// NeighborSampler::sample. Blocks until the result is on the host.
  MiniBatch sample(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream = {}) const;

  /// The same sample left in device memory. The host waits on `cuda_stream` once (plus once per
  /// layer of fanout -1), at the end, to read the sizes: the arrays are complete when this
  /// returns, and may be read from any stream. With `input_nodes`, the input node ids also reach
  /// the host within that one wait (written by the device into the sink's page-locked memory).
  DeviceMiniBatch sample_device(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream = {},
                                const InputNodesSink& input_nodes = {}) const;

  /// Temporal sampling (temporal.hpp) on the GPU, identical to NeighborSampler::sample_temporal
  /// over the same graph: seed i roots tree i of time seed_times[i], every block has src_trees. The
  /// topology must hold the graph's TemporalIndex (DeviceTopology::temporal), else
  /// InvalidArgument; a typed temporal graph throws Unsupported (the CPU samples it). The same
  /// synchronisation budget as sample_device (once per minibatch, plus once per layer of fanout
  /// -1), and the same memory: the bounds count a node once per tree (trees * nodes keys, trees *
  /// edges edges without replacement), every array from the stream-ordered pool or reused scratch.
  MiniBatch sample_temporal(std::span<const int64_t> seeds, std::span<const int64_t> seed_times, uint64_t stream,
                            CudaStream cuda_stream = {}) const;
  DeviceMiniBatch sample_temporal_device(std::span<const int64_t> seeds, std::span<const int64_t> seed_times,
                                         uint64_t stream, CudaStream cuda_stream = {},
                                         const InputNodesSink& input_nodes = {}) const;

  const NeighborSamplerOptions& options() const noexcept { return options_; }
  const DeviceTopology& topology() const noexcept { return *topology_; }

  /// An upper bound of the device bytes one call with `num_seeds` seeds allocates on its stream
  /// (the minibatch's arrays and the call's workspace with its headroom, all sized by the layers'
  /// bounds), or -1 when a fanout -1 layer leaves it unbounded until sampled. What a caller
  /// sampling on k streams at once checks k times against the free memory (the loader does).
  int64_t device_bytes_bound(int64_t num_seeds) const;

 private:
  const DeviceTopology* topology_;
  NeighborSamplerOptions options_;
  std::vector<int64_t> fanout_table_;   // relation_fanout_table for the topology's relations
  std::vector<int64_t> layer_fanouts_;  // per layer: its fanout, or typed::layer_fanout_bound
  std::shared_ptr<cuda::PinnedStagingPool> staging_;  // null without CUDA
};

}  // namespace graphtier::sample
