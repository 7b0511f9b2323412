// CUDA backend of layer-wise sampling: the steps of cpu/layer_sampler_cpu.cpp as kernels and CUB
// primitives, bit-identical to them.
//
// NOTE: what keeps the two backends identical.
//   - Column weights are 128-bit integer sums (atomics with an explicit carry): the result does
//     not depend on the order in which threads add, and every later step (shift, prefix sums,
//     draws) is integer arithmetic shared with the host through layer_draws.hpp.
//   - The draws are the race of layer_draws.hpp: every candidate's key is computed in parallel by
//     the same __host__ __device__ functions the host calls (integer weights exact in double,
//     IEEE-rounded operations, portable_log), then a stable radix sort of (key bits, position)
//     gives the host's (key, position) order.
//   - Edge weights are the only floating point: one thread per row sums its inverses left to right
//     with explicitly rounded intrinsics (__ddiv_rn, __dadd_rn, __double2float_rn), so nvcc cannot
//     contract them into FMAs, and the host does the same IEEE operations in the same order.
//   - Compaction orders new nodes by their first edge position (atomicMin, order-independent),
//     which is the host's first-appearance order.
#include <cuda_runtime.h>

#include <cub/cub.cuh>
#include <utility>

#include "graphtier/core/memory.hpp"
#include "cuda/layer_block_cuda.cuh"
#include "cuda/layer_sampler_cuda.hpp"
#include "layer_draws.hpp"

namespace graphtier::sample::cuda {
namespace {

using layer::U128;

struct Add128 {
  __host__ __device__ U128 operator()(const U128& a, const U128& b) const { return layer::add(a, b); }
};

__device__ void atomic_add(U128* sum, uint64_t q) {
  auto* lo = reinterpret_cast<unsigned long long*>(&sum->lo);
  const unsigned long long old = atomicAdd(lo, static_cast<unsigned long long>(q));
  if (old + q < old) atomicAdd(reinterpret_cast<unsigned long long*>(&sum->hi), 1ull);
}

/// counts[i] = d_i + 1 (the row's nonzeros in A + I).
__global__ void row_nonzeros_kernel(const int64_t* indptr, const int64_t* dst, int64_t n, int64_t* counts) {
  GRAPHTIER_GRID_STRIDE(i, n) { counts[i] = indptr[dst[i] + 1] - indptr[dst[i]] + 1; }
}

template <typename Index>
__global__ void gather_columns_kernel(TopologyRef<Index> topo, const int64_t* dst, int64_t n, const int64_t* offsets,
                                      int64_t* columns) {
  GRAPHTIER_GRID_STRIDE(i, n) {
    const int64_t v = dst[i];
    int64_t out = offsets[i];
    for (int64_t p = topo.indptr[v]; p < topo.indptr[v + 1]; ++p) columns[out++] = topo.index(p);
    columns[out] = v;
  }
}

template <typename Index>
__global__ void column_sums_kernel(TopologyRef<Index> topo, const int64_t* dst, int64_t n, const int64_t* candidates,
                                   int64_t num_candidates, U128* sums) {
  GRAPHTIER_GRID_STRIDE(i, n) {
    const int64_t v = dst[i];
    const uint64_t q = layer::row_contribution(topo.indptr[v + 1] - topo.indptr[v]);
    for (int64_t p = topo.indptr[v]; p < topo.indptr[v + 1]; ++p) {
      atomic_add(&sums[layer::find_sorted(candidates, num_candidates, topo.index(p))], q);
    }
    atomic_add(&sums[layer::find_sorted(candidates, num_candidates, v)], q);
  }
}

/// w_u from the column sums; the shift comes from the device-side total (no host round trip).
__global__ void draw_weights_kernel(const U128* sums, int64_t n, const U128* total, uint64_t* weights) {
  const int shift = layer::weight_shift(*total);
  GRAPHTIER_GRID_STRIDE(k, n) { weights[k] = layer::draw_weight(sums[k], shift); }
}

/// The internal nodes of the race tree (layer_draws.hpp), each from two prefix sums.
__global__ void race_tree_kernel(const uint64_t* prefix, int64_t n, int levels, uint64_t* internal) {
  GRAPHTIER_GRID_STRIDE(x, int64_t{1} << levels) {
    internal[x] = x == 0 ? 0 : layer::race_tree_entry(prefix, n, levels, x);
  }
}

/// Every candidate's race key, walking its path from the root (O(levels) each, all in parallel),
/// as the bits of a positive double (ordered like the double), with its position.
__global__ void race_keys_kernel(layer::RaceTree t, uint64_t seed, uint64_t layer_stream, unsigned long long* keys,
                                 int64_t* positions) {
  GRAPHTIER_GRID_STRIDE(i, t.n) {
    keys[i] = static_cast<unsigned long long>(__double_as_longlong(layer::race_leaf_key(t, seed, layer_stream, i)));
    positions[i] = i;
  }
}

__global__ void mark_positions_kernel(const int64_t* positions, int64_t n, unsigned char* flags) {
  GRAPHTIER_GRID_STRIDE(k, n) { flags[positions[k]] = 1; }
}

__global__ void mark_nodes_kernel(const int64_t* nodes, int64_t n, const int64_t* ids, int64_t num_ids,
                                  unsigned char* flags) {
  GRAPHTIER_GRID_STRIDE(i, n) { flags[layer::find_sorted(ids, num_ids, nodes[i])] = 1; }
}

__global__ void iota_kernel(int64_t* out, int64_t n) {
  GRAPHTIER_GRID_STRIDE(k, n) { out[k] = k; }
}

__global__ void gather_weights_kernel(const int64_t* ids, int64_t n, const uint64_t* all_weights, uint64_t* weights) {
  GRAPHTIER_GRID_STRIDE(k, n) { weights[k] = all_weights[ids[k]]; }
}

/// Sorted unique copy of keys[0, n).
DeviceScratch<int64_t> sorted_unique(const int64_t* keys, int64_t n, int64_t num_nodes, int64_t& count,
                                     cudaStream_t s) {
  DeviceScratch<int64_t> sorted(static_cast<std::size_t>(n), s);
  const int end_bit = bits_for(num_nodes);
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceRadixSort::SortKeys(t, b, keys, sorted.get(), n, 0, end_bit, s);
  });
  DeviceScratch<int64_t> unique(static_cast<std::size_t>(n), s);
  DeviceScratch<int64_t> num(1, s);
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceSelect::Unique(t, b, sorted.get(), unique.get(), num.get(), n, s);
  });
  count = read_one(num.get(), s);
  return unique;
}

/// The `size` winners of the race over the n candidates of tree `t` (0 < size < n), in draw order,
/// into chosen[0, size): every key in parallel, then a stable radix sort of (key bits, position)
/// pairs, whose input is in position order, so equal keys stay in position order: the host's
/// (key, position) order exactly. No synchronisation.
void race_draws(const layer::RaceTree& t, int64_t size, uint64_t seed, uint64_t ls, int64_t* chosen, cudaStream_t s) {
  const int64_t n = t.n;
  DeviceScratch<unsigned long long> keys(static_cast<std::size_t>(n), s);
  DeviceScratch<unsigned long long> sorted_keys(static_cast<std::size_t>(n), s);
  DeviceScratch<int64_t> positions(static_cast<std::size_t>(n), s);
  DeviceScratch<int64_t> sorted_positions(static_cast<std::size_t>(n), s);
  race_keys_kernel<<<blocks_for(n), kThreads, 0, s>>>(t, seed, ls, keys.get(), positions.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("race_keys_kernel");
  // Keys are positive doubles (sign bit 0): bits [0, 63) order them.
  run_cub(s, [&](void* tmp, std::size_t& b) {
    return cub::DeviceRadixSort::SortPairs(tmp, b, keys.get(), sorted_keys.get(), positions.get(),
                                           sorted_positions.get(), n, 0, 63, s);
  });
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(chosen, sorted_positions.get(), static_cast<std::size_t>(size) * sizeof(int64_t),
                                       cudaMemcpyDeviceToDevice, s));
}

template <typename Index>
DeviceColumns ladies_columns(TopologyRef<Index> topo, int64_t num_nodes, const int64_t* dst, int64_t n_dst,
                             int64_t size, uint64_t seed, uint64_t ls, cudaStream_t s) {
  DeviceScratch<int64_t> offsets(static_cast<std::size_t>(n_dst + 1), s);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(offsets.get(), 0, static_cast<std::size_t>(n_dst + 1) * sizeof(int64_t), s));
  row_nonzeros_kernel<<<blocks_for(n_dst), kThreads, 0, s>>>(topo.indptr, dst, n_dst, offsets.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("row_nonzeros_kernel");
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceScan::ExclusiveSum(t, b, offsets.get(), offsets.get(), n_dst + 1, s);
  });
  const int64_t nonzeros = read_one(offsets.get() + n_dst, s);
  DeviceScratch<int64_t> columns(static_cast<std::size_t>(nonzeros), s);
  gather_columns_kernel<Index><<<blocks_for(n_dst), kThreads, 0, s>>>(topo, dst, n_dst, offsets.get(), columns.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("gather_columns_kernel");
  int64_t n_cand = 0;
  const DeviceScratch<int64_t> candidates = sorted_unique(columns.get(), nonzeros, num_nodes, n_cand, s);

  DeviceScratch<U128> sums(static_cast<std::size_t>(n_cand), s);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(sums.get(), 0, static_cast<std::size_t>(n_cand) * sizeof(U128), s));
  column_sums_kernel<Index><<<blocks_for(n_dst), kThreads, 0, s>>>(topo, dst, n_dst, candidates.get(), n_cand,
                                                                   sums.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("column_sums_kernel");
  DeviceScratch<U128> total(1, s);
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceReduce::Reduce(t, b, sums.get(), total.get(), n_cand, Add128{}, U128{}, s);
  });
  DeviceScratch<uint64_t> weights(static_cast<std::size_t>(n_cand), s);
  draw_weights_kernel<<<blocks_for(n_cand), kThreads, 0, s>>>(sums.get(), n_cand, total.get(), weights.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("draw_weights_kernel");

  DeviceScratch<unsigned char> in_src(static_cast<std::size_t>(n_cand), s);
  if (size < 0 || size >= n_cand) {
    GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(in_src.get(), 1, static_cast<std::size_t>(n_cand), s));
  } else {
    GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(in_src.get(), 0, static_cast<std::size_t>(n_cand), s));
    if (size > 0) {
      DeviceScratch<uint64_t> prefix(static_cast<std::size_t>(n_cand), s);
      run_cub(s, [&](void* t, std::size_t& b) {
        return cub::DeviceScan::InclusiveSum(t, b, weights.get(), prefix.get(), n_cand, s);
      });
      const int levels = layer::race_levels(n_cand);
      DeviceScratch<uint64_t> internal(std::size_t{1} << levels, s);
      race_tree_kernel<<<blocks_for(int64_t{1} << levels), kThreads, 0, s>>>(prefix.get(), n_cand, levels,
                                                                            internal.get());
      GRAPHTIER_CUDA_CHECK_LAUNCH("race_tree_kernel");
      DeviceScratch<int64_t> chosen(static_cast<std::size_t>(size), s);
      race_draws(layer::RaceTree{internal.get(), weights.get(), n_cand, levels}, size, seed, ls, chosen.get(), s);
      mark_positions_kernel<<<blocks_for(size), kThreads, 0, s>>>(chosen.get(), size, in_src.get());
      GRAPHTIER_CUDA_CHECK_LAUNCH("mark_positions_kernel");
    }
    mark_nodes_kernel<<<blocks_for(n_dst), kThreads, 0, s>>>(dst, n_dst, candidates.get(), n_cand, in_src.get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("mark_nodes_kernel");
  }
  DeviceColumns out{DeviceScratch<int64_t>(static_cast<std::size_t>(n_cand), s),
                    DeviceScratch<uint64_t>(static_cast<std::size_t>(n_cand), s), 0};
  DeviceScratch<int64_t> num(1, s);
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceSelect::Flagged(t, b, candidates.get(), in_src.get(), out.ids.get(), num.get(), n_cand, s);
  });
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceSelect::Flagged(t, b, weights.get(), in_src.get(), out.weights.get(), num.get(), n_cand, s);
  });
  out.size = read_one(num.get(), s);
  return out;
}

DeviceColumns fastgcn_columns(const LayerDeviceGraph& g, const int64_t* dst, int64_t n_dst, int64_t size,
                              uint64_t seed, uint64_t ls, cudaStream_t s) {
  const int64_t n = g.topology.num_nodes();
  const int64_t drawn = size < 0 || size >= n ? n : size;
  DeviceScratch<int64_t> keys(static_cast<std::size_t>(drawn + n_dst), s);
  if (drawn == n) {
    iota_kernel<<<blocks_for(n), kThreads, 0, s>>>(keys.get(), n);
    GRAPHTIER_CUDA_CHECK_LAUNCH("iota_kernel");
  } else if (drawn > 0) {
    // The race only reads the tree: the one uploaded with the sampler serves every layer and stream.
    const layer::RaceTree t{static_cast<const uint64_t*>(g.fastgcn_tree.data()),
                            static_cast<const uint64_t*>(g.fastgcn_weights.data()), n, layer::race_levels(n)};
    race_draws(t, drawn, seed, ls, keys.get(), s);
  }
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(keys.get() + drawn, dst, static_cast<std::size_t>(n_dst) * sizeof(int64_t),
                                       cudaMemcpyDeviceToDevice, s));
  DeviceColumns out;
  out.ids = sorted_unique(keys.get(), drawn + n_dst, n, out.size, s);
  out.weights = DeviceScratch<uint64_t>(static_cast<std::size_t>(out.size), s);
  gather_weights_kernel<<<blocks_for(out.size), kThreads, 0, s>>>(
      out.ids.get(), out.size, static_cast<const uint64_t*>(g.fastgcn_weights.data()), out.weights.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("gather_weights_kernel");
  return out;
}

template <typename Index>
MiniBatch sample_with(const LayerDeviceGraph& g, const LayerSamplerOptions& options, std::span<const int64_t> seeds,
                      uint64_t stream, cudaStream_t s) {
  const TopologyRef<Index> topo = topology_ref<Index>(g.topology.state());
  MiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  int64_t n_dst = static_cast<int64_t>(seeds.size());
  DeviceScratch<int64_t> dst(static_cast<std::size_t>(n_dst), s);
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(dst.get(), seeds.data(), seeds.size() * sizeof(int64_t),
                                       cudaMemcpyHostToDevice, s));
  for (std::size_t l = 0; l < options.layer_sizes.size(); ++l) {
    if (n_dst == 0) {
      Block& empty = batch.blocks.emplace_back();
      empty.indptr = {0};
      continue;
    }
    const uint64_t ls = layer_stream(stream, static_cast<int>(l));
    const int64_t size = options.layer_sizes[l];
    const DeviceColumns cols =
        options.method == LayerMethod::kLadies
            ? ladies_columns(topo, g.topology.num_nodes(), dst.get(), n_dst, size, options.seed, ls, s)
            : fastgcn_columns(g, dst.get(), n_dst, size, options.seed, ls, s);
    DeviceScratch<int64_t> next;
    int64_t next_size = 0;
    batch.blocks.push_back(build_block(topo, dst.get(), n_dst, cols, next, next_size, s));
    dst = std::move(next);
    n_dst = next_size;
  }
  // The scratch frees are stream-ordered; the host data is complete after the last synchronise.
  return batch;
}

}  // namespace

LayerDeviceGraph* upload_layer_graph(const SampleGraph& graph, std::span<const uint64_t> fastgcn_weights,
                                     std::span<const uint64_t> fastgcn_tree, int device) {
  const auto upload = [device](std::span<const uint64_t> host) {
    Buffer d(MemoryKind::kDevice, host.size_bytes(), device);
    copy_bytes(d.data(), MemoryKind::kDevice, host.data(), MemoryKind::kHost, host.size_bytes());
    return d;
  };
  return new LayerDeviceGraph(DeviceTopology(graph, {.placement = TopologyPlacement::kDevice, .device = device}),
                              upload(fastgcn_weights), upload(fastgcn_tree));
}

void free_layer_graph(LayerDeviceGraph* graph) noexcept { delete graph; }

MiniBatch sample_layers(const LayerDeviceGraph& graph, const LayerSamplerOptions& options,
                        std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream) {
  GRAPHTIER_CUDA_CHECK(cudaSetDevice(graph.topology.device()));
  const cudaStream_t s = native(cuda_stream);
  return graph.topology.state().index64 ? sample_with<int64_t>(graph, options, seeds, stream, s)
                                        : sample_with<int32_t>(graph, options, seeds, stream, s);
}

}  // namespace graphtier::sample::cuda
