// What a kernel holds of a DeviceTopology: its device-readable pointers, by value. Every CUDA
// sampler reads the topology through it, so each works with every placement. Only included by .cu
// files.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/device_topology_cuda.hpp"

namespace graphtier::sample::cuda {

/// Edge positions below split_edge are read from the hot arrays, the others from the cold arrays
/// (see DeviceTopology::State). With every list on the device (kDevice) split_edge is num_edges,
/// and the branch always goes the same way.
template <typename Index>
struct TopologyRef {
  const int64_t* indptr;
  const Index* hot_indices;
  const Index* cold_indices;
  const float* hot_weights;
  const float* cold_weights;
  const uint8_t* hot_types;  // null unless the graph is typed
  const uint8_t* cold_types;
  int64_t split_edge;
  // A temporal graph's TemporalIndex (State::temporal), null otherwise: read per column
  // (temporal_column in temporal_sampler_cuda.cu), never per position.
  const int64_t* hot_order;
  const int64_t* cold_order;
  const int64_t* hot_time;
  const int64_t* cold_time;

  __device__ __forceinline__ int64_t index(int64_t p) const {
    return p < split_edge ? static_cast<int64_t>(hot_indices[p]) : static_cast<int64_t>(cold_indices[p - split_edge]);
  }
  __device__ __forceinline__ float weight(int64_t p) const {
    return p < split_edge ? hot_weights[p] : cold_weights[p - split_edge];
  }
  /// Edge p's relation (typed graphs).
  __device__ __forceinline__ uint8_t type(int64_t p) const {
    return p < split_edge ? hot_types[p] : cold_types[p - split_edge];
  }
};

/// `Index` must match the topology's index width (State::index64).
template <typename Index>
TopologyRef<Index> topology_ref(const DeviceTopology::State& t) {
  return {t.indptr, static_cast<const Index*>(t.hot_indices), static_cast<const Index*>(t.cold_indices),
          t.hot_weights, t.cold_weights, t.hot_types, t.cold_types, t.split_edge,
          t.hot_order,   t.cold_order,   t.hot_time,    t.cold_time};
}

}  // namespace graphtier::sample::cuda
