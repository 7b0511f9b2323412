// What building a dataset's CSC from a stream of edges kept and removed: the part that the
// reports of `convert` (convert.hpp) and `generate` (generate.hpp) share.
#pragma once

#include <cstdint>

namespace graphtier::graph {

struct TopologyReport {
  int64_t num_nodes = 0;
  int64_t num_edges = 0;           // CSC entries stored
  int64_t self_loops_removed = 0;  // convert: input edges; generate: CSC entries
  int64_t duplicates_removed = 0;  // CSC entries (a symmetrized edge can count twice)
  int64_t isolated_nodes = 0;      // nodes without in-neighbours (undirected: without any edge)
  int64_t max_in_degree = 0;
  /// Ranges of destination rows the CSC was built in, each one pass over the edges that placed
  /// entries (1 unless a memory budget split the rows).
  int topology_passes = 0;
  double topology_seconds = 0;  // wall clock
};

}  // namespace graphtier::graph
