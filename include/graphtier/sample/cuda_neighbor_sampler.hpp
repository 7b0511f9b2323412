// Node-wise neighbour sampling (GraphSAGE) on the GPU: the same draws as the CPU NeighborSampler
// (neighbor_sampler.hpp), so both produce identical MiniBatches for the same seed and stream. The
// topology is a DeviceTopology (device_topology.hpp), in any of its placements.
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

/// One layer of a DeviceMiniBatch: the Block contract (minibatch.hpp) in device memory, every
/// array int64. The pointers stay valid while the DeviceMiniBatch that holds them lives.
struct DeviceBlock {
  int64_t num_dst = 0;
  int64_t num_src = 0;
  int64_t num_edges = 0;
  const int64_t* src_nodes = nullptr;  // [num_src] global ids, dst nodes first
  const int64_t* indptr = nullptr;     // [num_dst + 1]
  const int64_t* indices = nullptr;    // [num_edges] local positions in src_nodes
  const int64_t* edge_ids = nullptr;   // [num_edges], or nullptr when the options ask for none
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

  /// Copies the blocks to the host (waits for the stream).
  MiniBatch to_host() const;
};

/// CUDA backend of neighbour sampling. One sampler may be used from several host threads at once
/// as long as each uses its own stream.
class CudaNeighborSampler {
 public:
  /// Borrows `topology` (it must outlive the sampler). Throws InvalidArgument for bad options.
  CudaNeighborSampler(const DeviceTopology& topology, NeighborSamplerOptions options);

  /// Samples the MiniBatch of `seeds` (host memory) for minibatch `stream`, identical to
  /// NeighborSampler::sample. Blocks until the result is on the host.
  MiniBatch sample(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream = {}) const;

  /// The same sample left in device memory. The host waits on `cuda_stream` twice per layer (to
  /// size the edge and node arrays); the last layer's node compaction may still be in flight
  /// when this returns.
  DeviceMiniBatch sample_device(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream = {}) const;

  const NeighborSamplerOptions& options() const noexcept { return options_; }
  const DeviceTopology& topology() const noexcept { return *topology_; }

 private:
  const DeviceTopology* topology_;
  NeighborSamplerOptions options_;
};

}  // namespace graphtier::sample
