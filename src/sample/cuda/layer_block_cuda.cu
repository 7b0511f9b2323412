// Building one block on the device from its dst nodes and src set; bit-identical to
// cpu::build_layer_block (see layer_sampler_cuda.cu for what keeps the backends identical). Every
// array is sized by a bound the host knows (the src set's capacity, the dst rows' Σ (degree + 1));
// the counts stay on the device until the layer's one synchronisation brings the block back.
#include <cuda_runtime.h>

#include <atomic>
#include <cub/cub.cuh>

#include "cuda/layer_block_cuda.cuh"
#include "cuda/layer_sampler_cuda.hpp"
#include "layer_draws.hpp"

namespace graphtier::sample::cuda {
namespace {
std::atomic<uint64_t> g_synchronisations{0};
}  // namespace

uint64_t layer_synchronisations() noexcept { return g_synchronisations.load(); }

std::unique_ptr<PinnedStaging> LayerDeviceGraph::acquire_staging() const {
  const std::lock_guard lock(staging_mutex_);
  if (free_staging_.empty()) return std::make_unique<PinnedStaging>();
  std::unique_ptr<PinnedStaging> s = std::move(free_staging_.back());
  free_staging_.pop_back();
  return s;
}

void LayerDeviceGraph::release_staging(std::unique_ptr<PinnedStaging> staging) const {
  const std::lock_guard lock(staging_mutex_);
  free_staging_.push_back(std::move(staging));
}

namespace {

template <typename Index>
__global__ void count_edges_kernel(TopologyRef<Index> topo, const int64_t* dst, int64_t n, const int64_t* ids,
                                   const int64_t* num_ids_at, int64_t* counts) {
  const int64_t num_ids = *num_ids_at;
  GRAPHTIER_GRID_STRIDE(i, n) {
    const int64_t v = dst[i];
    int64_t c = 1;  // the self-loop: every dst node is in the src set
    for (int64_t p = topo.indptr[v]; p < topo.indptr[v + 1]; ++p) {
      if (layer::find_sorted(ids, num_ids, topo.index(p)) >= 0) ++c;
    }
    counts[i] = c;
  }
}

/// One thread per row: the row's edges (CSC order, self-loop last), 1 / w_u, and the row-normalised
/// weights summed left to right as on the host.
template <typename Index>
__global__ void fill_edges_kernel(TopologyRef<Index> topo, const int64_t* dst, int64_t n, const int64_t* ids,
                                  const uint64_t* id_weights, const int64_t* num_ids_at, const int64_t* block_indptr,
                                  int64_t* edge_slots, double* inverse, float* weights) {
  const int64_t num_ids = *num_ids_at;
  GRAPHTIER_GRID_STRIDE(i, n) {
    const int64_t v = dst[i];
    const int64_t first = block_indptr[i];
    int64_t e = first;
    for (int64_t p = topo.indptr[v]; p < topo.indptr[v + 1]; ++p) {
      const int64_t k = layer::find_sorted(ids, num_ids, topo.index(p));
      if (k < 0) continue;
      edge_slots[e] = k;
      inverse[e++] = __ddiv_rn(1.0, __ull2double_rn(id_weights[k]));
    }
    const int64_t self = layer::find_sorted(ids, num_ids, v);
    edge_slots[e] = self;
    inverse[e++] = __ddiv_rn(1.0, __ull2double_rn(id_weights[self]));
    double sum = 0.0;
    for (int64_t x = first; x < e; ++x) sum = __dadd_rn(sum, inverse[x]);
    for (int64_t x = first; x < e; ++x) weights[x] = __double2float_rn(__ddiv_rn(inverse[x], sum));
  }
}

// Compaction: dst first, then the new nodes by first appearance.

__global__ void dst_locals_kernel(const int64_t* dst, int64_t n, const int64_t* ids, const int64_t* num_ids_at,
                                  int64_t* local) {
  const int64_t num_ids = *num_ids_at;
  GRAPHTIER_GRID_STRIDE(i, n) { local[layer::find_sorted(ids, num_ids, dst[i])] = i; }
}

/// Over the bound of edges; the block's edge count is block_indptr[n_dst] on the device.
__global__ void first_appearance_kernel(const int64_t* edge_slots, int64_t max_edges, const int64_t* num_edges_at,
                                        const int64_t* local, unsigned long long* first) {
  const int64_t num_edges = *num_edges_at;
  GRAPHTIER_GRID_STRIDE(e, max_edges) {
    if (e >= num_edges) break;
    const int64_t k = edge_slots[e];
    if (local[k] < 0) atomicMin(&first[k], static_cast<unsigned long long>(e));
  }
}

/// Sort keys over the src set's capacity: a new node's first edge position, else `past` (above
/// every edge position), so that a stable sort puts the new nodes first in first-appearance order.
__global__ void new_node_keys_kernel(const int64_t* local, const unsigned long long* first, const int64_t* num_ids_at,
                                     int64_t capacity, unsigned long long past, unsigned long long* keys,
                                     int64_t* slots, int64_t* is_new) {
  const int64_t num_ids = *num_ids_at;
  GRAPHTIER_GRID_STRIDE(k, capacity) {
    const bool fresh = k < num_ids && local[k] < 0 && first[k] != ~0ull;
    keys[k] = fresh ? first[k] : past;
    slots[k] = k;
    is_new[k] = fresh ? 1 : 0;
  }
}

__global__ void number_new_nodes_kernel(const int64_t* slots, int64_t capacity, const int64_t* num_new_at,
                                        int64_t num_dst, const int64_t* ids, int64_t* local, int64_t* src_nodes) {
  const int64_t num_new = *num_new_at;
  GRAPHTIER_GRID_STRIDE(j, capacity) {
    if (j >= num_new) break;
    local[slots[j]] = num_dst + j;
    src_nodes[num_dst + j] = ids[slots[j]];
  }
}

__global__ void local_indices_kernel(const int64_t* edge_slots, int64_t max_edges, const int64_t* num_edges_at,
                                     const int64_t* local, int64_t* indices) {
  const int64_t num_edges = *num_edges_at;
  GRAPHTIER_GRID_STRIDE(e, max_edges) {
    if (e >= num_edges) break;
    indices[e] = local[edge_slots[e]];
  }
}

/// Queues a copy of device[0, n) into pinned staging; readable after the stream synchronises.
template <typename T>
const T* queue_download(PinnedStaging& staging, const T* device, int64_t n, cudaStream_t s) {
  auto* host = static_cast<T*>(staging.take(static_cast<std::size_t>(n) * sizeof(T)));
  if (n > 0) {
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(host, device, static_cast<std::size_t>(n) * sizeof(T),
                                         cudaMemcpyDeviceToHost, s));
  }
  return host;
}

}  // namespace

template <typename Index>
DeviceLayerBlock build_device_block(TopologyRef<Index> topo, const int64_t* dst, int64_t n_dst, int64_t max_edges,
                                    const DeviceColumns& cols, cudaStream_t s) {
  const int64_t cap = cols.capacity;
  const int64_t* num_ids = cols.size.get();
  DeviceScratch<int64_t> block_indptr(static_cast<std::size_t>(n_dst + 1), s);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(block_indptr.get(), 0, static_cast<std::size_t>(n_dst + 1) * sizeof(int64_t), s));
  count_edges_kernel<Index><<<blocks_for(n_dst), kThreads, 0, s>>>(topo, dst, n_dst, cols.ids.get(), num_ids,
                                                                   block_indptr.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("count_edges_kernel");
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceScan::ExclusiveSum(t, b, block_indptr.get(), block_indptr.get(), n_dst + 1, s);
  });
  const int64_t* num_edges = block_indptr.get() + n_dst;

  DeviceScratch<int64_t> edge_slots(static_cast<std::size_t>(max_edges), s);
  DeviceScratch<double> inverse(static_cast<std::size_t>(max_edges), s);
  DeviceScratch<float> weights(static_cast<std::size_t>(max_edges), s);
  fill_edges_kernel<Index><<<blocks_for(n_dst), kThreads, 0, s>>>(topo, dst, n_dst, cols.ids.get(), cols.weights.get(),
                                                                  num_ids, block_indptr.get(), edge_slots.get(),
                                                                  inverse.get(), weights.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("fill_edges_kernel");

  DeviceScratch<int64_t> local(static_cast<std::size_t>(cap), s);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(local.get(), 0xFF, static_cast<std::size_t>(cap) * sizeof(int64_t), s));
  dst_locals_kernel<<<blocks_for(n_dst), kThreads, 0, s>>>(dst, n_dst, cols.ids.get(), num_ids, local.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("dst_locals_kernel");
  DeviceScratch<unsigned long long> first(static_cast<std::size_t>(cap), s);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(first.get(), 0xFF, static_cast<std::size_t>(cap) * sizeof(unsigned long long), s));
  first_appearance_kernel<<<blocks_for(max_edges), kThreads, 0, s>>>(edge_slots.get(), max_edges, num_edges,
                                                                     local.get(), first.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("first_appearance_kernel");
  // New nodes by first appearance: edge positions are below max_edges, so `max_edges` sorts after
  // them all; first positions are distinct, so the order among new nodes is total.
  DeviceScratch<unsigned long long> keys(static_cast<std::size_t>(cap), s);
  DeviceScratch<unsigned long long> sorted_keys(static_cast<std::size_t>(cap), s);
  DeviceScratch<int64_t> slots(static_cast<std::size_t>(cap), s);
  DeviceScratch<int64_t> sorted_slots(static_cast<std::size_t>(cap), s);
  DeviceScratch<int64_t> is_new(static_cast<std::size_t>(cap), s);
  new_node_keys_kernel<<<blocks_for(cap), kThreads, 0, s>>>(local.get(), first.get(), num_ids, cap,
                                                            static_cast<unsigned long long>(max_edges), keys.get(),
                                                            slots.get(), is_new.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("new_node_keys_kernel");
  DeviceScratch<int64_t> num_new(1, s);
  run_cub(s, [&](void* t, std::size_t& b) { return cub::DeviceReduce::Sum(t, b, is_new.get(), num_new.get(), cap, s); });
  const int end_bit = bits_for(max_edges);
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceRadixSort::SortPairs(t, b, keys.get(), sorted_keys.get(), slots.get(), sorted_slots.get(), cap, 0,
                                           end_bit, s);
  });
  // Every new node appears in an edge: at most min(capacity, max_edges) of them.
  const int64_t max_src = n_dst + std::min(cap, max_edges);
  DeviceScratch<int64_t> src_nodes(static_cast<std::size_t>(max_src), s);
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(src_nodes.get(), dst, static_cast<std::size_t>(n_dst) * sizeof(int64_t),
                                       cudaMemcpyDeviceToDevice, s));
  number_new_nodes_kernel<<<blocks_for(cap), kThreads, 0, s>>>(sorted_slots.get(), cap, num_new.get(), n_dst,
                                                               cols.ids.get(), local.get(), src_nodes.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("number_new_nodes_kernel");
  DeviceScratch<int64_t> local_indices(static_cast<std::size_t>(max_edges), s);
  local_indices_kernel<<<blocks_for(max_edges), kThreads, 0, s>>>(edge_slots.get(), max_edges, num_edges, local.get(),
                                                                  local_indices.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("local_indices_kernel");

  // The scratch above is freed in stream order, after the kernels that read it.
  return DeviceLayerBlock{std::move(block_indptr), std::move(src_nodes), std::move(local_indices), std::move(weights),
                          std::move(num_new), max_src};
}

void count_synchronisation() noexcept { g_synchronisations.fetch_add(1); }

template <typename Index>
Block build_block(TopologyRef<Index> topo, const int64_t* dst, int64_t n_dst, int64_t max_edges,
                  const DeviceColumns& cols, PinnedStaging& staging, DeviceScratch<int64_t>& next_dst,
                  int64_t& next_size, cudaStream_t s) {
  DeviceLayerBlock d = build_device_block(topo, dst, n_dst, max_edges, cols, s);
  // Everything the host keeps, through pinned staging, then the layer's one synchronisation.
  const int64_t* h_indptr = queue_download(staging, d.indptr.get(), n_dst + 1, s);
  const int64_t* h_num_new = queue_download(staging, d.num_new.get(), 1, s);
  const int64_t* h_src = queue_download(staging, d.src_nodes.get(), d.max_src, s);
  const int64_t* h_indices = queue_download(staging, d.indices.get(), max_edges, s);
  const float* h_weights = queue_download(staging, d.weights.get(), max_edges, s);
  count_synchronisation();
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(s));
  Block block;
  block.num_dst = n_dst;
  block.indptr.assign(h_indptr, h_indptr + n_dst + 1);
  const int64_t edges = block.indptr.back();
  next_size = n_dst + *h_num_new;
  block.src_nodes.assign(h_src, h_src + next_size);
  block.indices.assign(h_indices, h_indices + edges);
  block.weights.assign(h_weights, h_weights + edges);
  staging.reset();
  next_dst = std::move(d.src_nodes);
  return block;
}

template DeviceLayerBlock build_device_block<int32_t>(TopologyRef<int32_t>, const int64_t*, int64_t, int64_t,
                                                      const DeviceColumns&, cudaStream_t);
template DeviceLayerBlock build_device_block<int64_t>(TopologyRef<int64_t>, const int64_t*, int64_t, int64_t,
                                                      const DeviceColumns&, cudaStream_t);
template Block build_block<int32_t>(TopologyRef<int32_t>, const int64_t*, int64_t, int64_t, const DeviceColumns&,
                                    PinnedStaging&, DeviceScratch<int64_t>&, int64_t&, cudaStream_t);
template Block build_block<int64_t>(TopologyRef<int64_t>, const int64_t*, int64_t, int64_t, const DeviceColumns&,
                                    PinnedStaging&, DeviceScratch<int64_t>&, int64_t&, cudaStream_t);

}  // namespace graphtier::sample::cuda
