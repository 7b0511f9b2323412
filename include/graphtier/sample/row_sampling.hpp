// Sampling one layer on fetched neighbour rows (docs/architecture.md, Scale-out): a rank whose
// topology holds only a block row of the graph fetches the in-neighbour lists of a layer's dst
// nodes from their owners and samples the layer from them. The result is bit-identical to the
// single-process samplers' block of that layer (NeighborSampler, LayerSampler with LADIES, and
// the bulk matrix samplers, BulkSampler): the
// draws depend only on the node, its degree and the global CSC position of its first edge, which
// the rows carry. Unweighted graphs only (the dataset format has no edge weights).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/csc_view.hpp"
#include "graphtier/sample/bulk_sampler.hpp"
#include "graphtier/sample/minibatch.hpp"

namespace graphtier::sample {

/// The in-neighbour lists of some nodes, in any order. Host memory, owned.
struct NeighborRows {
  std::vector<int64_t> nodes;       // [n] global ids, distinct
  std::vector<int64_t> indptr;      // [n + 1], 0 .. num_edges
  std::vector<int64_t> indices;     // [indptr[n]] global neighbour ids, in CSC position order
  std::vector<int64_t> first_edge;  // [n] global CSC position of each node's first in-edge
};

/// The rows of `nodes` (distinct, in [0, csc.num_nodes())) in that order. `csc` may be a block
/// row of the graph (only some nodes keep their in-edges) whose position p is the global position
/// p + edge_offset. Throws OutOfRange for a node outside the graph, InvalidArgument for a repeat.
NeighborRows extract_rows(const graph::CscView& csc, std::span<const int64_t> nodes, int64_t edge_offset);

/// Block l of NeighborSampler::sample for the dst nodes `dst` (the seeds, or the previous block's
/// src nodes): `fanout` (-1 = all, 0 = none, < 2^24), `replace`, `edge_ids` and `seed` as in
/// NeighborSamplerOptions, `layer_stream` = layer_stream(minibatch_stream(epoch, b), l) as the
/// samplers derive it. The dst nodes are distinct and each needs its row in `rows` (InvalidArgument
/// naming the first one missing or repeated); rows may hold other nodes too. With a pool, dst nodes
/// are sampled in parallel; the result does not depend on the pool.
Block sample_neighbor_layer(const NeighborRows& rows, std::span<const int64_t> dst, int64_t fanout, bool replace,
                            bool edge_ids, uint64_t seed, uint64_t layer_stream, ThreadPool* pool = nullptr);

/// GraphSAGE's layer drawn where the rows are (the owner of a block row), for requests from
/// other ranks: only the picks travel back, not the rows. Host memory, owned.
struct RowDraws {
  std::vector<int64_t> counts;     // [n] picks of request i
  std::vector<int64_t> neighbors;  // [sum counts] the picks' neighbour ids, request by request, in draw order
  std::vector<int64_t> edge_ids;   // [sum counts] their global CSC positions
};

/// The owner's side: request i is node nodes[i] of a minibatch's frontier; the requests come in
/// segments, segment s being the next segment_sizes[s] requests, drawn from layer_streams[s]
/// (layer_stream(minibatch_stream(epoch, b), l) of that segment's minibatch). `csc` and
/// `edge_offset` as extract_rows'; `fanout`, `replace` and `seed` as sample_neighbor_layer's. The
/// picks are those sample_neighbor_layer draws for the node from its extracted row (the same
/// draw code), so neighbor_blocks_of_draws assembles its block. Throws OutOfRange for a node
/// outside the graph, InvalidArgument for sizes that do not add up to the requests or a segment
/// count other than the streams'.
RowDraws draw_rows(const graph::CscView& csc, int64_t edge_offset, std::span<const int64_t> nodes,
                   std::span<const int64_t> segment_sizes, std::span<const uint64_t> layer_streams, int64_t fanout,
                   bool replace, uint64_t seed, ThreadPool* pool = nullptr);

/// draw_rows for the bulk matrix GraphSAGE sampler (BulkSampler, bulk_sampler.hpp): the picks of
/// row (b, v) of Q * A, v's distinct in-neighbours weighted by multiplicity, drawn from the
/// segment's layer stream with key v, each with the global first CSC position of its edges, in the
/// order BulkSampler emits them; requests of one node in several segments share its extracted row.
/// neighbor_blocks_of_draws assembles them into the blocks of sample_bulk_layer (the bulk
/// compaction is the same). Throws as draw_rows.
RowDraws draw_bulk_rows(const graph::CscView& csc, int64_t edge_offset, std::span<const int64_t> nodes,
                        std::span<const int64_t> segment_sizes, std::span<const uint64_t> layer_streams,
                        int64_t fanout, bool replace, uint64_t seed, ThreadPool* pool = nullptr);

/// The requester's side: the GraphSAGE blocks of k batches (batch b's dst nodes dsts_per_batch[b],
/// distinct) from the owners' draws, request i being node request_nodes[i] of batch
/// request_batches[i], its picks draws.counts[i] entries of draws (the requests in any order).
/// Bit-identical to sample_neighbor_layer on the batch's rows (the same compaction), or, from
/// draw_bulk_rows' picks, to sample_bulk_layer's blocks. Throws
/// InvalidArgument for a dst node without a request or a request made twice, or shapes that
/// disagree.
std::vector<Block> neighbor_blocks_of_draws(std::span<const std::span<const int64_t>> dsts_per_batch,
                                            std::span<const int64_t> request_nodes,
                                            std::span<const int64_t> request_batches, const RowDraws& draws,
                                            bool edge_ids);

/// Block l of LayerSampler::sample with LayerMethod::kLadies: `layer_size` nodes drawn
/// (-1 = every candidate, 0 = none, < 2^24); the other arguments as sample_neighbor_layer's.
Block sample_ladies_layer(const NeighborRows& rows, std::span<const int64_t> dst, int64_t layer_size, uint64_t seed,
                          uint64_t layer_stream, ThreadPool* pool = nullptr);

/// Layer `layer` of BulkSampler::sample (the bulk matrix samplers, bulk_sampler.hpp) for k
/// batches at once: batch b's dst nodes dsts_per_batch[b] (its seeds, or the src nodes of its
/// block layer - 1), drawn from layer_stream(streams[b], layer) as BulkSampler draws batch b with
/// stream streams[b]. Returns one block per batch, bit-identical to block `layer` of that batch's
/// BulkSampler MiniBatch: the matrices are built from the fetched rows (GraphSAGE's edge ids = the
/// global first CSC position of each merged entry, from rows.first_edge; LADIES has none) and
/// drawn from by the same code.
/// `options` as BulkSampler's (InvalidArgument as check_bulk_options, or for a layer outside the
/// fanouts, or streams and batches of different counts); the rows must hold every dst node of every
/// batch (InvalidArgument naming the first one missing, or repeated within a batch).
std::vector<Block> sample_bulk_layer(const NeighborRows& rows, std::span<const std::span<const int64_t>> dsts_per_batch,
                                     std::span<const uint64_t> streams, const BulkSamplerOptions& options, int layer,
                                     ThreadPool* pool = nullptr);

}  // namespace graphtier::sample
