// Hotness scores: how likely neighbour sampling is to touch each node (§3.1 of the data tiering
// paper, docs/references.md).
//
// Every score is a float64 per node, higher = hotter, computed on the host with the thread pool
// handed in, and bit-for-bit the same whatever the pool size.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/csc_view.hpp"

namespace graphtier::prep {

class OutNeighbours;

enum class HotnessMethod : uint8_t {
  kDegree,                   // in-degree + out-degree
  kInDegree,                 // CSC row length: how many neighbours the node samples from
  kOutDegree,                // how often the node is someone's in-neighbour (data tiering, Method 1)
  kReversePageRank,          // Method 2
  kWeightedReversePageRank,  // Method 3, Algorithm 1: train nodes start with more mass
  kExternal,                 // read from a scores file (read_scores_file)
  kPresample,                // visit counts of K epochs of sampling (GNNLab PreSC#K), by the sample module
};

/// "degree", "in-degree", "out-degree", "rpr", "wrpr", "scores", "presample": the names of the CLI and of
/// Manifest::hotness.
std::string_view hotness_method_name(HotnessMethod method);
/// Parses those names (also "reverse-pagerank" and "weighted-reverse-pagerank"); throws
/// InvalidArgument listing the accepted ones.
HotnessMethod parse_hotness_method(std::string_view name);

std::vector<double> in_degree_scores(const graph::CscView& csc, ThreadPool& pool);
std::vector<double> out_degree_scores(const graph::CscView& csc, ThreadPool& pool);
std::vector<double> degree_scores(const graph::CscView& csc, ThreadPool& pool);

struct PageRankOptions {
  int iterations = 20;  // upper bound on iterations (Algorithm 1 uses 5 for the weighted variant)
  double damping = 0.85;
  /// Stop once an iteration changes the scores by less than this in L1 norm; 0 runs every
  /// iteration (Algorithm 1 deliberately stops early instead of converging).
  double tolerance = 0;
};

struct PageRankStats {
  int iterations = 0;       // iterations run
  double last_change = 0;   // L1 norm of the last iteration's change
};

/// Reverse PageRank (Algorithm 1 of the data tiering paper without weights): every node starts at 1/N; each
/// iteration divides every score by its node's in-degree (a node without in-edges passes nothing
/// on), then node u takes the sum over the nodes X it points to (u in X's in-neighbours) of
/// score[X] / in_degree[X], and finally score = (1 - d) / N + d * score. Multi-edges count once per
/// CSC entry. `out` must be OutNeighbours::build(csc).
std::vector<double> reverse_pagerank(const graph::CscView& csc, const OutNeighbours& out, const PageRankOptions& options,
                                     ThreadPool& pool, PageRankStats* stats = nullptr);

/// Weighted reverse PageRank, Algorithm 1 of the data tiering paper: as reverse_pagerank, but the initial score
/// 1/N of each labeled (train) node is multiplied by N / labeled.size() (once per occurrence in
/// `labeled`). Throws InvalidArgument if `labeled` is empty, OutOfRange for an id outside [0, N).
std::vector<double> weighted_reverse_pagerank(const graph::CscView& csc, const OutNeighbours& out,
                                              std::span<const int64_t> labeled, const PageRankOptions& options,
                                              ThreadPool& pool, PageRankStats* stats = nullptr);

/// Reads externally supplied per-node scores, indexed by the dataset's current node ids: either an
/// .npy file of shape (N,) or (N, 1) of any numeric type (converted to float64), or a raw
/// little-endian float64 file of exactly N * 8 bytes. Throws FormatError naming the file for a
/// wrong size or shape, or a score that is not finite.
std::vector<double> read_scores_file(const std::string& path, int64_t num_nodes);

}  // namespace graphtier::prep
