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
#include "layer_row_sums.hpp"

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

/// counts[i] = d_i + 1 (the row's nonzeros in A + I) for i < n, and 0 at n (the exclusive scan's
/// total).
__global__ void row_nonzeros_kernel(const int64_t* indptr, const int64_t* dst, int64_t n, int64_t* counts) {
  GRAPHTIER_GRID_STRIDE(i, n + 1) { counts[i] = i < n ? indptr[dst[i] + 1] - indptr[dst[i]] + 1 : 0; }
}

/// Per nonzero of the dst rows: the slot of its column in the src set (-1 if not there; the
/// self-loop always is), and in `kept` whether it is an edge of the block; kept[nonzeros] = 0, so
/// that the exclusive scan of `kept` gives each edge's position and, last, their number.
template <typename Index>
__global__ void edge_slots_kernel(TopologyRef<Index> topo, const int64_t* dst, int64_t n, const int64_t* offsets,
                                  int64_t nonzeros, const int64_t* ids, const int64_t* num_ids_at, int64_t* slots,
                                  int64_t* kept) {
  const int64_t num_ids = *num_ids_at;
  GRAPHTIER_GRID_STRIDE(e, nonzeros + 1) {
    if (e == nonzeros) {
      kept[e] = 0;
      continue;
    }
    const int64_t i = layer::segment_of(offsets, n, e);
    const int64_t k = layer::find_sorted(ids, num_ids, nonzero_column(topo, dst[i], e - offsets[i]));
    slots[e] = k;
    kept[e] = k >= 0 ? 1 : 0;
  }
}

/// block_indptr[i] = the position of row i's first nonzero among the kept ones (i = n: their
/// number); every row keeps its self-loop, so the rows stay non-empty.
__global__ void block_indptr_kernel(const int64_t* offsets, int64_t n, const int64_t* position, int64_t* block_indptr) {
  GRAPHTIER_GRID_STRIDE(i, n + 1) { block_indptr[i] = position[offsets[i]]; }
}

/// The block's edges in row order: each kept nonzero's src slot and 1 / w_u, at its position.
__global__ void fill_edges_kernel(const int64_t* slots, int64_t nonzeros, const int64_t* position,
                                  const uint64_t* id_weights, int64_t* edge_slots, double* inverse) {
  GRAPHTIER_GRID_STRIDE(e, nonzeros) {
    const int64_t k = slots[e];
    if (k < 0) continue;
    edge_slots[position[e]] = k;
    inverse[position[e]] = div_rn(1.0, __ull2double_rn(id_weights[k]));
  }
}

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpsPerBlock = kThreads / layer::kTreeLanes;

/// Level `level` >= 1 of the rows' sums (layer_row_sums.hpp): a warp per slot, which sums its 256
/// values of the level below, 8 a lane (lane_sum) and then the 32 lanes by shuffles. After the
/// shuffles down by 1, 2, 4, 8, 16, lane 0 holds the complete tree over the lanes in order (lane
/// l adds lane l + 2^j's subtree at step j), the tree pairwise_sum builds over 32 values.
__global__ void row_sums_level_kernel(const int64_t* start, int64_t n, int level, int64_t slots, const double* below,
                                      double* above) {
  const int lane = static_cast<int>(threadIdx.x) % layer::kTreeLanes;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / layer::kTreeLanes; o < slots;
       o += warps) {
    const int64_t i = layer::tree_slot_row(start, n, level, o);
    const int64_t len = start[i + 1] - start[i];
    const int64_t t = o - layer::tree_slot(start, i, level);
    if (t >= layer::tree_level_length(len, level)) continue;  // a gap after row i: o is warp-uniform
    const int64_t first = (t << layer::kTreeFanInBits) + lane * layer::kLaneItems;
    const int64_t count = layer::tree_level_length(len, level - 1) - first;
    double v = count > 0 ? layer::lane_sum(below + layer::tree_slot(start, i, level - 1) + first,
                                           count < layer::kLaneItems ? count : layer::kLaneItems)
                         : 0.0;
    for (int offset = 1; offset < layer::kTreeLanes; offset <<= 1) {
      v = add_rn(v, __shfl_down_sync(kFullMask, v, offset));
    }
    if (lane == 0) above[o] = v;
  }
}

/// weights[e] = (1 / w_u) / Σ over its row, rounded to float; the row's sum is its one value at
/// the last level.
__global__ void edge_weights_kernel(const int64_t* block_indptr, int64_t n, int64_t max_edges, int level,
                                    const double* sums, const double* inverse, float* weights) {
  const int64_t num_edges = block_indptr[n];
  GRAPHTIER_GRID_STRIDE(e, max_edges) {
    if (e >= num_edges) break;
    const int64_t i = layer::segment_of(block_indptr, n, e);
    weights[e] = __double2float_rn(div_rn(inverse[e], sums[layer::tree_slot(block_indptr, i, level)]));
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

DeviceScratch<int64_t> row_offsets(const int64_t* indptr, const int64_t* dst, int64_t n, cudaStream_t s) {
  DeviceScratch<int64_t> offsets(static_cast<std::size_t>(n + 1), s);
  row_nonzeros_kernel<<<blocks_for(n + 1), kThreads, 0, s>>>(indptr, dst, n, offsets.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("row_nonzeros_kernel");
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceScan::ExclusiveSum(t, b, offsets.get(), offsets.get(), n + 1, s);
  });
  return offsets;
}

template <typename Index>
DeviceLayerBlock build_device_block(TopologyRef<Index> topo, const DstRows& rows, const DeviceColumns& cols,
                                    cudaStream_t s) {
  const int64_t cap = cols.capacity;
  const int64_t* num_ids = cols.size.get();
  const int64_t* dst = rows.ids;
  const int64_t n_dst = rows.n;
  const int64_t max_edges = rows.nonzeros;
  // Every nonzero of the dst rows is tested once (a thread each), and the kept ones are placed by
  // a scan: the block's rows never run serially in one thread, whatever their degree.
  DeviceScratch<int64_t> nonzero_slots(static_cast<std::size_t>(max_edges), s);
  DeviceScratch<int64_t> position(static_cast<std::size_t>(max_edges + 1), s);
  edge_slots_kernel<Index><<<blocks_for(max_edges + 1), kThreads, 0, s>>>(
      topo, dst, n_dst, rows.offsets, max_edges, cols.ids.get(), num_ids, nonzero_slots.get(), position.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("edge_slots_kernel");
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceScan::ExclusiveSum(t, b, position.get(), position.get(), max_edges + 1, s);
  });
  DeviceScratch<int64_t> block_indptr(static_cast<std::size_t>(n_dst + 1), s);
  block_indptr_kernel<<<blocks_for(n_dst + 1), kThreads, 0, s>>>(rows.offsets, n_dst, position.get(),
                                                                 block_indptr.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("block_indptr_kernel");
  const int64_t* num_edges = block_indptr.get() + n_dst;

  DeviceScratch<int64_t> edge_slots(static_cast<std::size_t>(max_edges), s);
  DeviceScratch<double> inverse(static_cast<std::size_t>(max_edges), s);
  fill_edges_kernel<<<blocks_for(max_edges), kThreads, 0, s>>>(nonzero_slots.get(), max_edges, position.get(),
                                                               cols.weights.get(), edge_slots.get(), inverse.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("fill_edges_kernel");
  // The rows' sums, level by level (layer_row_sums.hpp): level 1 is the largest, two arrays of its
  // size take turns.
  const int levels = layer::tree_levels(rows.max_row);
  const int64_t level_slots = layer::tree_level_slots(n_dst, max_edges, 1);
  DeviceScratch<double> sums[2] = {DeviceScratch<double>(static_cast<std::size_t>(level_slots), s),
                                   DeviceScratch<double>(static_cast<std::size_t>(level_slots), s)};
  for (int level = 1; level <= levels; ++level) {
    const int64_t slots_here = layer::tree_level_slots(n_dst, max_edges, level);
    const double* below = level == 1 ? inverse.get() : sums[level % 2].get();
    row_sums_level_kernel<<<grid_for(slots_here, kWarpsPerBlock), kThreads, 0, s>>>(
        block_indptr.get(), n_dst, level, slots_here, below, sums[(level + 1) % 2].get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("row_sums_level_kernel");
  }
  DeviceScratch<float> weights(static_cast<std::size_t>(max_edges), s);
  edge_weights_kernel<<<blocks_for(max_edges), kThreads, 0, s>>>(block_indptr.get(), n_dst, max_edges, levels,
                                                                 sums[(levels + 1) % 2].get(), inverse.get(),
                                                                 weights.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("edge_weights_kernel");

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
Block build_block(TopologyRef<Index> topo, const DstRows& rows, const DeviceColumns& cols, PinnedStaging& staging,
                  DeviceScratch<int64_t>& next_dst, int64_t& next_size, cudaStream_t s) {
  DeviceLayerBlock d = build_device_block(topo, rows, cols, s);
  const int64_t n_dst = rows.n;
  const int64_t max_edges = rows.nonzeros;
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

template DeviceLayerBlock build_device_block<int32_t>(TopologyRef<int32_t>, const DstRows&, const DeviceColumns&,
                                                      cudaStream_t);
template DeviceLayerBlock build_device_block<int64_t>(TopologyRef<int64_t>, const DstRows&, const DeviceColumns&,
                                                      cudaStream_t);
template Block build_block<int32_t>(TopologyRef<int32_t>, const DstRows&, const DeviceColumns&, PinnedStaging&,
                                    DeviceScratch<int64_t>&, int64_t&, cudaStream_t);
template Block build_block<int64_t>(TopologyRef<int64_t>, const DstRows&, const DeviceColumns&, PinnedStaging&,
                                    DeviceScratch<int64_t>&, int64_t&, cudaStream_t);

}  // namespace graphtier::sample::cuda
