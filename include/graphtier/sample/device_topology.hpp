// The one copy of a graph's topology where the GPU reads it, shared by every CUDA sampler
// (CudaNeighborSampler, CudaLayerSampler).
//
// The topology is read from device memory, from pinned host memory through zero-copy, or from a
// hot-prefix adjacency cache (DUCATI's, docs/references.md, Mini-batch training survey): after
// `prepare` node ids are in hotness order, so the neighbour lists of nodes [0, H) sit in device
// memory and the rest are read through zero-copy.
//
// Plain C++: no CUDA headers. A build without CUDA, or a machine without a GPU, throws
// Unsupported from the DeviceTopology constructor.
#pragma once

#include <cstdint>
#include <memory>

#include "graphtier/sample/neighbor_sampler.hpp"

namespace graphtier::sample {

enum class TopologyPlacement {
  kDevice,  // indptr, indices and weights in device memory
  kPinned,  // all of them in mapped pinned host memory, read by the GPU through zero-copy
  kCached,  // indptr in device memory; the neighbour lists of nodes [0, H) in device memory, the
            // rest pinned (H: the largest prefix whose indices, weights, relation ids and temporal
            // order and times fit cache_bytes)
};

struct TopologyOptions {
  TopologyPlacement placement = TopologyPlacement::kDevice;
  int64_t cache_bytes = 0;  // kCached: device bytes for the hot prefix's indices (+ weights, + relations,
                            // + 16 per edge of a temporal graph's order and times)
  int device = 0;
};

/// A copy of a SampleGraph (CSC indptr int64, indices int32 or int64 kept as they are, optional
/// float weights, a typed graph's uint8 relation per edge and node type offsets, a temporal graph's
/// TemporalIndex order and times, int64 each) where the GPU can read it. Owns that memory; the host graph may be freed after
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
  /// The typed graph's relations (SampleGraph::hetero), 0 for an untyped graph.
  int32_t num_relations() const noexcept;
  /// Whether it holds the graph's TemporalIndex (SampleGraph::temporal): what GPU temporal sampling
  /// reads.
  bool temporal() const noexcept;
  /// H: nodes [0, H) have their neighbour lists in device memory (all for kDevice, 0 for kPinned).
  int64_t cached_nodes() const noexcept;
  int64_t device_bytes() const noexcept;
  int64_t pinned_bytes() const noexcept;

  struct State;  // backend detail (src/sample/cuda/device_topology_cuda.hpp)
  const State& state() const noexcept { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

}  // namespace graphtier::sample
