// Unique-and-compact of one layer on the GPU (the twin of cpu/compact_cpu.cpp): global neighbour
// ids -> local positions in the layer's src nodes, new nodes numbered in first-appearance order.
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

/// Clears the part of the table the real sizes use, fills it and slot_of, and marks new nodes
/// (1/0) in new_rank[0, ne_bound): to be scanned in place over ne_bound.
void compact_mark(const int64_t* dst, const int64_t* neighbours, const CompactBuffers& b, cudaStream_t stream);

/// After the scan: src_nodes[0, nd) = dst, src_nodes[nd + rank] = each new node, local[e] = its
/// neighbour's local id; writes counts->num_src and next->nd.
void compact_write(const int64_t* dst, const int64_t* neighbours, const CompactBuffers& b, int64_t* src_nodes,
                   int64_t* local, cudaStream_t stream);

}  // namespace graphtier::sample::cuda
