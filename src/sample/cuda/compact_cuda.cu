#include "graphtier/core/rng.hpp"
#include "cuda/compact_cuda.cuh"
#include "cuda/cuda_util.cuh"

namespace graphtier::sample::cuda {
namespace {

constexpr unsigned long long kEmpty = ~0ull;

__global__ void insert_kernel(const int64_t* dst, int64_t nd, const int64_t* neighbours, int64_t ne,
                              CompactBuffers b) {
  const uint64_t mask = b.capacity - 1;
  for (int64_t q = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; q < nd + ne;
       q += static_cast<int64_t>(gridDim.x) * blockDim.x) {
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

__global__ void mark_kernel(int64_t nd, int64_t ne, CompactBuffers b) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < ne;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    b.new_rank[e] = b.firsts[b.slot_of[nd + e]] == static_cast<unsigned long long>(nd + e) ? 1 : 0;
  }
}

__global__ void write_kernel(int64_t nd, const int64_t* neighbours, int64_t ne, CompactBuffers b, int64_t* src_nodes,
                             int64_t* local) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < ne;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const auto first = static_cast<int64_t>(b.firsts[b.slot_of[nd + e]]);
    // new_rank is inclusive: the new node first seen at edge k has local id nd + new_rank[k] - 1.
    const int64_t id = first < nd ? first : nd + b.new_rank[first - nd] - 1;
    local[e] = id;
    if (first == nd + e) src_nodes[id] = neighbours[e];
  }
}

}  // namespace

void compact_mark(const int64_t* dst, int64_t nd, const int64_t* neighbours, int64_t ne, const CompactBuffers& b,
                  cudaStream_t stream) {
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(b.keys, 0xFF, b.capacity * sizeof(unsigned long long), stream));
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(b.firsts, 0xFF, b.capacity * sizeof(unsigned long long), stream));
  if (nd + ne > 0) {
    insert_kernel<<<grid_for(nd + ne, kThreads), kThreads, 0, stream>>>(dst, nd, neighbours, ne, b);
    GRAPHTIER_CUDA_CHECK_LAUNCH("insert_kernel");
  }
  if (ne > 0) {
    mark_kernel<<<grid_for(ne, kThreads), kThreads, 0, stream>>>(nd, ne, b);
    GRAPHTIER_CUDA_CHECK_LAUNCH("mark_kernel");
  }
}

void compact_write(int64_t nd, const int64_t* neighbours, int64_t ne, const CompactBuffers& b, int64_t* src_nodes,
                   int64_t* local, cudaStream_t stream) {
  if (ne == 0) return;
  write_kernel<<<grid_for(ne, kThreads), kThreads, 0, stream>>>(nd, neighbours, ne, b, src_nodes, local);
  GRAPHTIER_CUDA_CHECK_LAUNCH("write_kernel");
}

}  // namespace graphtier::sample::cuda
