// `split-links`: a seeded split of a dataset's edges into message-passing, training-supervision,
// validation and test edges for link prediction (PyG's RandomLinkSplit with is_undirected=True
// and disjoint_train_ratio), written as a new dataset whose CSC holds the message-passing edges
// only (docs/format.md, Link splits).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graphtier/graph/csc_view.hpp"
#include "graphtier/graph/dataset.hpp"

namespace graphtier::prep {

struct LinkSplitOptions {
  double val = 0.05;      // fraction of the undirected edges for validation, in [0, 1)
  double test = 0.1;      // fraction for testing, in [0, 1); val + test < 1
  double disjoint = 0.0;  // fraction of the training edges for supervision only, in [0, 1)
  uint64_t seed = 0;
  /// Time-ordered: the latest undirected edges (by their time, below) become test edges, the
  /// next latest validation edges, as temporal link-prediction benchmarks split; equal times are
  /// ordered by the seeded key. Needs edge times.
  bool by_time = false;
  bool overwrite = false;  // replace an existing output (which may be the input itself)
};

/// The split of one graph, in memory. An undirected edge is an unordered pair {u, v} with every
/// CSC entry between u and v (both directions, duplicates); M pairs are ordered by a counter-based
/// key of (seed, u, v), and the first floor(val * M) go to validation, the next floor(test * M) to
/// testing, the next floor(disjoint * T) of the T = M - valid - test training pairs to
/// supervision only, the rest to message passing. The pairs' order, hence the split, depends on
/// the seed and the edges' endpoints only, not on the CSC's entry order.
///
/// With edge times (one per CSC entry) an undirected edge's time is the earliest of its entries'
/// (when the link first appeared); by_time orders the pairs by (time, key) instead and takes the
/// last floor(test * M) for testing and the floor(val * M) before them for validation, the
/// training pairs still ordered by key for the disjoint share.
struct LinkSplitResult {
  std::vector<int64_t> indptr;     // [N + 1], the message-passing CSC
  std::vector<int64_t> indices;    // its entries, in the input's order within each column
  std::vector<int64_t> edge_time;  // its entries' times, empty without edge times
  /// Flattened (src, dst) pairs sorted by (src, dst), one per undirected edge, in a direction the
  /// input holds: src <= dst unless it holds the edge only as src > dst. train is the disjoint pairs when disjoint > 0, else the message-passing ones.
  std::vector<int64_t> train, valid, test;
  /// Each row's time (one per pair, in the rows' order); empty without edge times.
  std::vector<int64_t> train_time, valid_time, test_time;
  int64_t num_pairs = 0;  // M, the input's undirected edges
};

/// Splits `csc`, whose entries have times `edge_time` (one per entry, or empty: no times). Throws
/// InvalidArgument on fractions outside [0, 1), val + test >= 1, a graph without edges, times of
/// the wrong count or by_time without times; any other input leaves a message-passing pair.
LinkSplitResult split_links(const graph::CscView& csc, const LinkSplitOptions& options,
                            std::span<const int64_t> edge_time = {});

struct LinkSplitReport {
  int64_t num_nodes = 0;
  int64_t num_edges = 0;          // CSC entries of the input
  int64_t num_pairs = 0;          // its undirected edges
  int64_t num_message_edges = 0;  // CSC entries of the output
  graph::LinkSplit links;
  double seconds = 0;
};

/// A link split's flattened (src, dst) pairs renumbered by `old_to_new` (prepare's permutation),
/// rows sorted again by (src, dst); `times` (one per row, or empty) are reordered with their rows.
struct LinkEdges {
  std::vector<int64_t> pairs;
  std::vector<int64_t> times;
};
LinkEdges renumber_link_edges(std::span<const int64_t> pairs, std::span<const int64_t> times,
                              std::span<const int64_t> old_to_new);

/// Reads dataset `in`, splits it and writes `out` (atomically, graph::DatasetWriter): the
/// message-passing CSC (with its edge times), the seed-edge arrays (with their times when the
/// input has edge times) and the "links" section, every other array copied unchanged. Refuses
/// typed datasets, datasets that already hold a link split, and by_time without edge times.
LinkSplitReport split_links_dataset(const std::string& in, const std::string& out, const LinkSplitOptions& options);

}  // namespace graphtier::prep
