// Unique-and-compact of one layer on the GPU (the twin of cpu/compact_cpu.cpp): global neighbour
// ids -> local positions in the layer's src nodes, new nodes numbered in first-appearance order.
//
// Per layer: compact_clear (inside the fill kernel), compact_insert, compact_rank (the scan of the
// new-node marks, computed as the scan reads them), compact_write.
//
// Hash-based, not sort-based: the dst nodes (positions 0 .. nd-1) and then the neighbours
// (positions nd + e) are inserted into an open-addressing table keyed by global id (atomicCAS),
// each slot keeping the smallest position that holds its id (atomicMin). A neighbour whose
// position is its id's first one is a new node (nbr::first_occurrence); an inclusive scan of
// those marks in position order numbers the new nodes exactly as the host's sequential pass does,
// whatever order the threads ran in (nbr::compact_local_id).
//
// The host sizes every array by upper bounds (nbr::layer_bound) and never reads the real sizes:
// the kernels read nd and ne from the layer's LayerCounts in device memory, exit early past them,
// and use the part of the table that the real sizes ask for (nbr::compact_capacity), so that the
// table's clearing and probing cost follows the real sizes, not the bounds.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "device_scratch.cuh"
#include "neighbor_steps.hpp"

namespace graphtier::sample::cuda {

/// The real sizes of one layer, in device memory: written by the kernels, read by the host once
/// per minibatch (all layers in one copy).
struct LayerCounts {
  int64_t nd;       // dst nodes
  int64_t ne;       // edges
  int64_t num_src;  // src nodes: nd + new nodes
  int64_t hubs;     // entries of the layer's hub list
};

/// Device buffers for one layer's compaction, owned by the caller and reused across layers.
struct CompactBuffers {
  unsigned long long* keys;    // [capacity], all ones = empty
  unsigned long long* firsts;  // [capacity], all ones before insertion
  uint32_t* slot_of;           // [nd_bound + ne_bound]
  int64_t* new_rank;           // [ne_bound] inclusive count of new nodes up to each edge, zero past ne
  uint64_t capacity;           // slots allocated: nbr::compact_capacity of the bound
  int64_t num_nodes;           // of the graph: distinct ids are at most this many
  int64_t nd_bound, ne_bound;  // the host's bounds (grid sizes)
  LayerCounts* counts;         // this layer's: nd and ne are read, num_src written
  LayerCounts* next;           // the next layer's: nd written (= num_src)
};

inline constexpr unsigned long long kEmptySlot = ~0ull;

/// The table slots the real sizes use: a power of two no larger than CompactBuffers::capacity.
__host__ __device__ inline uint64_t used_table_slots(int64_t nd, int64_t ne, int64_t num_nodes) {
  const int64_t ids = nd + ne;
  return nbr::compact_capacity(ids < num_nodes ? ids : num_nodes);
}

/// Empties the slots the real sizes (nd, ne) use, grid-stride over the calling kernel's threads:
/// run by the layer's fill kernel, which learns ne from the scanned indptr (one launch fewer than
/// a clearing kernel of its own). Must complete before compact_insert, and after the previous
/// layer's compact_write (stream order gives both).
__device__ inline void compact_clear(const CompactBuffers& b, int64_t nd, int64_t ne) {
  const auto used = static_cast<int64_t>(used_table_slots(nd, ne, b.num_nodes));
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < used; i += stride) {
    b.keys[i] = kEmptySlot;
    b.firsts[i] = kEmptySlot;
  }
}

/// Fills the table (cleared by compact_clear) and slot_of with the dst nodes and the neighbours.
void compact_insert(const int64_t* dst, const int64_t* neighbours, const CompactBuffers& b, cudaStream_t stream);

/// new_rank[e] = how many new nodes the neighbours 0 .. e hold (zero past ne): an inclusive scan
/// over ne_bound whose input marks each new node as it is read (nbr::first_occurrence), so that no
/// kernel writes the marks first. `temp` holds CUB's temporary storage (grown when needed).
void compact_rank(const CompactBuffers& b, ::graphtier::cuda::DeviceScratch<unsigned char>& temp,
                  cudaStream_t stream);

/// After the scan: src_nodes[0, nd) = dst, src_nodes[nd + rank] = each new node, local[e] = its
/// neighbour's local id; writes counts->num_src and next->nd.
void compact_write(const int64_t* dst, const int64_t* neighbours, const CompactBuffers& b, int64_t* src_nodes,
                   int64_t* local, cudaStream_t stream);

}  // namespace graphtier::sample::cuda
