// Node-wise neighbour sampling (GraphSAGE): every dst node of every layer draws up to `fanout`
// of its in-neighbours.
//
// The draws (random.hpp streams; CPU and CUDA backends follow this exactly):
//   Let v have degree d (CSC positions p0 .. p0 + d - 1) and the layer's fanout be f (-1 = all).
//   - f == -1, or f >= d without replacement (unweighted): all d neighbours, in position order.
//   - uniform, without replacement: Floyd's algorithm: for i in 0 .. f-1, j = d - f + i,
//     t = bounded_u64(node_bits(seed, ls, v, i), j + 1); keep t unless already kept, else keep j.
//     The kept offsets are emitted in ascending order. Reads only the f sampled entries.
//   - uniform, with replacement: for i in 0 .. f-1 the offset bounded_u64(node_bits(.., v, i), d),
//     emitted in draw order (repeats allowed); nothing when d == 0.
//   - weighted, without replacement (Efraimidis-Spirakis): each position p with weight w > 0 gets
//     the key -portable_log(u) / w (core/portable_math.hpp), u = u64_to_unit_double(edge_bits(seed,
//     ls, p)) clamped to at least 2^-60;
//     the min(f, #positive) smallest keys (ties: lower position) are emitted in ascending order.
//     Zero-weight edges are never sampled.
//   - weighted, with replacement: inclusive prefix sums s_k of the weights in position order (in
//     double, left to right); draw i picks the first k with s_k > u * s_last, u =
//     u64_to_unit_double(node_bits(.., v, i)) (the last positive-weight position if none);
//     nothing when all weights are zero.
// The dst nodes of block l are the src nodes of block l - 1; fanouts[l] applies to block l
// (fanouts[0] is the seeds' hop, as PyG's num_neighbors).
//
// Typed graphs (SampleGraph::hetero not empty): each column is sampled relation by relation, in one
// pass over its relation segments (hetero_steps.hpp): relation r's segment of v, positions
// [p0, p0 + d), is drawn by the rules above with fanout relation_fanout_table(..)[l][r] and
// relation_stream(layer stream, r) in place of the layer stream (random.hpp), and the segments'
// picks follow one another in relation order. Block::edge_types holds each edge's relation. A graph
// of one relation samples what the homogeneous graph does.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/sample/minibatch.hpp"
#include "graphtier/sample/sample_graph.hpp"
#include "graphtier/sample/temporal.hpp"

namespace graphtier::sample {

struct NeighborSamplerOptions {
  /// Per block, blocks[0] first; -1 = all neighbours, 0 = none. On a typed graph: every relation's
  /// fanout, unless relation_fanouts gives the relation its own.
  std::vector<int64_t> fanouts;
  /// Typed graphs only: relation r's own fanouts per block (relation_fanouts[r][l]), or an empty
  /// list for `fanouts`. Empty, or one list per relation of the graph; with no `fanouts`, every list
  /// is given and all have the same length (the number of blocks).
  std::vector<std::vector<int64_t>> relation_fanouts{};
  bool replace = false;
  bool edge_ids = true;  // fill Block::edge_ids
  uint64_t seed = 0;
  /// Temporal sampling (SampleGraph::temporal given): which eligible neighbours are taken.
  TemporalStrategy temporal_strategy = TemporalStrategy::kUniform;
};

/// Throws InvalidArgument for bad options (no fanouts, fanout < -1 or >= 2^24) or a graph the
/// draws cannot address (2^40 nodes or more, weights of the wrong length or negative/non-finite,
/// a malformed HeteroView, a temporal index of another edge count); Unsupported for temporal
/// sampling with weights or types, or kLast with replacement (InvalidArgument).
void check_sampler_inputs(const SampleGraph& graph, const NeighborSamplerOptions& options);

/// Temporal sampling's option rule: kLast takes the most recent neighbours, so not with
/// replacement (InvalidArgument).
void check_temporal_strategy(const NeighborSamplerOptions& options);

/// Temporal sampling's seed rules: one time per seed (InvalidArgument), each seed in [0, num_nodes)
/// (OutOfRange), at most 2^23 seeds (trees) per minibatch (InvalidArgument). Seeds may repeat.
void check_temporal_seeds(std::span<const int64_t> seeds, std::span<const int64_t> seed_times, int64_t num_nodes);

/// The fanout of every block and relation of a graph of `num_relations` relations (0 for a
/// homogeneous graph, which samples as one relation): table[l * max(1, R) + r], blocks[0] first.
/// Throws InvalidArgument for no blocks, a fanout < -1 or >= 2^24, relation_fanouts on a graph
/// without relations, more or fewer lists than relations, or a list of the wrong number of blocks.
std::vector<int64_t> relation_fanout_table(const NeighborSamplerOptions& options, int32_t num_relations);

/// CPU backend. Thread-safe: one sampler may serve several threads at once.
class NeighborSampler {
 public:
  NeighborSampler(SampleGraph graph, NeighborSamplerOptions options);

  /// Samples the MiniBatch of `seeds` for minibatch `stream`. With a pool, the dst nodes of each
  /// layer are sampled in parallel; the result does not depend on the pool. A temporal graph
  /// needs seed times: InvalidArgument.
  MiniBatch sample(std::span<const int64_t> seeds, uint64_t stream, ThreadPool* pool = nullptr) const;
  /// Temporal sampling (temporal.hpp; SampleGraph::temporal required, else InvalidArgument): seed
  /// i roots tree i of time seed_times[i] ([seeds], InvalidArgument otherwise); every block has
  /// src_trees. Seeds may repeat (a node at two times is two trees); at most 2^23 of them.
  MiniBatch sample_temporal(std::span<const int64_t> seeds, std::span<const int64_t> seed_times, uint64_t stream,
                            ThreadPool* pool = nullptr) const;

  const NeighborSamplerOptions& options() const noexcept { return options_; }
  const SampleGraph& graph() const noexcept { return graph_; }

 private:
  SampleGraph graph_;
  NeighborSamplerOptions options_;
  std::vector<int64_t> fanout_table_;  // relation_fanout_table(options_, R)
  int64_t num_layers_ = 0;
};

}  // namespace graphtier::sample
