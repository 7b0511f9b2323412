// Building one block on the device from its dst nodes and src set; bit-identical to
// cpu::build_layer_block (see layer_sampler_cuda.cu for what keeps the backends identical).
#include <cuda_runtime.h>

#include <cub/cub.cuh>

#include "cuda/layer_block_cuda.cuh"
#include "layer_draws.hpp"

namespace graphtier::sample::cuda {
namespace {

template <typename Index>
__global__ void count_edges_kernel(TopologyRef<Index> topo, const int64_t* dst, int64_t n, const int64_t* ids,
                                   int64_t num_ids, int64_t* counts) {
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
                                  const uint64_t* id_weights, int64_t num_ids, const int64_t* block_indptr,
                                  int64_t* edge_slots, double* inverse, float* weights) {
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

__global__ void dst_locals_kernel(const int64_t* dst, int64_t n, const int64_t* ids, int64_t num_ids, int64_t* local) {
  GRAPHTIER_GRID_STRIDE(i, n) { local[layer::find_sorted(ids, num_ids, dst[i])] = i; }
}

__global__ void first_appearance_kernel(const int64_t* edge_slots, int64_t num_edges, const int64_t* local,
                                        unsigned long long* first) {
  GRAPHTIER_GRID_STRIDE(e, num_edges) {
    const int64_t k = edge_slots[e];
    if (local[k] < 0) atomicMin(&first[k], static_cast<unsigned long long>(e));
  }
}

__global__ void new_node_flags_kernel(const int64_t* local, const unsigned long long* first, int64_t n,
                                      unsigned char* flags) {
  GRAPHTIER_GRID_STRIDE(k, n) { flags[k] = local[k] < 0 && first[k] != ~0ull ? 1 : 0; }
}

__global__ void number_new_nodes_kernel(const int64_t* slots, int64_t n, int64_t num_dst, const int64_t* ids,
                                        int64_t* local, int64_t* src_nodes) {
  GRAPHTIER_GRID_STRIDE(j, n) {
    local[slots[j]] = num_dst + j;
    src_nodes[num_dst + j] = ids[slots[j]];
  }
}

__global__ void local_indices_kernel(const int64_t* edge_slots, int64_t num_edges, const int64_t* local,
                                     int64_t* indices) {
  GRAPHTIER_GRID_STRIDE(e, num_edges) { indices[e] = local[edge_slots[e]]; }
}

__global__ void slots_kernel(int64_t* out, int64_t n) {
  GRAPHTIER_GRID_STRIDE(k, n) { out[k] = k; }
}

}  // namespace

template <typename Index>
Block build_block(TopologyRef<Index> topo, const int64_t* dst, int64_t n_dst, const DeviceColumns& cols,
                  DeviceScratch<int64_t>& next_dst, int64_t& next_size, cudaStream_t s) {
  Block block;
  block.num_dst = n_dst;
  DeviceScratch<int64_t> block_indptr(static_cast<std::size_t>(n_dst + 1), s);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(block_indptr.get(), 0, static_cast<std::size_t>(n_dst + 1) * sizeof(int64_t), s));
  count_edges_kernel<Index><<<blocks_for(n_dst), kThreads, 0, s>>>(topo, dst, n_dst, cols.ids.get(), cols.size,
                                                                   block_indptr.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("count_edges_kernel");
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceScan::ExclusiveSum(t, b, block_indptr.get(), block_indptr.get(), n_dst + 1, s);
  });
  block.indptr.resize(static_cast<std::size_t>(n_dst + 1));
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(block.indptr.data(), block_indptr.get(), block.indptr.size() * sizeof(int64_t),
                                       cudaMemcpyDeviceToHost, s));
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(s));
  const int64_t num_edges = block.indptr.back();

  DeviceScratch<int64_t> edge_slots(static_cast<std::size_t>(num_edges), s);
  DeviceScratch<double> inverse(static_cast<std::size_t>(num_edges), s);
  DeviceScratch<float> weights(static_cast<std::size_t>(num_edges), s);
  fill_edges_kernel<Index><<<blocks_for(n_dst), kThreads, 0, s>>>(topo, dst, n_dst, cols.ids.get(), cols.weights.get(),
                                                                  cols.size, block_indptr.get(), edge_slots.get(),
                                                                  inverse.get(), weights.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("fill_edges_kernel");

  DeviceScratch<int64_t> local(static_cast<std::size_t>(cols.size), s);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(local.get(), 0xFF, static_cast<std::size_t>(cols.size) * sizeof(int64_t), s));
  dst_locals_kernel<<<blocks_for(n_dst), kThreads, 0, s>>>(dst, n_dst, cols.ids.get(), cols.size, local.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("dst_locals_kernel");
  DeviceScratch<unsigned long long> first(static_cast<std::size_t>(cols.size), s);
  GRAPHTIER_CUDA_CHECK(
      cudaMemsetAsync(first.get(), 0xFF, static_cast<std::size_t>(cols.size) * sizeof(unsigned long long), s));
  first_appearance_kernel<<<blocks_for(num_edges), kThreads, 0, s>>>(edge_slots.get(), num_edges, local.get(),
                                                                     first.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("first_appearance_kernel");
  DeviceScratch<unsigned char> is_new(static_cast<std::size_t>(cols.size), s);
  new_node_flags_kernel<<<blocks_for(cols.size), kThreads, 0, s>>>(local.get(), first.get(), cols.size, is_new.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("new_node_flags_kernel");
  DeviceScratch<int64_t> slots(static_cast<std::size_t>(cols.size), s);
  slots_kernel<<<blocks_for(cols.size), kThreads, 0, s>>>(slots.get(), cols.size);
  GRAPHTIER_CUDA_CHECK_LAUNCH("slots_kernel");
  DeviceScratch<unsigned long long> new_first(static_cast<std::size_t>(cols.size), s);
  DeviceScratch<int64_t> new_slots(static_cast<std::size_t>(cols.size), s);
  DeviceScratch<int64_t> num(1, s);
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceSelect::Flagged(t, b, first.get(), is_new.get(), new_first.get(), num.get(), cols.size, s);
  });
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceSelect::Flagged(t, b, slots.get(), is_new.get(), new_slots.get(), num.get(), cols.size, s);
  });
  const int64_t num_new = read_one(num.get(), s);
  next_size = n_dst + num_new;
  DeviceScratch<int64_t> src_nodes(static_cast<std::size_t>(next_size), s);
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(src_nodes.get(), dst, static_cast<std::size_t>(n_dst) * sizeof(int64_t),
                                       cudaMemcpyDeviceToDevice, s));
  if (num_new > 0) {
    // First positions are distinct edge ids, so the order is total and the sort's stability moot.
    DeviceScratch<unsigned long long> sorted_first(static_cast<std::size_t>(num_new), s);
    DeviceScratch<int64_t> sorted_slots(static_cast<std::size_t>(num_new), s);
    const int end_bit = bits_for(num_edges);
    run_cub(s, [&](void* t, std::size_t& b) {
      return cub::DeviceRadixSort::SortPairs(t, b, new_first.get(), sorted_first.get(), new_slots.get(),
                                             sorted_slots.get(), num_new, 0, end_bit, s);
    });
    number_new_nodes_kernel<<<blocks_for(num_new), kThreads, 0, s>>>(sorted_slots.get(), num_new, n_dst,
                                                                     cols.ids.get(), local.get(), src_nodes.get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("number_new_nodes_kernel");
  }
  DeviceScratch<int64_t> local_indices(static_cast<std::size_t>(num_edges), s);
  local_indices_kernel<<<blocks_for(num_edges), kThreads, 0, s>>>(edge_slots.get(), num_edges, local.get(),
                                                                  local_indices.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("local_indices_kernel");

  block.src_nodes.resize(static_cast<std::size_t>(next_size));
  block.indices.resize(static_cast<std::size_t>(num_edges));
  block.weights.resize(static_cast<std::size_t>(num_edges));
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(block.src_nodes.data(), src_nodes.get(), block.src_nodes.size() * sizeof(int64_t),
                                       cudaMemcpyDeviceToHost, s));
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(block.indices.data(), local_indices.get(), block.indices.size() * sizeof(int64_t),
                                       cudaMemcpyDeviceToHost, s));
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(block.weights.data(), weights.get(), block.weights.size() * sizeof(float),
                                       cudaMemcpyDeviceToHost, s));
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(s));
  next_dst = std::move(src_nodes);
  return block;
}

template Block build_block<int32_t>(TopologyRef<int32_t>, const int64_t*, int64_t, const DeviceColumns&,
                                    DeviceScratch<int64_t>&, int64_t&, cudaStream_t);
template Block build_block<int64_t>(TopologyRef<int64_t>, const int64_t*, int64_t, const DeviceColumns&,
                                    DeviceScratch<int64_t>&, int64_t&, cudaStream_t);

}  // namespace graphtier::sample::cuda
