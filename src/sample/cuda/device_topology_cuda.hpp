// What the GPU kernels read of a DeviceTopology, and its upload behind the front door
// (src/sample/device_topology.cpp). Plain C++: compiled by g++ and nvcc alike.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "graphtier/sample/device_topology.hpp"

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
  // A typed graph (SampleGraph::hetero): each edge's relation, split at split_edge like the
  // indices, and the node types' id ranges [num_node_types + 1] in device memory. Untyped: 0 and null.
  int num_relations = 0;
  int num_node_types = 0;
  const uint8_t* hot_types = nullptr;
  const uint8_t* cold_types = nullptr;
  const int64_t* node_type_offset = nullptr;
  // A temporal graph (SampleGraph::temporal): its TemporalIndex's order and time, split at
  // split_edge like the indices (a column is all hot or all cold). Untimed: false and null.
  bool temporal = false;
  const int64_t* hot_order = nullptr;
  const int64_t* cold_order = nullptr;
  const int64_t* hot_time = nullptr;
  const int64_t* cold_time = nullptr;
  int64_t device_bytes = 0;
  int64_t pinned_bytes = 0;
  std::vector<std::shared_ptr<void>> owned;  // device and pinned allocations, freed with the state
};

namespace cuda {

/// Copies `graph` where `options` says (synchronous).
std::unique_ptr<DeviceTopology::State> upload_topology(const SampleGraph& graph, const TopologyOptions& options);

}  // namespace cuda
}  // namespace graphtier::sample
