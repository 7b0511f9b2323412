// Small graphs and a naive reference sampler for the sampler tests.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "graphtier/core/memory.hpp"
#include "graphtier/graph/csc_view.hpp"
#include "graphtier/graph/hetero_view.hpp"
#include "graphtier/sample/minibatch.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"

namespace graphtier::sample::test {

/// Expects every field of two minibatches equal, weights bit for bit (gtest failures naming the
/// block). For samplers that must agree exactly: CPU and CUDA, fetched rows and the whole graph.
void expect_same_minibatch(const MiniBatch& got, const MiniBatch& want);

/// An owned CSC graph (int32 indices) built from (src, dst) edges: node dst's in-neighbours are
/// the srcs of its edges, in the order given.
struct OwnedGraph {
  std::vector<int64_t> indptr;
  std::vector<int32_t> indices;
  std::vector<float> weights;  // empty unless set by the test

  static OwnedGraph from_edges(int64_t num_nodes, const std::vector<std::pair<int64_t, int64_t>>& edges);
  /// num_nodes nodes whose in-degrees are drawn from a heavy-tailed law (some zero, some large),
  /// neighbours uniform (repeats allowed: multi-edges are real input).
  static OwnedGraph random(int64_t num_nodes, double mean_degree, uint64_t seed);
  /// 2000 nodes: node 0 cited 12000 times, node 1 11000 times (hub windows for late temporal
  /// seeds), the others 4 times each, sources uniform from `seed`.
  static OwnedGraph two_hubs(uint64_t seed);

  graph::CscView csc() const;
  SampleGraph sample_graph() const { return {csc(), weights}; }
  int64_t num_nodes() const { return static_cast<int64_t>(indptr.size()) - 1; }
  int64_t num_edges() const { return indptr.back(); }
};

/// An edge of a typed graph: global ids, relation id.
struct TypedEdge {
  int64_t src;
  int64_t dst;
  int relation;
};

/// An owned typed graph (graph/hetero_view.hpp): node types of the given sizes in id order, each
/// column's edges sorted by relation (stably: else in the order given).
struct TypedGraph {
  OwnedGraph graph;
  std::vector<int64_t> node_type_offset;
  std::vector<graph::RelationTypes> relations;
  std::vector<uint8_t> type_per_edge;

  static TypedGraph from_edges(const std::vector<int64_t>& type_sizes, std::vector<graph::RelationTypes> relations,
                               const std::vector<TypedEdge>& edges);
  /// Every dst node of each relation draws a heavy-tailed number of uniform sources of the
  /// relation's src type (OwnedGraph::random's law, per relation).
  static TypedGraph random(const std::vector<int64_t>& type_sizes, std::vector<graph::RelationTypes> relations,
                           double mean_degree, uint64_t seed);

  graph::HeteroView view() const;
  SampleGraph sample_graph() const { return {graph.csc(), graph.weights, view()}; }
  int64_t num_nodes() const { return graph.num_nodes(); }
  int64_t num_edges() const { return graph.num_edges(); }
};

/// Builds a block the slow, obvious way (std::map compaction), as every reference sampler does:
/// the dst nodes are the first src nodes, then each new src node in first-appearance order.
class NaiveBlockBuilder {
 public:
  explicit NaiveBlockBuilder(const std::vector<int64_t>& dst);
  /// Appends an edge from global node `src` to the current dst row; returns its local position.
  int64_t add(int64_t src);
  /// Closes the current dst row.
  void end_row() { block_.indptr.push_back(static_cast<int64_t>(block_.indices.size())); }
  Block& block() { return block_; }

 private:
  Block block_;
  std::map<int64_t, int64_t> local_;
};

/// The sampler specification (neighbor_sampler.hpp) written the slow, obvious way: std::set for
/// Floyd, a full sort for Efraimidis-Spirakis, std::map for compaction.
MiniBatch reference_sample(const OwnedGraph& g, std::span<const int64_t> seeds, const NeighborSamplerOptions& options,
                           uint64_t stream);

/// The typed sampler's specification (neighbor_sampler.hpp) the slow way: each relation's edges of
/// a column found by a scan, reference_sample's draws on them from the relation's stream.
MiniBatch reference_sample(const TypedGraph& g, std::span<const int64_t> seeds, const NeighborSamplerOptions& options,
                           uint64_t stream);

/// Distinct random seeds in [0, num_nodes).
std::vector<int64_t> random_seeds(int64_t num_nodes, int64_t count, uint64_t seed);

/// Device 0's memory taken until less than `below` bytes are free (blocks of what is free minus
/// below / 2, or the largest cudaMalloc grants below that, found to within 256 KiB), for the tests
/// of the budget checks at creation; given back by
/// release() or on destruction, on every path out of a test. Tests that use it take the whole
/// device: scripts/gpu-check.sh runs them alone (whole_device_tests).
class DeviceFill {
 public:
  explicit DeviceFill(int64_t below);
  ~DeviceFill() { release(); }
  DeviceFill(const DeviceFill&) = delete;
  DeviceFill& operator=(const DeviceFill&) = delete;
  /// Empty when less than `below` bytes are free now; else gives the memory back and says why the
  /// test must skip: `if (const std::string why = fill.unfilled(); !why.empty()) GTEST_SKIP() << why;`
  std::string unfilled();
  int64_t free_bytes() const;
  void release();

 private:
  int64_t below_ = 0;
  std::vector<Buffer> blocks_;
};

/// Pearson's chi-square statistic of `counts` against equal expected frequencies.
double chi_square_uniform(const std::vector<int64_t>& counts);

}  // namespace graphtier::sample::test
