// Uploads a SampleGraph to where the GPU reads it: device memory, mapped pinned host memory, or
// the hot prefix of neighbour lists on the device and the rest pinned (DUCATI's adjacency cache,
// docs/references.md, Mini-batch training survey).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <variant>

#include "cuda_check.cuh"
#include "current_device.cuh"
#include "graphtier/core/device_memory.hpp"
#include "device_scratch.cuh"
#include "memory_cuda.hpp"
#include "cuda/device_topology_cuda.hpp"
#include "graphtier/sample/temporal.hpp"

namespace graphtier::sample::cuda {
namespace {

using State = DeviceTopology::State;

/// Device copy of `bytes` at `src`; returns the device pointer (owned by `state`).
const void* to_device(State& state, const void* src, std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* ptr = nullptr;
  GRAPHTIER_CUDA_CHECK(cudaMalloc(&ptr, bytes));
  state.owned.emplace_back(ptr, [](void* p) { cudaFree(p); });
  // Not a bare cudaMemcpy: from pageable memory it may return before its DMA has landed, and the
  // samplers' kernels run on non-blocking streams, which do not wait for the legacy stream it used.
  ::graphtier::cuda::copy(ptr, src, bytes);
  state.device_bytes += static_cast<int64_t>(bytes);
  return ptr;
}

/// Mapped pinned copy; returns its device alias (what kernels dereference through zero-copy).
const void* to_pinned(State& state, const void* src, std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* host = nullptr;
  GRAPHTIER_CUDA_CHECK(cudaHostAlloc(&host, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  state.owned.emplace_back(host, [](void* p) { cudaFreeHost(p); });
  std::memcpy(host, src, bytes);
  void* alias = nullptr;
  GRAPHTIER_CUDA_CHECK(cudaHostGetDevicePointer(&alias, host, 0));
  state.pinned_bytes += static_cast<int64_t>(bytes);
  return alias;
}

}  // namespace

std::unique_ptr<State> upload_topology(const SampleGraph& graph, const TopologyOptions& options) {
  const ::graphtier::cuda::CurrentDevice on_device(options.device);
  ::graphtier::cuda::keep_pool_memory();
  auto state = std::make_unique<State>();
  state->placement = options.placement;
  state->device = options.device;
  state->num_nodes = graph.csc.num_nodes();
  state->num_edges = graph.csc.num_edges();
  state->weighted = !graph.edge_weights.empty();
  const bool typed = !graph.hetero.empty();
  state->temporal = graph.temporal != nullptr;
  const std::span<const int64_t> indptr = graph.csc.indptr;
  const auto* indices = std::visit([](auto s) { return static_cast<const void*>(s.data()); }, graph.csc.indices);
  const std::size_t index_bytes = std::visit([](auto s) { return sizeof(s[0]); }, graph.csc.indices);
  state->index64 = index_bytes == sizeof(int64_t);
  const std::size_t edge_bytes =
      index_bytes + (state->weighted ? sizeof(float) : 0) + (typed ? sizeof(uint8_t) : 0) +
      (state->temporal ? 2 * sizeof(int64_t) : 0);

  switch (options.placement) {
    case TopologyPlacement::kDevice: state->cached_nodes = state->num_nodes; break;
    case TopologyPlacement::kPinned: state->cached_nodes = 0; break;
    case TopologyPlacement::kCached: {
      // The largest H with indptr[H] * edge_bytes <= budget: nodes are in hotness order, so the
      // hot prefix is a range of ids and routing an edge to its tier is one comparison.
      const int64_t max_edges = options.cache_bytes / static_cast<int64_t>(edge_bytes);
      state->cached_nodes = (std::upper_bound(indptr.begin(), indptr.end(), max_edges) - indptr.begin()) - 1;
      break;
    }
  }
  state->split_edge = indptr[static_cast<std::size_t>(state->cached_nodes)];
  const auto split = static_cast<std::size_t>(state->split_edge);
  const auto cold = static_cast<std::size_t>(state->num_edges) - split;
  const char* index_bytes_ptr = static_cast<const char*>(indices);

  // indptr is read twice per dst node; only the fully pinned placement leaves it on the host. The
  // node types' offsets are a few words, always on the device.
  const std::size_t indptr_bytes = indptr.size() * sizeof(int64_t);
  const std::size_t type_offset_bytes = graph.hetero.node_type_offset.size() * sizeof(int64_t);
  // The device part, checked against what is free before anything is allocated.
  const auto device_part = static_cast<int64_t>(
      (options.placement == TopologyPlacement::kPinned ? 0 : indptr_bytes) + split * edge_bytes + type_offset_bytes);
  require_device_memory("DeviceTopology (indptr and the neighbour lists of " + std::to_string(state->cached_nodes) +
                            " nodes in device memory)",
                        device_part, options.device);
  state->indptr = static_cast<const int64_t*>(options.placement == TopologyPlacement::kPinned
                                                  ? to_pinned(*state, indptr.data(), indptr_bytes)
                                                  : to_device(*state, indptr.data(), indptr_bytes));
  state->hot_indices = to_device(*state, index_bytes_ptr, split * index_bytes);
  state->cold_indices = to_pinned(*state, index_bytes_ptr + split * index_bytes, cold * index_bytes);
  if (state->weighted) {
    const float* w = graph.edge_weights.data();
    state->hot_weights = static_cast<const float*>(to_device(*state, w, split * sizeof(float)));
    state->cold_weights = static_cast<const float*>(to_pinned(*state, w + split, cold * sizeof(float)));
  }
  if (typed) {
    state->num_relations = graph.hetero.num_relations();
    state->num_node_types = graph.hetero.num_node_types();
    const uint8_t* types = graph.hetero.type_per_edge.data();
    state->hot_types = static_cast<const uint8_t*>(to_device(*state, types, split));
    state->cold_types = static_cast<const uint8_t*>(to_pinned(*state, types + split, cold));
    state->node_type_offset =
        static_cast<const int64_t*>(to_device(*state, graph.hetero.node_type_offset.data(), type_offset_bytes));
  }
  if (state->temporal) {
    const int64_t* order = graph.temporal->order.data();
    const int64_t* time = graph.temporal->time.data();
    state->hot_order = static_cast<const int64_t*>(to_device(*state, order, split * sizeof(int64_t)));
    state->cold_order = static_cast<const int64_t*>(to_pinned(*state, order + split, cold * sizeof(int64_t)));
    state->hot_time = static_cast<const int64_t*>(to_device(*state, time, split * sizeof(int64_t)));
    state->cold_time = static_cast<const int64_t*>(to_pinned(*state, time + split, cold * sizeof(int64_t)));
  }
  return state;
}

}  // namespace graphtier::sample::cuda
