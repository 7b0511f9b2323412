// Link-prediction minibatches: the seed nodes of a batch of supervision edges with their negatives
// (PyG's LinkNeighborLoader, binary or triplet), and seed-edge exclusion (GraphBolt's
// exclude_seed_edges): a batch's supervision edges, and their reverses, are left out of its
// sampled message-passing graph. The draws are link_draws.hpp's, so a batch is a pure function of
// (seed, stream, its edges) on every backend.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "graphtier/graph/csc_view.hpp"
#include "graphtier/sample/minibatch.hpp"

namespace graphtier::sample {

enum class NegativeMode : uint8_t { kNone, kBinary, kTriplet };

/// "none", "binary", "triplet" (PyG's neg_sampling modes); parse_negative_mode throws
/// InvalidArgument naming the choices.
std::string_view negative_mode_name(NegativeMode mode);
NegativeMode parse_negative_mode(std::string_view text);

struct NegativeOptions {
  NegativeMode mode = NegativeMode::kNone;
  /// binary: ceil(amount * P) negative pairs for P positives (amount > 0); triplet: `amount`
  /// negative destinations per positive (a whole number >= 1). PyG's NegativeSampling.amount.
  double amount = 1.0;
  /// Redraw a negative (up to max_attempts draws) while it is an edge: u -> v in the graph's CSC,
  /// or (u, v) or (v, u) among the batch's positives or the `known` pairs handed in.
  bool non_edges = false;
  int max_attempts = 32;
  /// Temporal negatives (PyG's link loader with a node time_attr): with `node_time` ([num_nodes])
  /// and `pair_time` ([P], the positives' times), a negative is drawn among the nodes no later than
  /// its positive's time (binary negative i: positive i mod P; triplet: its own positive), redrawn
  /// within max_attempts, and a node still later is replaced by the earliest node (PyG's rule).
  /// Both empty: untimed.
  std::span<const int64_t> node_time{};
  std::span<const int64_t> pair_time{};
};

/// Throws InvalidArgument naming the value when `options` cannot draw the negatives of a batch of
/// up to `max_positives` positives: an amount that is not positive (binary) or not a whole number
/// >= 1 (triplet), max_attempts outside [1, kMaxNegativeAttempts], or more draws than a batch may
/// make. draw_link_seeds checks its own batch with it; a loader checks its options once, when made.
void check_negative_options(const NegativeOptions& options, int64_t max_positives);

/// The seeds of one link minibatch. `nodes` are the distinct endpoints of the positives and the
/// negatives, ascending (as PyG's unique); every *_index is a position in `nodes`.
struct LinkSeeds {
  std::vector<int64_t> nodes;
  /// kNone / kBinary: the P positives then the Q negatives, PyG's edge_label_index rows.
  std::vector<int64_t> label_src;
  std::vector<int64_t> label_dst;
  /// kTriplet: src_index [P], dst_pos_index [P], dst_neg_index [P * amount] (row k: positive k's).
  std::vector<int64_t> src_index;
  std::vector<int64_t> dst_pos_index;
  std::vector<int64_t> dst_neg_index;
  /// The negatives as global ids: binary (src, dst) pairs flattened, triplet destinations.
  std::vector<int64_t> negatives;
  /// Negatives still edges after max_attempts draws (non_edges only; kept as drawn).
  int64_t unverified = 0;
};

/// Draws the negatives of the positives `pairs` (flattened (src, dst), global ids < num_nodes) for
/// minibatch `stream` and numbers the batch's nodes. `csc` (the graph, num_nodes nodes) is read with
/// options.non_edges; `known` is a (src, dst)-sorted flattened pair list (a dataset's
/// link_edges(split): edges held out of the CSC), or empty. Throws OutOfRange for an endpoint
/// outside [0, num_nodes), InvalidArgument for bad options or an odd-length pair list.
LinkSeeds draw_link_seeds(std::span<const int64_t> pairs, int64_t num_nodes, const NegativeOptions& options,
                          uint64_t seed, uint64_t stream, const graph::CscView* csc = nullptr,
                          std::span<const int64_t> known = {});

/// `batch` without the messages along the supervision edges `pairs` (flattened (src, dst), any
/// order; with `reverse`, their reverses too): every block edge u -> v with is_excluded_edge (link_draws.hpp)
/// is dropped, and then the nodes no edge reaches any more, with their own edges in the blocks
/// further out, so the result keeps the MiniBatch contract (minibatch.hpp: node order by first
/// appearance). The neighbours each node drew are unchanged: a node that lost an edge has fewer
/// messages, not other ones (as GraphBolt's exclude_seed_edges).
MiniBatch exclude_seed_edges(const MiniBatch& batch, std::span<const int64_t> pairs, bool reverse = true);

}  // namespace graphtier::sample
