// CUDA backend of layer-wise sampling: the steps of cpu/layer_sampler_cpu.cpp as kernels and CUB
// primitives, bit-identical to them.
//
// NOTE: what keeps the two backends identical.
//   - Column weights are 128-bit integer sums (atomics with an explicit carry): the result does
//     not depend on the order in which threads add, and every later step (shift, prefix sums,
//     tree) is integer arithmetic shared with the host through layer_draws.hpp.
//   - The draws are the race of layer_draws.hpp: keys are computed in parallel by the same
//     __host__ __device__ functions the host calls (integer weights exact in double, IEEE-rounded
//     operations, portable_log), then a stable radix sort of (key bits, position) gives the host's
//     (key, position) order. LADIES computes every candidate's key; FastGCN, whose candidates are
//     all nodes, goes down the tree by stages (staged_draws), never sorting all of them.
//   - Edge weights are the only floating point: each row's inverses are summed by the pairwise
//     tree of layer_row_sums.hpp, whose shape depends only on the row's length (warps sum aligned
//     blocks of 256, levels of warps the blocks' sums), with explicitly rounded intrinsics
//     (__ddiv_rn, __dadd_rn, __double2float_rn) that nvcc cannot contract into FMAs; the host
//     builds the same tree with the same IEEE operations (pairwise_sum).
//   - Every per-row step runs a thread per nonzero (finding its row by a binary search of the
//     rows' offsets) or a warp per 256 terms, so a hub row is spread over the device.
//   - Compaction orders new nodes by their first edge position (atomicMin, order-independent),
//     which is the host's first-appearance order.
//
// NOTE: synchronisation budget, one per layer. The host sizes every array by bounds it knows (the
// dst rows' Σ (degree + 1) from its copy of the row pointers: nonzeros of the rows, candidates,
// block edges; drawn + dst for FastGCN), the counts (candidates, src set, edges, new nodes) stay on
// the device and the kernels read them there, and the layer's block comes back through pinned
// staging in one synchronisation (build_block), which also gives the host the next layer's dst
// count. No allocation waits (stream-ordered scratch from the pool that keeps its memory) and no
// copy is pageable. The device form (sample_device_with) keeps the same one wait per layer but
// reads only four counts in it: the block stays where build_device_block wrote it, and the next
// layer's bounds, which the host cannot compute without the src nodes, come from the device.
#include <cuda_runtime.h>

#include <algorithm>
#include <cub/cub.cuh>
#include <exception>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "graphtier/core/device_memory.hpp"
#include "graphtier/core/memory.hpp"
#include "cuda/layer_block_cuda.cuh"
#include "cuda/layer_sampler_cuda.hpp"
#include "current_device.cuh"
#include "layer_draws.hpp"
#include "layer_row_sums.hpp"

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

/// columns[e] = the column of nonzero e of the dst rows (DstRows' layout), a thread per nonzero.
template <typename Index>
__global__ void gather_columns_kernel(TopologyRef<Index> topo, const int64_t* dst, int64_t n, const int64_t* offsets,
                                      int64_t nonzeros, int64_t* columns) {
  GRAPHTIER_GRID_STRIDE(e, nonzeros) {
    const int64_t i = layer::segment_of(offsets, n, e);
    columns[e] = nonzero_column(topo, dst[i], e - offsets[i]);
  }
}

/// Adds each nonzero's contribution (its row's, from the row's degree = its nonzeros - 1) to its
/// column's sum, a thread per nonzero.
__global__ void column_sums_kernel(const int64_t* offsets, int64_t n, int64_t nonzeros, const int64_t* columns,
                                   const int64_t* candidates, const int64_t* num_candidates_at, U128* sums) {
  const int64_t num_candidates = *num_candidates_at;
  GRAPHTIER_GRID_STRIDE(e, nonzeros) {
    const int64_t i = layer::segment_of(offsets, n, e);
    const uint64_t q = layer::row_contribution(offsets[i + 1] - offsets[i] - 1);
    atomic_add(&sums[layer::find_sorted(candidates, num_candidates, columns[e])], q);
  }
}

/// w_u from the column sums for the *n candidates, 0 past them (so that prefix sums over the
/// capacity stay those of the candidates); the shift comes from the device-side total.
__global__ void draw_weights_kernel(const U128* sums, int64_t capacity, const int64_t* n_at, const U128* total,
                                    uint64_t* weights) {
  const int64_t n = *n_at;
  const int shift = layer::weight_shift(*total);
  GRAPHTIER_GRID_STRIDE(k, capacity) { weights[k] = k < n ? layer::draw_weight(sums[k], shift) : 0; }
}

/// The internal nodes of the race tree of the *n candidates (layer_draws.hpp), each from two prefix
/// sums; `slots` (a power of two) is the room for the largest tree the capacity allows.
__global__ void race_tree_kernel(const uint64_t* prefix, const int64_t* n_at, int64_t slots, uint64_t* internal) {
  const int64_t n = *n_at;
  const int levels = layer::race_levels(n);
  GRAPHTIER_GRID_STRIDE(x, slots) {
    internal[x] = x == 0 || x >= (int64_t{1} << levels) ? 0 : layer::race_tree_entry(prefix, n, levels, x);
  }
}

/// Every candidate's race key, walking its path from the root (O(levels) each, all in parallel),
/// as the bits of a positive double (ordered like the double), with its position; entries past the
/// *n candidates get the largest key bits [0, 63) hold, after every real key.
__global__ void race_keys_kernel(const uint64_t* internal, const uint64_t* weights, const int64_t* n_at,
                                 int64_t capacity, uint64_t seed, uint64_t layer_stream, unsigned long long* keys,
                                 int64_t* positions) {
  const int64_t n = *n_at;
  const layer::RaceTree t{internal, weights, n, layer::race_levels(n)};
  GRAPHTIER_GRID_STRIDE(i, capacity) {
    keys[i] = i < n ? static_cast<unsigned long long>(__double_as_longlong(layer::race_leaf_key(t, seed, layer_stream, i)))
                    : 0x7FFFFFFFFFFFFFFFull;
    positions[i] = i;
  }
}

/// The src flags of the draws: every candidate when size >= *n, else the first `size` positions in
/// race order.
__global__ void mark_drawn_kernel(const int64_t* race_order, int64_t capacity, int64_t size, const int64_t* n_at,
                                  unsigned char* flags) {
  const int64_t n = *n_at;
  GRAPHTIER_GRID_STRIDE(k, capacity) {
    if (size >= n) {
      if (k < n) flags[k] = 1;
    } else if (k < size) {
      flags[race_order[k]] = 1;
    }
  }
}

__global__ void mark_all_kernel(int64_t capacity, const int64_t* n_at, unsigned char* flags) {
  const int64_t n = *n_at;
  GRAPHTIER_GRID_STRIDE(k, capacity) { flags[k] = k < n ? 1 : 0; }
}

__global__ void mark_nodes_kernel(const int64_t* nodes, int64_t n, const int64_t* ids, const int64_t* num_ids_at,
                                  unsigned char* flags) {
  const int64_t num_ids = *num_ids_at;
  GRAPHTIER_GRID_STRIDE(i, n) { flags[layer::find_sorted(ids, num_ids, nodes[i])] = 1; }
}

/// Stage 0 of the staged draws (layer_draws.hpp): the key of every node at depth `depth`, from the
/// root, as bits, with the node, in node order.
__global__ void race_depth_keys_kernel(layer::RaceTree t, uint64_t seed, uint64_t layer_stream, int depth,
                                       unsigned long long* keys, int64_t* nodes) {
  const int64_t count = int64_t{1} << depth;
  GRAPHTIER_GRID_STRIDE(c, count) {
    keys[c] = detail::double_bits(layer::race_node_key(t, seed, layer_stream, count + c, depth));
    nodes[c] = count + c;
  }
}

/// A later stage: the keys of the nodes `step` levels below the `kept` nodes at depth `depth` (in
/// node order, with their keys as bits), in node order.
__global__ void race_expand_kernel(layer::RaceTree t, uint64_t seed, uint64_t layer_stream,
                                   const unsigned long long* kept_keys, const int64_t* kept_nodes, int64_t kept,
                                   int depth, int step, unsigned long long* keys, int64_t* nodes) {
  GRAPHTIER_GRID_STRIDE(c, kept << step) {
    const int64_t y = (kept_nodes[c >> step] << step) + (c & ((int64_t{1} << step) - 1));
    const double m = detail::bits_double(kept_keys[c >> step]);
    keys[c] = detail::double_bits(layer::race_descendant_key(t, seed, layer_stream, depth, m, y, depth + step));
    nodes[c] = y;
  }
}

/// flags[c] = whether pair c is among the s smallest, i.e. at most the s-th smallest pair (the
/// sorted arrays' entry s - 1); exactly s pass, since the nodes are distinct.
__global__ void race_keep_kernel(const unsigned long long* keys, const int64_t* nodes, int64_t count,
                                 const unsigned long long* sorted_keys, const int64_t* sorted_nodes, int64_t s,
                                 unsigned char* flags) {
  const uint64_t last_key = sorted_keys[s - 1];
  const int64_t last_node = sorted_nodes[s - 1];
  GRAPHTIER_GRID_STRIDE(c, count) { flags[c] = layer::race_at_most(keys[c], nodes[c], last_key, last_node) ? 1 : 0; }
}

/// The draws: the candidate positions of the first s leaves in race order.
__global__ void race_positions_kernel(const int64_t* sorted_leaves, int64_t s, int levels, int64_t* out) {
  GRAPHTIER_GRID_STRIDE(j, s) { out[j] = sorted_leaves[j] - (int64_t{1} << levels); }
}

__global__ void iota_kernel(int64_t* out, int64_t n) {
  GRAPHTIER_GRID_STRIDE(k, n) { out[k] = k; }
}

__global__ void gather_weights_kernel(const int64_t* ids, int64_t capacity, const int64_t* n_at,
                                      const uint64_t* all_weights, uint64_t* weights) {
  const int64_t n = *n_at;
  GRAPHTIER_GRID_STRIDE(k, capacity) { weights[k] = k < n ? all_weights[ids[k]] : 0; }
}

/// Σ (degree + 1) over src[0, n_dst + *num_new_at) added into bounds[0], and its largest term
/// into bounds[1] (both zeroed before): the next layer's RowBounds, which size its arrays and set
/// its row sums' levels. Integer atomics: the order of the updates does not matter.
__global__ void src_nonzeros_kernel(const int64_t* indptr, const int64_t* src, int64_t n_dst, const int64_t* num_new_at,
                                    unsigned long long* bounds) {
  const int64_t n = n_dst + *num_new_at;
  unsigned long long sum = 0, largest = 0;
  GRAPHTIER_GRID_STRIDE(j, n) {
    const auto row = static_cast<unsigned long long>(indptr[src[j] + 1] - indptr[src[j]] + 1);
    sum += row;
    largest = row > largest ? row : largest;
  }
  if (sum != 0) {
    atomicAdd(&bounds[0], sum);
    atomicMax(&bounds[1], largest);
  }
}

/// The block's src nodes, as many as the device counted, into page-locked host memory (mapped).
__global__ void copy_src_nodes_kernel(const int64_t* src, int64_t n_dst, const int64_t* num_new_at, int64_t* host) {
  const int64_t n = n_dst + *num_new_at;
  GRAPHTIER_GRID_STRIDE(j, n) { host[j] = src[j]; }
}

/// Keeps a scratch array alive in a DeviceMiniBatch's storage (freed in order on its stream).
template <typename T>
std::shared_ptr<void> keep(DeviceScratch<T>&& array) {
  auto owner = std::make_shared<DeviceScratch<T>>(std::move(array));
  T* data = owner->get();
  return std::shared_ptr<void>(std::move(owner), data);
}

/// Sorted unique copy of keys[0, n) in an array of n entries; the count goes to `count` (device).
DeviceScratch<int64_t> sorted_unique(const int64_t* keys, int64_t n, int64_t num_nodes, DeviceScratch<int64_t>& count,
                                     cudaStream_t s) {
  DeviceScratch<int64_t> sorted(static_cast<std::size_t>(n), s);
  const int end_bit = bits_for(num_nodes);
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceRadixSort::SortKeys(t, b, keys, sorted.get(), n, 0, end_bit, s);
  });
  DeviceScratch<int64_t> unique(static_cast<std::size_t>(n), s);
  count = DeviceScratch<int64_t>(1, s);
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceSelect::Unique(t, b, sorted.get(), unique.get(), count.get(), n, s);
  });
  return unique;
}

/// The race order of the *n_at candidates (LADIES: a count only the device knows) with
/// weights[0, capacity) (0 past the candidates) and the race tree's internal nodes, into
/// order[0, capacity): every key, then a stable radix sort of (key bits, position) pairs whose
/// input is in position order, so equal keys stay in position order: the host's (key, position)
/// order exactly.
void race_order(const uint64_t* internal, const uint64_t* weights, const int64_t* n_at, int64_t capacity,
                uint64_t seed, uint64_t ls, int64_t* order, cudaStream_t s) {
  DeviceScratch<unsigned long long> keys(static_cast<std::size_t>(capacity), s);
  DeviceScratch<unsigned long long> sorted_keys(static_cast<std::size_t>(capacity), s);
  DeviceScratch<int64_t> positions(static_cast<std::size_t>(capacity), s);
  race_keys_kernel<<<blocks_for(capacity), kThreads, 0, s>>>(internal, weights, n_at, capacity, seed, ls, keys.get(),
                                                             positions.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("race_keys_kernel");
  // Keys are positive doubles or the padding 2^63 - 1 (sign bit 0): bits [0, 63) order them.
  run_cub(s, [&](void* tmp, std::size_t& b) {
    return cub::DeviceRadixSort::SortPairs(tmp, b, keys.get(), sorted_keys.get(), positions.get(), order, capacity, 0,
                                           63, s);
  });
}

/// The s draws (0 < s < n) among the n candidates of a race tree kept on the device, by stages
/// (layer_draws.hpp): their positions into out[0, s), in race order. Each stage sorts at most
/// race_stage_width(s) (key bits, node) pairs, generated in node order, so that the stable sort
/// breaks equal keys by node as the host does; the s kept go on in node order (a stable selection
/// below the s-th pair).
void staged_draws(const uint64_t* internal, const uint64_t* weights, int64_t n, int64_t s, uint64_t seed, uint64_t ls,
                  int64_t* out, cudaStream_t st) {
  const layer::RaceTree t{internal, weights, n, layer::race_levels(n)};
  const int first = layer::race_first_depth(t.levels, s);
  const int step = layer::race_stage_step(s);
  const int64_t width = std::max(int64_t{1} << first, first < t.levels ? s << step : 0);
  DeviceScratch<unsigned long long> keys(static_cast<std::size_t>(width), st);
  DeviceScratch<unsigned long long> sorted_keys(static_cast<std::size_t>(width), st);
  DeviceScratch<int64_t> nodes(static_cast<std::size_t>(width), st);
  DeviceScratch<int64_t> sorted_nodes(static_cast<std::size_t>(width), st);
  int depth = first;
  int64_t count = int64_t{1} << first;
  race_depth_keys_kernel<<<blocks_for(count), kThreads, 0, st>>>(t, seed, ls, depth, keys.get(), nodes.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("race_depth_keys_kernel");
  DeviceScratch<unsigned char> flags;
  DeviceScratch<unsigned long long> kept_keys;
  DeviceScratch<int64_t> kept_nodes;
  DeviceScratch<int64_t> num_kept;
  if (first < t.levels) {
    flags = DeviceScratch<unsigned char>(static_cast<std::size_t>(width), st);
    kept_keys = DeviceScratch<unsigned long long>(static_cast<std::size_t>(s), st);
    kept_nodes = DeviceScratch<int64_t>(static_cast<std::size_t>(s), st);
    num_kept = DeviceScratch<int64_t>(1, st);
  }
  for (;;) {
    // More than s pairs at every stage (2^d_0 > 4 s or the n > s leaves, then s · 2^k): keys are
    // positive doubles or +inf for weightless nodes, so bits [0, 63) order them.
    run_cub(st, [&](void* tmp, std::size_t& b) {
      return cub::DeviceRadixSort::SortPairs(tmp, b, keys.get(), sorted_keys.get(), nodes.get(), sorted_nodes.get(),
                                             count, 0, 63, st);
    });
    if (depth == t.levels) break;
    race_keep_kernel<<<blocks_for(count), kThreads, 0, st>>>(keys.get(), nodes.get(), count, sorted_keys.get(),
                                                             sorted_nodes.get(), s, flags.get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("race_keep_kernel");
    run_cub(st, [&](void* tmp, std::size_t& b) {
      return cub::DeviceSelect::Flagged(tmp, b, keys.get(), flags.get(), kept_keys.get(), num_kept.get(), count, st);
    });
    run_cub(st, [&](void* tmp, std::size_t& b) {
      return cub::DeviceSelect::Flagged(tmp, b, nodes.get(), flags.get(), kept_nodes.get(), num_kept.get(), count, st);
    });
    const int k = std::min(step, t.levels - depth);
    race_expand_kernel<<<blocks_for(s << k), kThreads, 0, st>>>(t, seed, ls, kept_keys.get(), kept_nodes.get(), s,
                                                                depth, k, keys.get(), nodes.get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("race_expand_kernel");
    depth += k;
    count = s << k;
  }
  race_positions_kernel<<<blocks_for(s), kThreads, 0, st>>>(sorted_nodes.get(), s, t.levels, out);
  GRAPHTIER_CUDA_CHECK_LAUNCH("race_positions_kernel");
}

template <typename Index>
DeviceColumns ladies_columns(TopologyRef<Index> topo, int64_t num_nodes, const DstRows& rows, int64_t size,
                             uint64_t seed, uint64_t ls, cudaStream_t s) {
  const int64_t* dst = rows.ids;
  const int64_t n_dst = rows.n;
  const int64_t nonzeros = rows.nonzeros;
  DeviceScratch<int64_t> columns(static_cast<std::size_t>(nonzeros), s);
  gather_columns_kernel<Index><<<blocks_for(nonzeros), kThreads, 0, s>>>(topo, dst, n_dst, rows.offsets, nonzeros,
                                                                         columns.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("gather_columns_kernel");
  // The candidates: at most `nonzeros` (the capacity of every per-candidate array), *n_cand of them.
  const int64_t cap = nonzeros;
  DeviceScratch<int64_t> n_cand;
  const DeviceScratch<int64_t> candidates = sorted_unique(columns.get(), nonzeros, num_nodes, n_cand, s);

  DeviceScratch<U128> sums(static_cast<std::size_t>(cap), s);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(sums.get(), 0, static_cast<std::size_t>(cap) * sizeof(U128), s));
  column_sums_kernel<<<blocks_for(nonzeros), kThreads, 0, s>>>(rows.offsets, n_dst, nonzeros, columns.get(),
                                                               candidates.get(), n_cand.get(), sums.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("column_sums_kernel");
  DeviceScratch<U128> total(1, s);
  run_cub(s, [&](void* t, std::size_t& b) {  // the zeros past the candidates add nothing
    return cub::DeviceReduce::Reduce(t, b, sums.get(), total.get(), cap, Add128{}, U128{}, s);
  });
  DeviceScratch<uint64_t> weights(static_cast<std::size_t>(cap), s);
  draw_weights_kernel<<<blocks_for(cap), kThreads, 0, s>>>(sums.get(), cap, n_cand.get(), total.get(), weights.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("draw_weights_kernel");

  DeviceScratch<unsigned char> in_src(static_cast<std::size_t>(cap), s);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(in_src.get(), 0, static_cast<std::size_t>(cap), s));
  if (size < 0) {
    mark_all_kernel<<<blocks_for(cap), kThreads, 0, s>>>(cap, n_cand.get(), in_src.get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("mark_all_kernel");
  } else if (size > 0) {
    // size >= the candidate count takes them all (decided on the device, mark_drawn_kernel); the
    // race below is then computed for nothing, which costs less than asking the host.
    DeviceScratch<uint64_t> prefix(static_cast<std::size_t>(cap), s);
    run_cub(s, [&](void* t, std::size_t& b) {
      return cub::DeviceScan::InclusiveSum(t, b, weights.get(), prefix.get(), cap, s);
    });
    const int64_t slots = int64_t{1} << layer::race_levels(cap);
    DeviceScratch<uint64_t> internal(static_cast<std::size_t>(slots), s);
    race_tree_kernel<<<blocks_for(slots), kThreads, 0, s>>>(prefix.get(), n_cand.get(), slots, internal.get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("race_tree_kernel");
    DeviceScratch<int64_t> order(static_cast<std::size_t>(cap), s);
    race_order(internal.get(), weights.get(), n_cand.get(), cap, seed, ls, order.get(), s);
    mark_drawn_kernel<<<blocks_for(cap), kThreads, 0, s>>>(order.get(), cap, size, n_cand.get(), in_src.get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("mark_drawn_kernel");
  }
  mark_nodes_kernel<<<blocks_for(n_dst), kThreads, 0, s>>>(dst, n_dst, candidates.get(), n_cand.get(), in_src.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("mark_nodes_kernel");
  DeviceColumns out{DeviceScratch<int64_t>(static_cast<std::size_t>(cap), s),
                    DeviceScratch<uint64_t>(static_cast<std::size_t>(cap), s), DeviceScratch<int64_t>(1, s), cap};
  // The flags past the candidates are 0: selecting over the capacity selects among the candidates.
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceSelect::Flagged(t, b, candidates.get(), in_src.get(), out.ids.get(), out.size.get(), cap, s);
  });
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceSelect::Flagged(t, b, weights.get(), in_src.get(), out.weights.get(), out.size.get(), cap, s);
  });
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
    staged_draws(static_cast<const uint64_t*>(g.fastgcn_tree.data()),
                 static_cast<const uint64_t*>(g.fastgcn_weights.data()), n, drawn, seed, ls, keys.get(), s);
  }
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(keys.get() + drawn, dst, static_cast<std::size_t>(n_dst) * sizeof(int64_t),
                                       cudaMemcpyDeviceToDevice, s));
  DeviceColumns out;
  out.capacity = drawn + n_dst;
  out.ids = sorted_unique(keys.get(), out.capacity, n, out.size, s);
  out.weights = DeviceScratch<uint64_t>(static_cast<std::size_t>(out.capacity), s);
  gather_weights_kernel<<<blocks_for(out.capacity), kThreads, 0, s>>>(
      out.ids.get(), out.capacity, out.size.get(), static_cast<const uint64_t*>(g.fastgcn_weights.data()),
      out.weights.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("gather_weights_kernel");
  return out;
}

/// The host's bounds of the rows `dst`: Σ (degree + 1), the nonzeros of their rows of A + I (a
/// bound of the candidates and of the block's edges), and the largest degree + 1.
struct RowBounds {
  int64_t nonzeros = 0;
  int64_t max_row = 0;
};

RowBounds row_bounds(const std::vector<int64_t>& indptr, std::span<const int64_t> dst) {
  RowBounds b;
  for (const int64_t v : dst) {
    b.nonzeros += indptr[v + 1] - indptr[v] + 1;
    b.max_row = std::max(b.max_row, indptr[v + 1] - indptr[v] + 1);
  }
  return b;
}

/// The layer's DstRows: the layout of the rows dst[0, n) (device), queued on `s`, kept in `offsets`.
DstRows dst_rows(const int64_t* indptr, const int64_t* dst, int64_t n, RowBounds bounds,
                 DeviceScratch<int64_t>& offsets, cudaStream_t s) {
  offsets = row_offsets(indptr, dst, n, s);
  return DstRows{dst, n, offsets.get(), bounds.nonzeros, bounds.max_row};
}

/// A staging arena of the graph's pool for one call; if the call fails with copies in flight, the
/// arena goes back only once the stream has drained them.
class StagingLease {
 public:
  StagingLease(const LayerDeviceGraph& g, cudaStream_t s) : g_(g), s_(s), staging_(g.acquire_staging()) {}
  ~StagingLease() {
    if (std::uncaught_exceptions() > 0 && cudaStreamSynchronize(s_) != cudaSuccess) return;  // leak, never reuse
    g_.release_staging(std::move(staging_));
  }
  StagingLease(const StagingLease&) = delete;
  StagingLease& operator=(const StagingLease&) = delete;
  PinnedStaging& get() const { return *staging_; }

 private:
  const LayerDeviceGraph& g_;
  cudaStream_t s_;
  std::unique_ptr<PinnedStaging> staging_;
};

template <typename Index>
MiniBatch sample_with(const LayerDeviceGraph& g, const LayerSamplerOptions& options, std::span<const int64_t> seeds,
                      uint64_t stream, cudaStream_t s) {
  const TopologyRef<Index> topo = topology_ref<Index>(g.topology.state());
  const StagingLease lease(g, s);
  PinnedStaging& staging = lease.get();
  MiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  int64_t n_dst = static_cast<int64_t>(seeds.size());
  DeviceScratch<int64_t> dst(static_cast<std::size_t>(n_dst), s);
  if (n_dst > 0) {
    auto* staged = static_cast<int64_t*>(staging.take(seeds.size_bytes()));
    std::copy(seeds.begin(), seeds.end(), staged);  // read by the copy until layer 0's synchronisation
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(dst.get(), staged, seeds.size_bytes(), cudaMemcpyHostToDevice, s));
  }
  for (std::size_t l = 0; l < options.layer_sizes.size(); ++l) {
    if (n_dst == 0) {
      Block& empty = batch.blocks.emplace_back();
      empty.indptr = {0};
      continue;
    }
    const uint64_t ls = layer_stream(stream, static_cast<int>(l));
    const int64_t size = options.layer_sizes[l];
    // The dst rows on the host: the seeds, then the previous block's src nodes.
    const std::span<const int64_t> host_dst = l == 0 ? std::span<const int64_t>(batch.seeds)
                                                     : std::span<const int64_t>(batch.blocks.back().src_nodes);
    DeviceScratch<int64_t> offsets;
    const DstRows rows = dst_rows(topo.indptr, dst.get(), n_dst, row_bounds(g.host_indptr, host_dst), offsets, s);
    const DeviceColumns cols = options.method == LayerMethod::kLadies
                                   ? ladies_columns(topo, g.topology.num_nodes(), rows, size, options.seed, ls, s)
                                   : fastgcn_columns(g, dst.get(), n_dst, size, options.seed, ls, s);
    DeviceScratch<int64_t> next;
    int64_t next_size = 0;
    Block block = build_block(topo, rows, cols, staging, next, next_size, s);
    batch.blocks.push_back(std::move(block));
    dst = std::move(next);
    n_dst = next_size;
  }
  // The scratch frees are stream-ordered; the host data is complete after the last synchronise.
  return batch;
}

/// The device form of sample_with: every block stays in device memory (DeviceLayerBlock's arrays,
/// moved into the batch's storage). The layer's one wait reads four counts through pinned
/// staging: its edges, its new nodes, and the row nonzeros of its src nodes, their sum and their
/// largest (the next layer's bounds, found on the device since the host has no copy of the src
/// nodes); in the last layer's wait the sink's page-locked memory also receives the input node ids.
template <typename Index>
DeviceMiniBatch sample_device_with(const LayerDeviceGraph& g, const LayerSamplerOptions& options,
                                   std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream,
                                   const InputNodesSink& input_nodes) {
  const cudaStream_t s = native(cuda_stream);
  const TopologyRef<Index> topo = topology_ref<Index>(g.topology.state());
  const StagingLease lease(g, s);
  PinnedStaging& staging = lease.get();
  const auto layers = options.layer_sizes.size();
  DeviceMiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  batch.stream = cuda_stream;
  batch.device = g.topology.device();
  int64_t n_dst = static_cast<int64_t>(seeds.size());
  const int64_t* dst = nullptr;
  if (n_dst > 0) {
    DeviceScratch<int64_t> d_seeds(static_cast<std::size_t>(n_dst), s);
    auto* staged = static_cast<int64_t*>(staging.take(seeds.size_bytes()));
    std::copy(seeds.begin(), seeds.end(), staged);  // read by the copy until layer 0's synchronisation
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(d_seeds.get(), staged, seeds.size_bytes(), cudaMemcpyHostToDevice, s));
    dst = d_seeds.get();
    batch.storage.push_back(keep(std::move(d_seeds)));
  } else if (input_nodes && layers > 0) {
    input_nodes(0);  // no layer waits: the sink still hears the (empty) input nodes' bound
  }
  RowBounds bounds = row_bounds(g.host_indptr, seeds);
  for (std::size_t l = 0; l < layers; ++l) {
    DeviceBlock& block = batch.blocks.emplace_back();
    if (n_dst == 0) {  // seeds empty: every block is empty, with indptr {0}
      DeviceScratch<int64_t> indptr(1, s);
      GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(indptr.get(), 0, sizeof(int64_t), s));
      block.indptr = indptr.get();
      batch.storage.push_back(keep(std::move(indptr)));
      continue;
    }
    const uint64_t ls = layer_stream(stream, static_cast<int>(l));
    const int64_t size = options.layer_sizes[l];
    DeviceScratch<int64_t> offsets;
    const DstRows rows = dst_rows(topo.indptr, dst, n_dst, bounds, offsets, s);
    const DeviceColumns cols = options.method == LayerMethod::kLadies
                                   ? ladies_columns(topo, g.topology.num_nodes(), rows, size, options.seed, ls, s)
                                   : fastgcn_columns(g, dst, n_dst, size, options.seed, ls, s);
    DeviceLayerBlock d = build_device_block(topo, rows, cols, s);
    const bool last = l + 1 == layers;
    DeviceScratch<unsigned long long> next_bounds(2, s);  // Σ (degree + 1), max (degree + 1)
    if (!last) {
      GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(next_bounds.get(), 0, 2 * sizeof(unsigned long long), s));
      src_nonzeros_kernel<<<blocks_for(d.max_src), kThreads, 0, s>>>(topo.indptr, d.src_nodes.get(), n_dst,
                                                                      d.num_new.get(), next_bounds.get());
      GRAPHTIER_CUDA_CHECK_LAUNCH("src_nonzeros_kernel");
    } else if (input_nodes) {
      // d.max_src bounds the last block's src nodes; the device writes as many as it counted.
      int64_t* host = input_nodes(d.max_src);
      void* mapped = nullptr;
      GRAPHTIER_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, host, 0));
      copy_src_nodes_kernel<<<blocks_for(d.max_src), kThreads, 0, s>>>(d.src_nodes.get(), n_dst, d.num_new.get(),
                                                                        static_cast<int64_t*>(mapped));
      GRAPHTIER_CUDA_CHECK_LAUNCH("copy_src_nodes_kernel");
    }
    // Edges, new nodes, and the next layer's bounds.
    auto* counts = static_cast<int64_t*>(staging.take(4 * sizeof(int64_t)));
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(counts, d.indptr.get() + n_dst, sizeof(int64_t), cudaMemcpyDeviceToHost, s));
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(counts + 1, d.num_new.get(), sizeof(int64_t), cudaMemcpyDeviceToHost, s));
    if (!last) {
      GRAPHTIER_CUDA_CHECK(
          cudaMemcpyAsync(counts + 2, next_bounds.get(), 2 * sizeof(int64_t), cudaMemcpyDeviceToHost, s));
    }
    count_synchronisation();
    ++batch.host_syncs;
    GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(s));  // the layer's one synchronisation
    block.num_dst = n_dst;
    block.num_edges = counts[0];
    block.num_src = n_dst + counts[1];
    block.src_nodes = d.src_nodes.get();
    block.indptr = d.indptr.get();
    block.indices = d.indices.get();
    block.weights = d.weights.get();
    if (!last) bounds = RowBounds{counts[2], counts[3]};
    staging.reset();
    dst = d.src_nodes.get();
    n_dst = block.num_src;
    batch.storage.push_back(keep(std::move(d.src_nodes)));
    batch.storage.push_back(keep(std::move(d.indptr)));
    batch.storage.push_back(keep(std::move(d.indices)));
    batch.storage.push_back(keep(std::move(d.weights)));
  }
  return batch;
}

}  // namespace

LayerDeviceGraph* upload_layer_graph(const DeviceTopology& topology, std::span<const int64_t> host_indptr,
                                     std::span<const uint64_t> fastgcn_weights, std::span<const uint64_t> fastgcn_tree) {
  const int device = topology.device();
  // The topology was checked when it was made; FastGCN's arrays are this sampler's own.
  require_device_memory(detail::concat("CudaLayerSampler (FastGCN's draw weights and race tree over ",
                                       fastgcn_weights.size(), " nodes)"),
                        static_cast<int64_t>(fastgcn_weights.size_bytes() + fastgcn_tree.size_bytes()), device);
  const auto upload = [device](std::span<const uint64_t> host) {
    Buffer d(MemoryKind::kDevice, host.size_bytes(), device);
    copy_bytes(d.data(), MemoryKind::kDevice, host.data(), MemoryKind::kHost, host.size_bytes());
    return d;
  };
  return new LayerDeviceGraph(topology, std::vector<int64_t>(host_indptr.begin(), host_indptr.end()),
                              upload(fastgcn_weights), upload(fastgcn_tree));
}

void free_layer_graph(LayerDeviceGraph* graph) noexcept { delete graph; }

MiniBatch sample_layers(const LayerDeviceGraph& graph, const LayerSamplerOptions& options,
                        std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream) {
  const ::graphtier::cuda::CurrentDevice on_device(graph.topology.device());
  const cudaStream_t s = native(cuda_stream);
  return graph.topology.state().index64 ? sample_with<int64_t>(graph, options, seeds, stream, s)
                                        : sample_with<int32_t>(graph, options, seeds, stream, s);
}

DeviceMiniBatch sample_layers_device(const LayerDeviceGraph& graph, const LayerSamplerOptions& options,
                                     std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream,
                                     const InputNodesSink& input_nodes) {
  const ::graphtier::cuda::CurrentDevice on_device(graph.topology.device());
  return graph.topology.state().index64
             ? sample_device_with<int64_t>(graph, options, seeds, stream, cuda_stream, input_nodes)
             : sample_device_with<int32_t>(graph, options, seeds, stream, cuda_stream, input_nodes);
}

}  // namespace graphtier::sample::cuda
