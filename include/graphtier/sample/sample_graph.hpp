// The graph every sampler reads (host memory), and the checks every sampler makes of it and of the
// seeds it is given.
#pragma once

#include <cstdint>
#include <span>

#include "graphtier/graph/csc_view.hpp"
#include "graphtier/graph/hetero_view.hpp"

namespace graphtier::sample {

struct TemporalIndex;

/// CSC topology, optional per-edge weights (float32 [num_edges], finite, >= 0; empty = uniform) and
/// optional node and edge types (empty = homogeneous; the neighbour sampler then samples each
/// relation with its own fanout, neighbor_sampler.hpp), and optionally the time order of its
/// columns (temporal.hpp: the neighbour sampler then samples temporally, from seed times). Borrowed:
/// the memory must outlive the sampler that reads it.
struct SampleGraph {
  graph::CscView csc;
  std::span<const float> edge_weights;
  graph::HeteroView hetero{};
  const TemporalIndex* temporal = nullptr;
};

/// Checks what every sampler needs of a graph: a well-formed CSC (check_shape, naming `what`) with
/// fewer than 2^40 nodes, the most the draws can address, and a well-formed HeteroView when one is
/// given (check_hetero_view). Throws InvalidArgument.
void check_sample_graph(const SampleGraph& graph, const char* what);

/// Checks a HeteroView against its CSC (graph::hetero_problem: offsets, relations, every edge's
/// relation, order within its column and both ends' types). O(num_nodes + num_edges). Throws
/// InvalidArgument naming `what` and the first fault.
void check_hetero_view(const graph::HeteroView& hetero, const graph::CscView& csc, const char* what);

/// Throws OutOfRange for a seed outside [0, num_nodes), InvalidArgument for a repeated seed.
void check_seeds(std::span<const int64_t> seeds, int64_t num_nodes);

}  // namespace graphtier::sample
