// Link minibatches on the host: negatives drawn by link_draws.hpp's rules, seed nodes numbered,
// and seed-edge exclusion as a pass over a sampled MiniBatch.
#include "graphtier/sample/link_batch.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "graphtier/core/error.hpp"
#include "graphtier/sample/link_draws.hpp"

namespace graphtier::sample {
namespace {

/// Flattened (src, dst) pairs sorted by (src, dst).
std::vector<int64_t> sorted_pairs(std::span<const int64_t> pairs) {
  std::vector<std::pair<int64_t, int64_t>> rows(pairs.size() / 2);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = {pairs[2 * i], pairs[2 * i + 1]};
  std::sort(rows.begin(), rows.end());
  std::vector<int64_t> out(pairs.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out[2 * i] = rows[i].first;
    out[2 * i + 1] = rows[i].second;
  }
  return out;
}

int64_t count_of(std::span<const int64_t> pairs) { return static_cast<int64_t>(pairs.size() / 2); }

/// Whether u -> v counts as an edge for options.non_edges.
bool is_edge(const graph::CscView* csc, std::span<const int64_t> positives, std::span<const int64_t> known, int64_t u,
             int64_t v) {
  if (is_excluded_edge(positives.data(), count_of(positives), u, v, true)) return true;
  if (is_excluded_edge(known.data(), count_of(known), u, v, true)) return true;
  if (csc == nullptr) return false;
  return std::visit([&](auto indices) { return csc_has_edge(csc->indptr.data(), indices.data(), u, v); }, csc->indices);
}

}  // namespace

std::string_view negative_mode_name(NegativeMode mode) {
  switch (mode) {
    case NegativeMode::kNone: return "none";
    case NegativeMode::kBinary: return "binary";
    case NegativeMode::kTriplet: return "triplet";
  }
  return "unknown";
}

NegativeMode parse_negative_mode(std::string_view text) {
  for (NegativeMode m : {NegativeMode::kNone, NegativeMode::kBinary, NegativeMode::kTriplet}) {
    if (text == negative_mode_name(m)) return m;
  }
  throw InvalidArgument(detail::concat("unknown negative sampling mode '", detail::printable(text),
                                       "' (expected none, binary or triplet)"));
}

void check_negative_options(const NegativeOptions& options, int64_t max_positives) {
  GRAPHTIER_EXPECTS(options.max_attempts >= 1 && options.max_attempts <= kMaxNegativeAttempts, InvalidArgument,
                    "negative sampling: max_attempts must be in [1, ", kMaxNegativeAttempts, "], got ",
                    options.max_attempts);
  const auto positives = static_cast<double>(std::max<int64_t>(max_positives, 0));
  if (options.mode == NegativeMode::kBinary) {
    GRAPHTIER_EXPECTS(std::isfinite(options.amount) && options.amount > 0, InvalidArgument,
                      "binary negative sampling: amount must be positive, got ", options.amount);
    GRAPHTIER_EXPECTS(2 * std::ceil(options.amount * positives) < static_cast<double>(kMaxNegativeDraws),
                      InvalidArgument, "binary negative sampling: amount ", options.amount, " for ", max_positives,
                      " positives is ", std::ceil(options.amount * positives), " negatives, too many for a batch");
  } else if (options.mode == NegativeMode::kTriplet) {
    GRAPHTIER_EXPECTS(std::isfinite(options.amount) && options.amount >= 1 &&
                          options.amount == std::floor(options.amount),
                      InvalidArgument, "triplet negative sampling: amount must be a whole number >= 1, got ",
                      options.amount);
    GRAPHTIER_EXPECTS(options.amount * positives < static_cast<double>(kMaxNegativeDraws), InvalidArgument,
                      "triplet negative sampling: amount ", options.amount, " for ", max_positives,
                      " positives is too many negatives for a batch");
  }
}

LinkSeeds draw_link_seeds(std::span<const int64_t> pairs, int64_t num_nodes, const NegativeOptions& options,
                          uint64_t seed, uint64_t stream, const graph::CscView* csc, std::span<const int64_t> known) {
  GRAPHTIER_EXPECTS(pairs.size() % 2 == 0, InvalidArgument, "link seeds: ", pairs.size(),
                    " endpoints is not a whole number of (src, dst) pairs");
  GRAPHTIER_EXPECTS(known.size() % 2 == 0, InvalidArgument, "link seeds: the known pairs have an odd length ", known.size());
  GRAPHTIER_EXPECTS(num_nodes > 0, InvalidArgument, "link seeds: the graph has no nodes");
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i] < 0 || pairs[i] >= num_nodes) {
      throw OutOfRange(detail::concat("link seeds: node ", pairs[i], " of edge ", i / 2, " is out of range [0, ",
                                      num_nodes, ")"));
    }
  }
  GRAPHTIER_EXPECTS(!options.non_edges || csc == nullptr || csc->num_nodes() == num_nodes, InvalidArgument,
                    "link seeds: the graph has ", csc == nullptr ? 0 : csc->num_nodes(), " nodes, expected ", num_nodes);
  if (options.non_edges) {
    for (std::size_t i = 2; i + 1 < known.size(); i += 2) {
      GRAPHTIER_EXPECTS(known[i - 2] < known[i] || (known[i - 2] == known[i] && known[i - 1] <= known[i + 1]),
                        InvalidArgument, "link seeds: the known pairs are not sorted by (src, dst) at pair ", i / 2);
    }
  }
  const int64_t p = count_of(pairs);
  check_negative_options(options, p);
  int64_t q = 0;  // negative draws
  if (options.mode == NegativeMode::kBinary) {
    q = static_cast<int64_t>(std::ceil(options.amount * static_cast<double>(p)));
  } else if (options.mode == NegativeMode::kTriplet) {
    q = p * static_cast<int64_t>(options.amount);
  }

  const std::span<const int64_t> node_time = options.node_time;
  const bool timed = !node_time.empty();
  GRAPHTIER_EXPECTS(timed == !options.pair_time.empty(), InvalidArgument,
                    "temporal negatives need both the node times and the positives' times");
  GRAPHTIER_EXPECTS(!timed || (static_cast<int64_t>(node_time.size()) == num_nodes &&
                               static_cast<int64_t>(options.pair_time.size()) == p),
                    InvalidArgument, "temporal negatives: ", node_time.size(), " node times for ", num_nodes,
                    " nodes and ", options.pair_time.size(), " times for ", p, " positives");
  // The earliest node (the lowest id among equals): what a negative no draw found in time becomes.
  // Found on the first such negative only: it scans every node, which a batch need not pay for.
  int64_t earliest = -1;
  const auto earliest_node = [&] {
    if (earliest < 0) {
      earliest = static_cast<int64_t>(std::min_element(node_time.begin(), node_time.end()) - node_time.begin());
    }
    return earliest;
  };
  const auto in_time = [&](int64_t v, int64_t t) { return !timed || node_time[static_cast<std::size_t>(v)] <= t; };

  const std::vector<int64_t> positives = options.non_edges ? sorted_pairs(pairs) : std::vector<int64_t>{};
  LinkSeeds out;
  const uint64_t ns = negative_stream(stream);
  // A draw's result is a function of (seed, stream, index) and the graph, never of the other draws.
  // `positive`: the positive whose time bounds a temporal negative.
  const auto draw = [&](int64_t index, int64_t src_index, int64_t fixed_src, int64_t positive) {
    const int64_t t = timed ? options.pair_time[static_cast<std::size_t>(positive)] : 0;
    int64_t u = fixed_src, v = 0;
    for (int attempt = 0;; ++attempt) {
      if (src_index >= 0) u = negative_node(seed, ns, src_index, attempt, num_nodes);
      v = negative_node(seed, ns, index, attempt, num_nodes);
      const bool timely = (src_index < 0 || in_time(u, t)) && in_time(v, t);
      const bool non_edge = !options.non_edges || !is_edge(csc, positives, known, u, v);
      if (timely && non_edge) break;
      if (attempt + 1 == options.max_attempts) {
        if (src_index >= 0 && !in_time(u, t)) u = earliest_node();
        if (!in_time(v, t)) v = earliest_node();
        if (options.non_edges && is_edge(csc, positives, known, u, v)) ++out.unverified;
        break;
      }
    }
    return std::pair<int64_t, int64_t>{u, v};
  };
  if (options.mode == NegativeMode::kBinary) {
    out.negatives.resize(static_cast<std::size_t>(2 * q));
    for (int64_t i = 0; i < q; ++i) {
      const auto [u, v] = draw(2 * i + 1, 2 * i, -1, i % std::max<int64_t>(p, 1));
      out.negatives[static_cast<std::size_t>(2 * i)] = u;
      out.negatives[static_cast<std::size_t>(2 * i + 1)] = v;
    }
  } else if (options.mode == NegativeMode::kTriplet) {
    const auto amount = static_cast<int64_t>(options.amount);
    out.negatives.resize(static_cast<std::size_t>(q));
    for (int64_t k = 0; k < p; ++k) {
      for (int64_t j = 0; j < amount; ++j) {
        out.negatives[static_cast<std::size_t>(k * amount + j)] = draw(k * amount + j, -1, pairs[static_cast<std::size_t>(2 * k)], k).second;
      }
    }
  }

  out.nodes.assign(pairs.begin(), pairs.end());
  out.nodes.insert(out.nodes.end(), out.negatives.begin(), out.negatives.end());
  std::sort(out.nodes.begin(), out.nodes.end());
  out.nodes.erase(std::unique(out.nodes.begin(), out.nodes.end()), out.nodes.end());
  const auto position = [&](int64_t v) {
    return static_cast<int64_t>(std::lower_bound(out.nodes.begin(), out.nodes.end(), v) - out.nodes.begin());
  };
  if (options.mode == NegativeMode::kTriplet) {
    for (int64_t k = 0; k < p; ++k) {
      out.src_index.push_back(position(pairs[static_cast<std::size_t>(2 * k)]));
      out.dst_pos_index.push_back(position(pairs[static_cast<std::size_t>(2 * k + 1)]));
    }
    for (int64_t v : out.negatives) out.dst_neg_index.push_back(position(v));
  } else {
    for (std::size_t i = 0; i + 1 < pairs.size(); i += 2) {
      out.label_src.push_back(position(pairs[i]));
      out.label_dst.push_back(position(pairs[i + 1]));
    }
    for (std::size_t i = 0; i + 1 < out.negatives.size(); i += 2) {
      out.label_src.push_back(position(out.negatives[i]));
      out.label_dst.push_back(position(out.negatives[i + 1]));
    }
  }
  return out;
}

MiniBatch exclude_seed_edges(const MiniBatch& batch, std::span<const int64_t> pairs, bool reverse) {
  GRAPHTIER_EXPECTS(pairs.size() % 2 == 0, InvalidArgument, "exclude_seed_edges: ", pairs.size(),
                    " endpoints is not a whole number of (src, dst) pairs");
  const std::vector<int64_t> excluded = sorted_pairs(pairs);
  const int64_t count = count_of(excluded);
  const auto num_seeds = static_cast<int64_t>(batch.seeds.size());
  std::vector<int64_t> endpoints(pairs.begin(), pairs.end());  // the nodes an excluded edge can join
  std::sort(endpoints.begin(), endpoints.end());
  endpoints.erase(std::unique(endpoints.begin(), endpoints.end()), endpoints.end());
  MiniBatch out;
  out.seeds = batch.seeds;
  out.blocks.reserve(batch.blocks.size());
  // Nodes are followed by their positions in the old blocks, never by id: old block l's dst nodes
  // are old block l-1's src nodes at the same positions. old_pos[i]: the old position of the new
  // block's dst node i (the seeds for block 0, then the previous new block's src nodes).
  std::vector<int64_t> old_pos(static_cast<std::size_t>(num_seeds));
  std::iota(old_pos.begin(), old_pos.end(), int64_t{0});
  for (const Block& old : batch.blocks) {
    Block b;
    b.num_dst = static_cast<int64_t>(old_pos.size());
    std::vector<int64_t> new_pos(static_cast<std::size_t>(old.num_src()), -1);  // old src position -> new
    std::vector<int64_t> next_old_pos = old_pos;                                  // the new src nodes' old positions
    // Whether each old src node is a pair's endpoint: one search per node, not two per edge.
    std::vector<char> endpoint(static_cast<std::size_t>(old.num_src()));
    for (std::size_t k = 0; k < endpoint.size(); ++k) {
      endpoint[k] = std::binary_search(endpoints.begin(), endpoints.end(), old.src_nodes[k]) ? 1 : 0;
    }
    for (int64_t i = 0; i < b.num_dst; ++i) {
      const int64_t p = old_pos[static_cast<std::size_t>(i)];
      b.src_nodes.push_back(old.src_nodes[static_cast<std::size_t>(p)]);
      new_pos[static_cast<std::size_t>(p)] = i;
    }
    b.indptr.push_back(0);
    for (int64_t i = 0; i < b.num_dst; ++i) {
      const int64_t o = old_pos[static_cast<std::size_t>(i)];
      const int64_t v = b.src_nodes[static_cast<std::size_t>(i)];
      for (int64_t e = old.indptr[static_cast<std::size_t>(o)]; e < old.indptr[static_cast<std::size_t>(o + 1)]; ++e) {
        const int64_t p = old.indices[static_cast<std::size_t>(e)];
        // Only an edge between two endpoints can be excluded (dst node o is old src node o).
        if (endpoint[static_cast<std::size_t>(p)] != 0 && endpoint[static_cast<std::size_t>(o)] != 0 &&
            is_excluded_edge(excluded.data(), count, old.src_nodes[static_cast<std::size_t>(p)], v, reverse)) {
          continue;
        }
        int64_t& local = new_pos[static_cast<std::size_t>(p)];
        if (local < 0) {
          local = b.num_src();
          b.src_nodes.push_back(old.src_nodes[static_cast<std::size_t>(p)]);
          next_old_pos.push_back(p);
        }
        b.indices.push_back(local);
        if (!old.edge_ids.empty()) b.edge_ids.push_back(old.edge_ids[static_cast<std::size_t>(e)]);
        if (!old.weights.empty()) b.weights.push_back(old.weights[static_cast<std::size_t>(e)]);
        if (!old.edge_types.empty()) b.edge_types.push_back(old.edge_types[static_cast<std::size_t>(e)]);
      }
      b.indptr.push_back(static_cast<int64_t>(b.indices.size()));
    }
    out.blocks.push_back(std::move(b));
    old_pos = std::move(next_old_pos);
  }
  return out;
}

}  // namespace graphtier::sample
