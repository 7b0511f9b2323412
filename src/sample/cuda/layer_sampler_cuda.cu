// CUDA backend of layer-wise sampling: the steps of cpu/layer_sampler_cpu.cpp as kernels and CUB
// primitives, bit-identical to them.
//
// NOTE: what keeps the two backends identical.
//   - Column weights are 128-bit integer sums (atomics with an explicit carry): the result does
//     not depend on the order in which threads add, and every later step (shift, prefix sums,
//     draws) is integer arithmetic shared with the host through layer_draws.hpp.
//   - The successive draws are sequential by definition: one thread runs the host's code.
//   - Edge weights are the only floating point: one thread per row sums its inverses left to right
//     with explicitly rounded intrinsics (__ddiv_rn, __dadd_rn, __double2float_rn), so nvcc cannot
//     contract them into FMAs, and the host does the same IEEE operations in the same order.
//   - Compaction orders new nodes by their first edge position (atomicMin, order-independent),
//     which is the host's first-appearance order.
#include <cuda_runtime.h>

#include <algorithm>
#include <cub/cub.cuh>
#include <utility>
#include <variant>
#include <vector>

#include "core/cuda/memory_cuda.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "sample/cuda/layer_sampler_cuda.hpp"
#include "sample/layer_draws.hpp"

#define GRAPHTIER_CUDA_CHECK(call) ::graphtier::cuda::check(static_cast<int>(call), #call, __FILE__, __LINE__)

namespace graphtier::sample::cuda {

struct LayerDeviceGraph {
  int device = 0;
  int64_t num_nodes = 0;
  bool wide_indices = false;  // int64 indices, else int32
  Buffer indptr;              // int64 [num_nodes + 1]
  Buffer indices;             // int32 or int64 [num_edges]
  Buffer fastgcn_weights;     // uint64 [num_nodes] (FastGCN only)
  Buffer fastgcn_tree;        // uint64 [num_nodes], Fenwick tree of the weights (FastGCN only)
};

namespace {

using layer::U128;

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, int64_t{1} << 20));
}

void check_launch(const char* kernel) { ::graphtier::cuda::check(static_cast<int>(cudaGetLastError()), kernel, __FILE__, __LINE__); }

/// Stream-ordered scratch memory: freed on the stream, so it may be released while kernels that
/// use it are still queued.
template <typename T>
class Scratch {
 public:
  Scratch() = default;
  Scratch(std::size_t n, cudaStream_t stream) : stream_(stream) {
    void* p = nullptr;
    GRAPHTIER_CUDA_CHECK(cudaMallocAsync(&p, std::max<std::size_t>(n, 1) * sizeof(T), stream));
    ptr_ = static_cast<T*>(p);
  }
  ~Scratch() {
    if (ptr_ != nullptr) cudaFreeAsync(ptr_, stream_);
  }
  Scratch(Scratch&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)), stream_(other.stream_) {}
  Scratch& operator=(Scratch&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(stream_, other.stream_);
    return *this;
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  T* get() const noexcept { return ptr_; }

 private:
  T* ptr_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

/// Runs a CUB device algorithm: the size query, then the call with its temporary storage.
template <typename Fn>
void run_cub(cudaStream_t stream, Fn&& fn) {
  std::size_t bytes = 0;
  GRAPHTIER_CUDA_CHECK(fn(nullptr, bytes));
  Scratch<unsigned char> temp(bytes, stream);
  GRAPHTIER_CUDA_CHECK(fn(temp.get(), bytes));
}

template <typename T>
T read_one(const T* device_value, cudaStream_t stream) {
  T value{};
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(&value, device_value, sizeof(T), cudaMemcpyDeviceToHost, stream));
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(stream));
  return value;
}

struct Add128 {
  __host__ __device__ U128 operator()(const U128& a, const U128& b) const { return layer::add(a, b); }
};

__device__ void atomic_add(U128* sum, uint64_t q) {
  auto* lo = reinterpret_cast<unsigned long long*>(&sum->lo);
  const unsigned long long old = atomicAdd(lo, static_cast<unsigned long long>(q));
  if (old + q < old) atomicAdd(reinterpret_cast<unsigned long long*>(&sum->hi), 1ull);
}

#define GRID_STRIDE(i, n)                                                                    \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// ---- LADIES candidates and column weights --------------------------------------------------

/// counts[i] = d_i + 1 (the row's nonzeros in A + I).
__global__ void row_nonzeros_kernel(const int64_t* indptr, const int64_t* dst, int64_t n, int64_t* counts) {
  GRID_STRIDE(i, n) { counts[i] = indptr[dst[i] + 1] - indptr[dst[i]] + 1; }
}

template <typename Index>
__global__ void gather_columns_kernel(const int64_t* indptr, const Index* indices, const int64_t* dst, int64_t n,
                                      const int64_t* offsets, int64_t* columns) {
  GRID_STRIDE(i, n) {
    const int64_t v = dst[i];
    int64_t out = offsets[i];
    for (int64_t p = indptr[v]; p < indptr[v + 1]; ++p) columns[out++] = static_cast<int64_t>(indices[p]);
    columns[out] = v;
  }
}

template <typename Index>
__global__ void column_sums_kernel(const int64_t* indptr, const Index* indices, const int64_t* dst, int64_t n,
                                   const int64_t* candidates, int64_t num_candidates, U128* sums) {
  GRID_STRIDE(i, n) {
    const int64_t v = dst[i];
    const uint64_t q = layer::row_contribution(indptr[v + 1] - indptr[v]);
    for (int64_t p = indptr[v]; p < indptr[v + 1]; ++p) {
      atomic_add(&sums[layer::find_sorted(candidates, num_candidates, static_cast<int64_t>(indices[p]))], q);
    }
    atomic_add(&sums[layer::find_sorted(candidates, num_candidates, v)], q);
  }
}

__global__ void draw_weights_kernel(const U128* sums, int64_t n, int shift, uint64_t* weights) {
  GRID_STRIDE(k, n) { weights[k] = layer::draw_weight(sums[k], shift); }
}

__global__ void fenwick_from_prefix_kernel(const uint64_t* prefix, int64_t n, uint64_t* tree) {
  GRID_STRIDE(i, n) { tree[i] = layer::fenwick_entry(prefix, i); }
}

/// One thread: the draws are sequential by definition (each depends on the weight left by the
/// previous ones). O(s log n) dependent loads.
__global__ void successive_draws_kernel(uint64_t* tree, const uint64_t* weights, int64_t n, int64_t s, uint64_t seed,
                                        uint64_t layer_stream, int64_t* chosen) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    layer::DenseFenwick t{tree};
    layer::successive_draws(t, weights, n, s, seed, layer_stream, chosen);
  }
}

__global__ void mark_positions_kernel(const int64_t* positions, int64_t n, unsigned char* flags) {
  GRID_STRIDE(k, n) { flags[positions[k]] = 1; }
}

__global__ void mark_nodes_kernel(const int64_t* nodes, int64_t n, const int64_t* ids, int64_t num_ids,
                                  unsigned char* flags) {
  GRID_STRIDE(i, n) { flags[layer::find_sorted(ids, num_ids, nodes[i])] = 1; }
}

__global__ void iota_kernel(int64_t* out, int64_t n) {
  GRID_STRIDE(k, n) { out[k] = k; }
}

__global__ void gather_weights_kernel(const int64_t* ids, int64_t n, const uint64_t* all_weights, uint64_t* weights) {
  GRID_STRIDE(k, n) { weights[k] = all_weights[ids[k]]; }
}

// ---- Block edges and weights -------------------------------------------------------------------

template <typename Index>
__global__ void count_edges_kernel(const int64_t* indptr, const Index* indices, const int64_t* dst, int64_t n,
                                   const int64_t* ids, int64_t num_ids, int64_t* counts) {
  GRID_STRIDE(i, n) {
    const int64_t v = dst[i];
    int64_t c = 1;  // the self-loop: every dst node is in the src set
    for (int64_t p = indptr[v]; p < indptr[v + 1]; ++p) {
      if (layer::find_sorted(ids, num_ids, static_cast<int64_t>(indices[p])) >= 0) ++c;
    }
    counts[i] = c;
  }
}

/// One thread per row: the row's edges (CSC order, self-loop last), 1 / w_u, and the row-normalised
/// weights summed left to right as on the host.
template <typename Index>
__global__ void fill_edges_kernel(const int64_t* indptr, const Index* indices, const int64_t* dst, int64_t n,
                                  const int64_t* ids, const uint64_t* id_weights, int64_t num_ids,
                                  const int64_t* block_indptr, int64_t* edge_slots, double* inverse, float* weights) {
  GRID_STRIDE(i, n) {
    const int64_t v = dst[i];
    const int64_t first = block_indptr[i];
    int64_t e = first;
    for (int64_t p = indptr[v]; p < indptr[v + 1]; ++p) {
      const int64_t k = layer::find_sorted(ids, num_ids, static_cast<int64_t>(indices[p]));
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

// ---- Compaction: dst first, then new nodes by first appearance ---------------------------------

__global__ void dst_locals_kernel(const int64_t* dst, int64_t n, const int64_t* ids, int64_t num_ids, int64_t* local) {
  GRID_STRIDE(i, n) { local[layer::find_sorted(ids, num_ids, dst[i])] = i; }
}

__global__ void first_appearance_kernel(const int64_t* edge_slots, int64_t num_edges, const int64_t* local,
                                        unsigned long long* first) {
  GRID_STRIDE(e, num_edges) {
    const int64_t k = edge_slots[e];
    if (local[k] < 0) atomicMin(&first[k], static_cast<unsigned long long>(e));
  }
}

__global__ void new_node_flags_kernel(const int64_t* local, const unsigned long long* first, int64_t n,
                                      unsigned char* flags) {
  GRID_STRIDE(k, n) { flags[k] = local[k] < 0 && first[k] != ~0ull ? 1 : 0; }
}

__global__ void number_new_nodes_kernel(const int64_t* slots, int64_t n, int64_t num_dst, const int64_t* ids,
                                        int64_t* local, int64_t* src_nodes) {
  GRID_STRIDE(j, n) {
    local[slots[j]] = num_dst + j;
    src_nodes[num_dst + j] = ids[slots[j]];
  }
}

__global__ void local_indices_kernel(const int64_t* edge_slots, int64_t num_edges, const int64_t* local,
                                     int64_t* indices) {
  GRID_STRIDE(e, num_edges) { indices[e] = local[edge_slots[e]]; }
}

#undef GRID_STRIDE

int bits_for(int64_t max_value) {
  int bits = 1;
  while (bits < 63 && (int64_t{1} << bits) <= max_value) ++bits;
  return bits;
}

/// The src set of a block (ascending ids) and the w_u of each.
struct DeviceColumns {
  Scratch<int64_t> ids;
  Scratch<uint64_t> weights;
  int64_t size = 0;
};

/// Sorted unique copy of keys[0, n).
Scratch<int64_t> sorted_unique(const int64_t* keys, int64_t n, int64_t num_nodes, int64_t& count, cudaStream_t s) {
  Scratch<int64_t> sorted(static_cast<std::size_t>(n), s);
  const int end_bit = bits_for(num_nodes);
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceRadixSort::SortKeys(t, b, keys, sorted.get(), n, 0, end_bit, s);
  });
  Scratch<int64_t> unique(static_cast<std::size_t>(n), s);
  Scratch<int64_t> num(1, s);
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceSelect::Unique(t, b, sorted.get(), unique.get(), num.get(), n, s);
  });
  count = read_one(num.get(), s);
  return unique;
}

template <typename Index>
DeviceColumns ladies_columns(const LayerDeviceGraph& g, const Index* indices, const int64_t* dst, int64_t n_dst,
                             int64_t size, uint64_t seed, uint64_t ls, cudaStream_t s) {
  const auto* indptr = static_cast<const int64_t*>(g.indptr.data());
  Scratch<int64_t> offsets(static_cast<std::size_t>(n_dst + 1), s);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(offsets.get(), 0, static_cast<std::size_t>(n_dst + 1) * sizeof(int64_t), s));
  row_nonzeros_kernel<<<blocks_for(n_dst), kThreads, 0, s>>>(indptr, dst, n_dst, offsets.get());
  check_launch("row_nonzeros_kernel");
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceScan::ExclusiveSum(t, b, offsets.get(), offsets.get(), n_dst + 1, s);
  });
  const int64_t nonzeros = read_one(offsets.get() + n_dst, s);
  Scratch<int64_t> columns(static_cast<std::size_t>(nonzeros), s);
  gather_columns_kernel<Index><<<blocks_for(n_dst), kThreads, 0, s>>>(indptr, indices, dst, n_dst, offsets.get(),
                                                                      columns.get());
  check_launch("gather_columns_kernel");
  int64_t n_cand = 0;
  const Scratch<int64_t> candidates = sorted_unique(columns.get(), nonzeros, g.num_nodes, n_cand, s);

  Scratch<U128> sums(static_cast<std::size_t>(n_cand), s);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(sums.get(), 0, static_cast<std::size_t>(n_cand) * sizeof(U128), s));
  column_sums_kernel<Index><<<blocks_for(n_dst), kThreads, 0, s>>>(indptr, indices, dst, n_dst, candidates.get(),
                                                                   n_cand, sums.get());
  check_launch("column_sums_kernel");
  Scratch<U128> total(1, s);
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceReduce::Reduce(t, b, sums.get(), total.get(), n_cand, Add128{}, U128{}, s);
  });
  const int shift = layer::weight_shift(read_one(total.get(), s));
  Scratch<uint64_t> weights(static_cast<std::size_t>(n_cand), s);
  draw_weights_kernel<<<blocks_for(n_cand), kThreads, 0, s>>>(sums.get(), n_cand, shift, weights.get());
  check_launch("draw_weights_kernel");

  Scratch<unsigned char> in_src(static_cast<std::size_t>(n_cand), s);
  if (size < 0 || size >= n_cand) {
    GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(in_src.get(), 1, static_cast<std::size_t>(n_cand), s));
  } else {
    GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(in_src.get(), 0, static_cast<std::size_t>(n_cand), s));
    Scratch<uint64_t> prefix(static_cast<std::size_t>(n_cand), s);
    run_cub(s, [&](void* t, std::size_t& b) {
      return cub::DeviceScan::InclusiveSum(t, b, weights.get(), prefix.get(), n_cand, s);
    });
    Scratch<uint64_t> tree(static_cast<std::size_t>(n_cand), s);
    fenwick_from_prefix_kernel<<<blocks_for(n_cand), kThreads, 0, s>>>(prefix.get(), n_cand, tree.get());
    check_launch("fenwick_from_prefix_kernel");
    Scratch<int64_t> chosen(static_cast<std::size_t>(size), s);
    if (size > 0) {
      successive_draws_kernel<<<1, 1, 0, s>>>(tree.get(), weights.get(), n_cand, size, seed, ls, chosen.get());
      check_launch("successive_draws_kernel");
      mark_positions_kernel<<<blocks_for(size), kThreads, 0, s>>>(chosen.get(), size, in_src.get());
      check_launch("mark_positions_kernel");
    }
    mark_nodes_kernel<<<blocks_for(n_dst), kThreads, 0, s>>>(dst, n_dst, candidates.get(), n_cand, in_src.get());
    check_launch("mark_nodes_kernel");
  }
  DeviceColumns out{Scratch<int64_t>(static_cast<std::size_t>(n_cand), s),
                    Scratch<uint64_t>(static_cast<std::size_t>(n_cand), s), 0};
  Scratch<int64_t> num(1, s);
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
  const int64_t n = g.num_nodes;
  const int64_t drawn = size < 0 || size >= n ? n : size;
  Scratch<int64_t> keys(static_cast<std::size_t>(drawn + n_dst), s);
  if (drawn == n) {
    iota_kernel<<<blocks_for(n), kThreads, 0, s>>>(keys.get(), n);
    check_launch("iota_kernel");
  } else if (drawn > 0) {
    // The draws remove weight from the tree: a private copy per layer (8 bytes per node, cheap
    // next to the kernels) keeps the uploaded one intact for the other layers and streams.
    Scratch<uint64_t> tree(static_cast<std::size_t>(n), s);
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(tree.get(), g.fastgcn_tree.data(), static_cast<std::size_t>(n) * sizeof(uint64_t),
                                         cudaMemcpyDeviceToDevice, s));
    successive_draws_kernel<<<1, 1, 0, s>>>(tree.get(), static_cast<const uint64_t*>(g.fastgcn_weights.data()), n,
                                            drawn, seed, ls, keys.get());
    check_launch("successive_draws_kernel");
  }
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(keys.get() + drawn, dst, static_cast<std::size_t>(n_dst) * sizeof(int64_t),
                                       cudaMemcpyDeviceToDevice, s));
  DeviceColumns out;
  out.ids = sorted_unique(keys.get(), drawn + n_dst, n, out.size, s);
  out.weights = Scratch<uint64_t>(static_cast<std::size_t>(out.size), s);
  gather_weights_kernel<<<blocks_for(out.size), kThreads, 0, s>>>(
      out.ids.get(), out.size, static_cast<const uint64_t*>(g.fastgcn_weights.data()), out.weights.get());
  check_launch("gather_weights_kernel");
  return out;
}

/// Block l from its dst nodes (device) and src set; `next_dst` receives the src nodes on the device.
template <typename Index>
Block build_block(const LayerDeviceGraph& g, const Index* indices, const int64_t* dst, int64_t n_dst,
                  const DeviceColumns& cols, Scratch<int64_t>& next_dst, int64_t& next_size, cudaStream_t s) {
  const auto* indptr = static_cast<const int64_t*>(g.indptr.data());
  Block block;
  block.num_dst = n_dst;
  Scratch<int64_t> block_indptr(static_cast<std::size_t>(n_dst + 1), s);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(block_indptr.get(), 0, static_cast<std::size_t>(n_dst + 1) * sizeof(int64_t), s));
  count_edges_kernel<Index><<<blocks_for(n_dst), kThreads, 0, s>>>(indptr, indices, dst, n_dst, cols.ids.get(),
                                                                   cols.size, block_indptr.get());
  check_launch("count_edges_kernel");
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceScan::ExclusiveSum(t, b, block_indptr.get(), block_indptr.get(), n_dst + 1, s);
  });
  block.indptr.resize(static_cast<std::size_t>(n_dst + 1));
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(block.indptr.data(), block_indptr.get(), block.indptr.size() * sizeof(int64_t),
                                       cudaMemcpyDeviceToHost, s));
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(s));
  const int64_t num_edges = block.indptr.back();

  Scratch<int64_t> edge_slots(static_cast<std::size_t>(num_edges), s);
  Scratch<double> inverse(static_cast<std::size_t>(num_edges), s);
  Scratch<float> weights(static_cast<std::size_t>(num_edges), s);
  fill_edges_kernel<Index><<<blocks_for(n_dst), kThreads, 0, s>>>(indptr, indices, dst, n_dst, cols.ids.get(),
                                                                  cols.weights.get(), cols.size, block_indptr.get(),
                                                                  edge_slots.get(), inverse.get(), weights.get());
  check_launch("fill_edges_kernel");

  Scratch<int64_t> local(static_cast<std::size_t>(cols.size), s);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(local.get(), 0xFF, static_cast<std::size_t>(cols.size) * sizeof(int64_t), s));
  dst_locals_kernel<<<blocks_for(n_dst), kThreads, 0, s>>>(dst, n_dst, cols.ids.get(), cols.size, local.get());
  check_launch("dst_locals_kernel");
  Scratch<unsigned long long> first(static_cast<std::size_t>(cols.size), s);
  GRAPHTIER_CUDA_CHECK(
      cudaMemsetAsync(first.get(), 0xFF, static_cast<std::size_t>(cols.size) * sizeof(unsigned long long), s));
  first_appearance_kernel<<<blocks_for(num_edges), kThreads, 0, s>>>(edge_slots.get(), num_edges, local.get(),
                                                                     first.get());
  check_launch("first_appearance_kernel");
  Scratch<unsigned char> is_new(static_cast<std::size_t>(cols.size), s);
  new_node_flags_kernel<<<blocks_for(cols.size), kThreads, 0, s>>>(local.get(), first.get(), cols.size, is_new.get());
  check_launch("new_node_flags_kernel");
  Scratch<int64_t> slots(static_cast<std::size_t>(cols.size), s);
  iota_kernel<<<blocks_for(cols.size), kThreads, 0, s>>>(slots.get(), cols.size);
  check_launch("iota_kernel");
  Scratch<unsigned long long> new_first(static_cast<std::size_t>(cols.size), s);
  Scratch<int64_t> new_slots(static_cast<std::size_t>(cols.size), s);
  Scratch<int64_t> num(1, s);
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceSelect::Flagged(t, b, first.get(), is_new.get(), new_first.get(), num.get(), cols.size, s);
  });
  run_cub(s, [&](void* t, std::size_t& b) {
    return cub::DeviceSelect::Flagged(t, b, slots.get(), is_new.get(), new_slots.get(), num.get(), cols.size, s);
  });
  const int64_t num_new = read_one(num.get(), s);
  next_size = n_dst + num_new;
  Scratch<int64_t> src_nodes(static_cast<std::size_t>(next_size), s);
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(src_nodes.get(), dst, static_cast<std::size_t>(n_dst) * sizeof(int64_t),
                                       cudaMemcpyDeviceToDevice, s));
  if (num_new > 0) {
    // First positions are distinct edge ids, so the order is total and the sort's stability moot.
    Scratch<unsigned long long> sorted_first(static_cast<std::size_t>(num_new), s);
    Scratch<int64_t> sorted_slots(static_cast<std::size_t>(num_new), s);
    const int end_bit = bits_for(num_edges);
    run_cub(s, [&](void* t, std::size_t& b) {
      return cub::DeviceRadixSort::SortPairs(t, b, new_first.get(), sorted_first.get(), new_slots.get(),
                                             sorted_slots.get(), num_new, 0, end_bit, s);
    });
    number_new_nodes_kernel<<<blocks_for(num_new), kThreads, 0, s>>>(sorted_slots.get(), num_new, n_dst,
                                                                     cols.ids.get(), local.get(), src_nodes.get());
    check_launch("number_new_nodes_kernel");
  }
  Scratch<int64_t> local_indices(static_cast<std::size_t>(num_edges), s);
  local_indices_kernel<<<blocks_for(num_edges), kThreads, 0, s>>>(edge_slots.get(), num_edges, local.get(),
                                                                  local_indices.get());
  check_launch("local_indices_kernel");

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

template <typename Index>
MiniBatch sample_with(const LayerDeviceGraph& g, const Index* indices, const LayerSamplerOptions& options,
                      std::span<const int64_t> seeds, uint64_t stream, cudaStream_t s) {
  MiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  int64_t n_dst = static_cast<int64_t>(seeds.size());
  Scratch<int64_t> dst(static_cast<std::size_t>(n_dst), s);
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
    const DeviceColumns cols = options.method == LayerMethod::kLadies
                                   ? ladies_columns(g, indices, dst.get(), n_dst, size, options.seed, ls, s)
                                   : fastgcn_columns(g, dst.get(), n_dst, size, options.seed, ls, s);
    Scratch<int64_t> next;
    int64_t next_size = 0;
    batch.blocks.push_back(build_block(g, indices, dst.get(), n_dst, cols, next, next_size, s));
    dst = std::move(next);
    n_dst = next_size;
  }
  // The scratch frees are stream-ordered; the host data is complete after the last synchronise.
  return batch;
}

}  // namespace

LayerDeviceGraph* upload_layer_graph(const SampleGraph& graph, std::span<const uint64_t> fastgcn_weights,
                                     std::span<const uint64_t> fastgcn_tree, int device) {
  auto g = std::make_unique<LayerDeviceGraph>();
  g->device = device;
  g->num_nodes = graph.csc.num_nodes();
  g->indptr = Buffer(MemoryKind::kDevice, graph.csc.indptr.size_bytes(), device);
  copy_bytes(g->indptr.data(), MemoryKind::kDevice, graph.csc.indptr.data(), MemoryKind::kHost,
             graph.csc.indptr.size_bytes());
  std::visit(
      [&](auto indices) {
        g->wide_indices = sizeof(indices[0]) == sizeof(int64_t);
        g->indices = Buffer(MemoryKind::kDevice, indices.size_bytes(), device);
        copy_bytes(g->indices.data(), MemoryKind::kDevice, indices.data(), MemoryKind::kHost, indices.size_bytes());
      },
      graph.csc.indices);
  g->fastgcn_weights = Buffer(MemoryKind::kDevice, fastgcn_weights.size_bytes(), device);
  copy_bytes(g->fastgcn_weights.data(), MemoryKind::kDevice, fastgcn_weights.data(), MemoryKind::kHost,
             fastgcn_weights.size_bytes());
  g->fastgcn_tree = Buffer(MemoryKind::kDevice, fastgcn_tree.size_bytes(), device);
  copy_bytes(g->fastgcn_tree.data(), MemoryKind::kDevice, fastgcn_tree.data(), MemoryKind::kHost,
             fastgcn_tree.size_bytes());
  return g.release();
}

void free_layer_graph(LayerDeviceGraph* graph) noexcept { delete graph; }

MiniBatch sample_layers(const LayerDeviceGraph& graph, const LayerSamplerOptions& options,
                        std::span<const int64_t> seeds, uint64_t stream, void* cuda_stream) {
  GRAPHTIER_CUDA_CHECK(cudaSetDevice(graph.device));
  const auto s = static_cast<cudaStream_t>(cuda_stream);
  if (graph.wide_indices) {
    return sample_with(graph, static_cast<const int64_t*>(graph.indices.data()), options, seeds, stream, s);
  }
  return sample_with(graph, static_cast<const int32_t*>(graph.indices.data()), options, seeds, stream, s);
}

}  // namespace graphtier::sample::cuda
