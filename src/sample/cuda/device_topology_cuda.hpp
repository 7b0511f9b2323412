// What the GPU kernels read of a DeviceTopology, and the CUDA entry points behind the front door
// (src/sample/cuda_neighbor_sampler.cpp). Plain C++: compiled by g++ and nvcc alike.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graphtier/sample/cuda_neighbor_sampler.hpp"

namespace graphtier::sample {

/// Every pointer is one the device can dereference (device memory, or the device alias of mapped
/// pinned memory). Edge positions below split_edge (the neighbour lists of nodes [0, H)) are read
/// from the hot arrays, the others from the cold arrays at p - split_edge.
struct DeviceTopology::State {
  TopologyPlacement placement = TopologyPlacement::kDevice;
  int device = 0;
  int64_t num_nodes = 0;
  int64_t num_edges = 0;
  int64_t cached_nodes = 0;
  int64_t split_edge = 0;
  bool index64 = false;
  bool weighted = false;
  const int64_t* indptr = nullptr;
  const void* hot_indices = nullptr;  // int32 or int64 per index64
  const void* cold_indices = nullptr;
  const float* hot_weights = nullptr;
  const float* cold_weights = nullptr;
  int64_t device_bytes = 0;
  int64_t pinned_bytes = 0;
  std::vector<std::shared_ptr<void>> owned;  // device and pinned allocations, freed with the state
};

namespace cuda {

/// Copies `graph` where `options` says (synchronous).
std::unique_ptr<DeviceTopology::State> upload_topology(const SampleGraph& graph, const TopologyOptions& options);

/// The layer loop on the GPU; inputs already validated.
DeviceMiniBatch sample_device(const DeviceTopology::State& topology, const NeighborSamplerOptions& options,
                              std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream);

/// Copies `count` int64 from device memory to the host after the work queued on `stream`.
void copy_to_host(int64_t* dst, const int64_t* src, int64_t count, CudaStream stream, int device);

/// Waits for `stream`.
void synchronize(CudaStream stream, int device);

}  // namespace cuda
}  // namespace graphtier::sample
