// Node-wise neighbour sampling (GraphSAGE) on the GPU: the same draws as the CPU NeighborSampler
// (neighbor_sampler.hpp), so both produce identical MiniBatches for the same seed and stream.
//
// The topology is read from device memory, from pinned host memory through zero-copy, or from a
// hot-prefix adjacency cache (DUCATI): after `prepare` node ids are in hotness order, so the
// neighbour lists of nodes [0, H) sit in device memory and the rest are read through zero-copy.
//
// Plain C++: no CUDA headers. A build without CUDA, or a machine without a GPU, throws
// Unsupported from the DeviceTopology constructor.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graphtier/sample/minibatch.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"

namespace graphtier::sample {

/// A cudaStream_t, opaque so that this header stays CUDA-free. nullptr = the legacy default stream.
struct CudaStream {
  void* handle = nullptr;
};

/// A non-blocking stream of the caller's own on `device`: its work never waits for the legacy
/// default stream, where PyTorch computes unless told otherwise (the loader samples on one, so that
/// sampling overlaps training). Throws Unsupported without CUDA or a GPU.
class OwnedCudaStream {
 public:
  explicit OwnedCudaStream(int device = 0);
  ~OwnedCudaStream();
  OwnedCudaStream(const OwnedCudaStream&) = delete;
  OwnedCudaStream& operator=(const OwnedCudaStream&) = delete;

  CudaStream get() const noexcept { return stream_; }

 private:
  CudaStream stream_;
  int device_ = 0;
};

enum class TopologyPlacement {
  kDevice,  // indptr, indices and weights in device memory
  kPinned,  // all of them in mapped pinned host memory, read by the GPU through zero-copy
  kCached,  // indptr in device memory; the neighbour lists of nodes [0, H) in device memory, the
            // rest pinned (H: the largest prefix whose indices and weights fit cache_bytes)
};

struct TopologyOptions {
  TopologyPlacement placement = TopologyPlacement::kDevice;
  int64_t cache_bytes = 0;  // kCached: device bytes for the hot prefix's indices (+ weights)
  int device = 0;
};

/// A copy of a SampleGraph (CSC indptr int64, indices int32 or int64 kept as they are, optional
/// float weights) where the GPU can read it. Owns that memory; the host graph may be freed after
/// construction. Immutable, so one topology may serve several samplers and streams at once.
class DeviceTopology {
 public:
  /// Validates the graph as check_sampler_inputs does, then copies it (synchronously). Throws
  /// Unsupported without CUDA or a GPU, InvalidArgument for a negative cache budget.
  DeviceTopology(const SampleGraph& graph, TopologyOptions options = {});
  ~DeviceTopology();
  DeviceTopology(DeviceTopology&&) noexcept;
  DeviceTopology& operator=(DeviceTopology&&) noexcept;

  TopologyPlacement placement() const noexcept;
  int device() const noexcept;
  int64_t num_nodes() const noexcept;
  int64_t num_edges() const noexcept;
  bool weighted() const noexcept;
  /// H: nodes [0, H) have their neighbour lists in device memory (all for kDevice, 0 for kPinned).
  int64_t cached_nodes() const noexcept;
  int64_t device_bytes() const noexcept;
  int64_t pinned_bytes() const noexcept;

  struct State;  // backend detail (src/sample/cuda/device_topology_cuda.hpp)
  const State& state() const noexcept { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

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
