// Compaction of k stacked batches in one pass, as the CUDA bulk sampler's device form runs it
// (bulk_sampler_cuda.cu): the rules each thread applies are __host__ __device__ so that the CPU
// tests (bulk_sampler_test.cpp) run the same steps sequentially and compare them with
// cpu::compact_layer batch by batch.
//
// The sequence. Batch b of a layer has nd_b dst rows (stacked rows offsets[b] .. offsets[b + 1])
// and the edges indptr[offsets[b]] .. indptr[offsets[b + 1]] of the stacked draws. Its sequence is
// its dst nodes, then its edges' src nodes, and the k sequences are laid end to end: batch b's
// starts at seq_start[b] = offsets[b] + indptr[offsets[b]] (so seq_start[k] = rows + edges).
// Every position p gets the key (b, node); a stable sort of the keys (the positions, in order,
// as values) puts each key's occurrences together with the first (smallest position) leading.
// A key's first position q0 within its batch decides its local id: q0 < nd_b (a dst node: the
// dst nodes are distinct and come first) keeps q0; otherwise it is a new node, numbered nd_b +
// the count of new nodes whose first position comes earlier in the batch. That is the MiniBatch
// contract (dst nodes first, then new nodes by first appearance), what cpu::compact_layer does.
#pragma once

#include <cstdint>

#include "graphtier/core/rng.hpp"
#include "segments.hpp"

namespace graphtier::sample::bulk {

/// Position of batch b's sequence in the stacked one (row_offset = offsets[b], edge_offset =
/// indptr[offsets[b]]).
GRAPHTIER_HD int64_t sequence_start(int64_t row_offset, int64_t edge_offset) { return row_offset + edge_offset; }

// The batch whose sequence holds a stacked position: segment_of(starts, k, p) (segments.hpp).
using ::graphtier::sample::segment_of;

/// The key of a position: batch in the high bits, node id in the low `node_bits` ones.
GRAPHTIER_HD unsigned long long sequence_key(int64_t batch, int64_t node, int node_bits) {
  return (static_cast<unsigned long long>(batch) << node_bits) | static_cast<unsigned long long>(node);
}

/// Whether sorted entry i starts its key's run (its position is the key's first).
GRAPHTIER_HD bool starts_run(const unsigned long long* sorted_keys, int64_t i) {
  return i == 0 || sorted_keys[i] != sorted_keys[i - 1];
}

/// Whether a key whose first position within its batch is q0 is a new node of the batch.
GRAPHTIER_HD bool is_new_node(int64_t q0, int64_t nd) { return q0 >= nd; }

/// The local id (position in the batch's src nodes) of a key whose first position in the batch is
/// q0, given the count of the batch's new nodes whose first position is before q0.
GRAPHTIER_HD int64_t local_id(int64_t q0, int64_t nd, int64_t new_before) { return q0 < nd ? q0 : nd + new_before; }

}  // namespace graphtier::sample::bulk
