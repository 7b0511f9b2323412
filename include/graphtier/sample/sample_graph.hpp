// The graph every sampler reads (host memory), and the checks every sampler makes of it and of the
// seeds it is given.
#pragma once

#include <cstdint>
#include <span>

#include "graphtier/graph/csc_view.hpp"

namespace graphtier::sample {

/// CSC topology and optional per-edge weights (float32 [num_edges], finite, >= 0; empty = uniform).
/// Borrowed: the memory must outlive the sampler that reads it.
struct SampleGraph {
  graph::CscView csc;
  std::span<const float> edge_weights;
};

/// Checks what every sampler needs of a graph: a well-formed CSC (check_shape, naming `what`) with
/// fewer than 2^40 nodes, the most the draws can address. Throws InvalidArgument.
void check_sample_graph(const SampleGraph& graph, const char* what);

/// Throws OutOfRange for a seed outside [0, num_nodes), InvalidArgument for a repeated seed.
void check_seeds(std::span<const int64_t> seeds, int64_t num_nodes);

}  // namespace graphtier::sample
