#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cub/device/device_scan.cuh>

#include "graphtier/core/rng.hpp"
#include "cuda/compact_cuda.cuh"
#include "cuda/cuda_util.cuh"
#include "neighbor_steps.hpp"

namespace graphtier::sample::cuda {
namespace {

constexpr unsigned long long kEmpty = kEmptySlot;

/// The slots the real sizes use (a power of two no larger than b.capacity).
__device__ __forceinline__ uint64_t used_capacity(const CompactBuffers& b) {
  return used_table_slots(b.counts->nd, b.counts->ne, b.num_nodes);
}

__global__ void insert_kernel(const int64_t* dst, const int64_t* neighbours, CompactBuffers b) {
  const int64_t nd = b.counts->nd, ne = b.counts->ne;
  const uint64_t mask = used_capacity(b) - 1;
  GRAPHTIER_GRID_STRIDE(q, nd + ne) {
    const auto id = static_cast<unsigned long long>(q < nd ? dst[q] : neighbours[q - nd]);
    uint64_t slot = mix64(id) & mask;
    for (;;) {
      const unsigned long long seen = b.keys[slot];
      if (seen == id) break;
      if (seen == kEmpty) {
        const unsigned long long prev = atomicCAS(&b.keys[slot], kEmpty, id);
        if (prev == kEmpty || prev == id) break;
      }
      slot = (slot + 1) & mask;  // the table is at most half full: probing ends
    }
    atomicMin(&b.firsts[slot], static_cast<unsigned long long>(q));
    b.slot_of[q] = static_cast<uint32_t>(slot);
  }
}

/// The scan's input: 1 where neighbour e is its id's first occurrence (a new node), 0 past ne.
struct NewNodeMark {
  CompactBuffers b;
  __device__ int64_t operator()(int64_t e) const {
    const int64_t nd = b.counts->nd, ne = b.counts->ne;
    return e < ne && nbr::first_occurrence(b.firsts[b.slot_of[nd + e]], nd + e) ? 1 : 0;
  }
};

__global__ void write_kernel(const int64_t* dst, const int64_t* neighbours, CompactBuffers b, int64_t* src_nodes,
                             int64_t* local) {
  const int64_t nd = b.counts->nd, ne = b.counts->ne;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const int64_t num_src = nd + (ne > 0 ? b.new_rank[ne - 1] : 0);
    b.counts->num_src = num_src;
    b.next->nd = num_src;
  }
  GRAPHTIER_GRID_STRIDE(i, nd) { src_nodes[i] = dst[i]; }
  GRAPHTIER_GRID_STRIDE(e, ne) {
    const auto first = static_cast<int64_t>(b.firsts[b.slot_of[nd + e]]);
    const int64_t id = nbr::compact_local_id(first, nd, b.new_rank);
    local[e] = id;
    if (nbr::first_occurrence(static_cast<uint64_t>(first), nd + e)) src_nodes[id] = neighbours[e];
  }
}

}  // namespace

void compact_insert(const int64_t* dst, const int64_t* neighbours, const CompactBuffers& b, cudaStream_t stream) {
  if (b.nd_bound + b.ne_bound == 0) return;
  insert_kernel<<<blocks_for(b.nd_bound + b.ne_bound), kThreads, 0, stream>>>(dst, neighbours, b);
  GRAPHTIER_CUDA_CHECK_LAUNCH("insert_kernel");
}

void compact_rank(const CompactBuffers& b, DeviceScratch<unsigned char>& temp, cudaStream_t stream) {
  if (b.ne_bound == 0) return;
  const auto marks = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), NewNodeMark{b});
  std::size_t bytes = 0;
  GRAPHTIER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, marks, b.new_rank, b.ne_bound, stream));
  void* storage = temp.grow(static_cast<int64_t>(bytes));
  GRAPHTIER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(storage, bytes, marks, b.new_rank, b.ne_bound, stream));
}

void compact_write(const int64_t* dst, const int64_t* neighbours, const CompactBuffers& b, int64_t* src_nodes,
                   int64_t* local, cudaStream_t stream) {
  // Always launched: it writes the layer's num_src and the next layer's nd.
  write_kernel<<<blocks_for(b.nd_bound > b.ne_bound ? b.nd_bound : b.ne_bound), kThreads, 0, stream>>>(
      dst, neighbours, b, src_nodes, local);
  GRAPHTIER_CUDA_CHECK_LAUNCH("write_kernel");
}

}  // namespace graphtier::sample::cuda
