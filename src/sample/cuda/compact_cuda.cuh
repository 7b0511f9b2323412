// Unique-and-compact of one layer on the GPU (the twin of cpu/compact_cpu.cpp): global neighbour
// ids -> local positions in the layer's src nodes, new nodes numbered in first-appearance order.
//
// Hash-based, not sort-based: the dst nodes (positions 0 .. nd-1) and then the neighbours
// (positions nd + e) are inserted into an open-addressing table keyed by global id (atomicCAS),
// each slot keeping the smallest position that holds its id (atomicMin). A neighbour whose
// position is its id's first one is a new node; an inclusive scan of those marks in position order
// numbers the new nodes exactly as the host's sequential pass does, whatever order the threads
// ran in.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace graphtier::sample::cuda {

/// Device buffers for one layer's compaction, owned by the caller and reused across layers.
struct CompactBuffers {
  unsigned long long* keys;    // [capacity], all ones = empty
  unsigned long long* firsts;  // [capacity], all ones before insertion
  uint32_t* slot_of;           // [nd + ne]
  int64_t* new_rank;           // [ne] inclusive count of new nodes up to each edge
  uint64_t capacity;           // power of two >= 2 (nd + ne)
};

/// Fills the table and slot_of, and marks new nodes (1/0) in new_rank: to be scanned in place.
void compact_mark(const int64_t* dst, int64_t nd, const int64_t* neighbours, int64_t ne, const CompactBuffers& b,
                  cudaStream_t stream);

/// After the scan: src_nodes[nd + rank] = each new node; local[e] = its neighbour's local id.
/// src_nodes[0, nd) is the caller's (the dst nodes).
void compact_write(int64_t nd, const int64_t* neighbours, int64_t ne, const CompactBuffers& b, int64_t* src_nodes,
                   int64_t* local, cudaStream_t stream);

}  // namespace graphtier::sample::cuda
