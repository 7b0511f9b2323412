#include "graphtier/sample/sample_graph.hpp"

#include "graphtier/core/error.hpp"
#include "graphtier/sample/random.hpp"
#include "cpu/compact_cpu.hpp"

namespace graphtier::sample {

void check_sample_graph(const SampleGraph& graph, const char* what) {
  graph.csc.check_shape(what);
  GRAPHTIER_EXPECTS(graph.csc.num_nodes() < kMaxSampleNodes, InvalidArgument, what,
                    ": the samplers address fewer than 2^40 nodes, the graph has ", graph.csc.num_nodes());
  if (!graph.hetero.empty()) check_hetero_view(graph.hetero, graph.csc, what);
}

void check_hetero_view(const graph::HeteroView& hetero, const graph::CscView& csc, const char* what) {
  const std::string problem = graph::hetero_problem(hetero, csc);
  GRAPHTIER_EXPECTS(problem.empty(), InvalidArgument, what, ": ", problem);
}

void check_seeds(std::span<const int64_t> seeds, int64_t num_nodes) {
  cpu::IdMap seen(static_cast<int64_t>(seeds.size()));
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    GRAPHTIER_EXPECTS(seeds[i] >= 0 && seeds[i] < num_nodes, OutOfRange, "seed ", seeds[i], " (position ", i,
                      ") is outside [0, ", num_nodes, ")");
    GRAPHTIER_EXPECTS(seen.find_or_insert(seeds[i], static_cast<int64_t>(i)) == static_cast<int64_t>(i), InvalidArgument, "seed ", seeds[i], " appears more than once");
  }
}

}  // namespace graphtier::sample
