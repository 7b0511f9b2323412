// `split-links`: group the CSC entries into undirected edges, order the edges by a counter-based
// key, cut the order into validation, test, disjoint-supervision and message-passing edges, and
// write the message-passing CSC with the seed-edge arrays as a new dataset.
#include "graphtier/prep/link_split.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <tuple>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/rng.hpp"

namespace graphtier::prep {
namespace {

/// The stream of split-links' keys: apart from every sampler's (random.hpp), so that a split and
/// the batches drawn from it with the same seed are unrelated.
constexpr uint64_t kLinkSplitStream = 0x6C696E6B73706C74ull;  // "linksplt"

/// A CSC entry with its undirected edge's endpoints (lo <= hi).
struct Entry {
  int64_t lo;
  int64_t hi;
  int64_t position;  // in the input's indices
  bool forward;      // stored as lo -> hi (source lo, column hi)
};

/// One undirected edge: its entries are entries[first, last).
struct Pair {
  uint64_t key;
  int64_t first;
  int64_t last;
  int64_t time;  // the earliest of its entries' times (0 without times)
};

enum class Role : uint8_t { kValid, kTest, kSupervision, kMessage };

void check_fraction(double value, const char* name) {
  GRAPHTIER_EXPECTS(std::isfinite(value) && value >= 0.0 && value < 1.0, InvalidArgument, name,
                    " must be a fraction in [0, 1), got ", value);
}

/// Sorts flattened (src, dst) rows by (src, dst), and `times` (one per row, or empty) with them;
/// rows of one pair (a multigraph's) by time.
void sort_rows(std::vector<int64_t>& flat, std::vector<int64_t>& times) {
  const bool timed = !times.empty();
  std::vector<std::tuple<int64_t, int64_t, int64_t>> rows(flat.size() / 2);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = {flat[2 * i], flat[2 * i + 1], timed ? times[i] : 0};
  std::sort(rows.begin(), rows.end());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    flat[2 * i] = std::get<0>(rows[i]);
    flat[2 * i + 1] = std::get<1>(rows[i]);
    if (timed) times[i] = std::get<2>(rows[i]);
  }
}

void check_options(const LinkSplitOptions& options) {
  check_fraction(options.val, "--val");
  check_fraction(options.test, "--test");
  check_fraction(options.disjoint, "--disjoint");
  GRAPHTIER_EXPECTS(options.val + options.test < 1.0, InvalidArgument, "--val + --test must be below 1 (some edges must ",
                    "stay for training), got ", options.val, " + ", options.test);
}

}  // namespace

LinkEdges renumber_link_edges(std::span<const int64_t> pairs, std::span<const int64_t> times,
                              std::span<const int64_t> old_to_new) {
  GRAPHTIER_EXPECTS(times.empty() || times.size() * 2 == pairs.size(), InvalidArgument, "seed-edge times: expected ",
                    pairs.size() / 2, " (one per edge), got ", times.size());
  LinkEdges edges{std::vector<int64_t>(pairs.size()), std::vector<int64_t>(times.begin(), times.end())};
  std::vector<int64_t>& out = edges.pairs;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    GRAPHTIER_EXPECTS(pairs[i] >= 0 && static_cast<std::size_t>(pairs[i]) < old_to_new.size(), InvalidArgument,
                      "seed-edge node id ", pairs[i], " is out of range [0, ", old_to_new.size(), ")");
    out[i] = old_to_new[static_cast<std::size_t>(pairs[i])];
  }
  sort_rows(out, edges.times);
  return edges;
}

LinkSplitResult split_links(const graph::CscView& csc, const LinkSplitOptions& options,
                            std::span<const int64_t> edge_time) {
  check_options(options);
  csc.check_shape("split-links input");
  const int64_t n = csc.num_nodes();
  const int64_t e_count = csc.num_edges();
  GRAPHTIER_EXPECTS(e_count > 0, InvalidArgument, "the graph has no edges to split");
  const bool timed = !edge_time.empty();
  GRAPHTIER_EXPECTS(!timed || static_cast<int64_t>(edge_time.size()) == e_count, InvalidArgument,
                    "edge times: expected one per CSC entry (", e_count, "), got ", edge_time.size());
  GRAPHTIER_EXPECTS(timed || !options.by_time, InvalidArgument,
                    "--by-time orders the edges by their times, and the graph has none (edge_time.bin)");

  std::vector<Entry> entries(static_cast<std::size_t>(e_count));
  std::visit(
      [&](auto indices) {
        for (int64_t v = 0; v < n; ++v) {
          for (int64_t p = csc.indptr[v]; p < csc.indptr[v + 1]; ++p) {
            const auto u = static_cast<int64_t>(indices[static_cast<std::size_t>(p)]);
            entries[static_cast<std::size_t>(p)] = Entry{std::min(u, v), std::max(u, v), p, u <= v};
          }
        }
      },
      csc.indices);
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.lo != b.lo ? a.lo < b.lo : a.hi != b.hi ? a.hi < b.hi : a.position < b.position; });

  std::vector<Pair> pairs;
  for (int64_t i = 0; i < e_count;) {
    int64_t j = i + 1;
    const Entry& head = entries[static_cast<std::size_t>(i)];
    while (j < e_count && entries[static_cast<std::size_t>(j)].lo == head.lo && entries[static_cast<std::size_t>(j)].hi == head.hi) ++j;
    int64_t time = 0;
    if (timed) {
      time = edge_time[static_cast<std::size_t>(head.position)];
      for (int64_t k = i + 1; k < j; ++k) {
        time = std::min(time, edge_time[static_cast<std::size_t>(entries[static_cast<std::size_t>(k)].position)]);
      }
    }
    pairs.push_back(Pair{philox_u64(options.seed, kLinkSplitStream ^ mix64(static_cast<uint64_t>(head.lo)),
                                    static_cast<uint64_t>(head.hi)),
                         i, j, time});
    i = j;
  }
  const auto m = static_cast<int64_t>(pairs.size());
  const auto num_valid = static_cast<int64_t>(options.val * static_cast<double>(m));
  const auto num_test = static_cast<int64_t>(options.test * static_cast<double>(m));
  const int64_t num_train = m - num_valid - num_test;
  const auto num_disjoint = static_cast<int64_t>(options.disjoint * static_cast<double>(num_train));
  // Fractions below 1 always leave a message-passing pair: floor(v M) + floor(t M) <= (v + t) M < M,
  // and floor(d T) < T.

  // Ranks by key; pairs of equal keys (a 64-bit collision) by their endpoints, so the order stays
  // a function of the edges alone.
  std::vector<int64_t> order(static_cast<std::size_t>(m));
  for (int64_t i = 0; i < m; ++i) order[static_cast<std::size_t>(i)] = i;
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const uint64_t ka = pairs[static_cast<std::size_t>(a)].key, kb = pairs[static_cast<std::size_t>(b)].key;
    return ka != kb ? ka < kb : a < b;  // pairs are in (lo, hi) order already
  });
  std::vector<Role> role(static_cast<std::size_t>(m));
  if (!options.by_time) {
    for (int64_t rank = 0; rank < m; ++rank) {
      role[static_cast<std::size_t>(order[static_cast<std::size_t>(rank)])] =
          rank < num_valid                              ? Role::kValid
          : rank < num_valid + num_test                 ? Role::kTest
          : rank < num_valid + num_test + num_disjoint ? Role::kSupervision
                                                        : Role::kMessage;
    }
  } else {
    // The latest pairs are held out; a stable sort of the key order by time breaks equal times by
    // key, so which of a tied group is held out is seeded, not the endpoints' order.
    std::vector<int64_t> by_time = order;
    std::stable_sort(by_time.begin(), by_time.end(), [&](int64_t a, int64_t b) {
      return pairs[static_cast<std::size_t>(a)].time < pairs[static_cast<std::size_t>(b)].time;
    });
    for (int64_t rank = 0; rank < m; ++rank) {
      role[static_cast<std::size_t>(by_time[static_cast<std::size_t>(rank)])] =
          rank >= m - num_test ? Role::kTest : rank >= m - num_test - num_valid ? Role::kValid : Role::kMessage;
    }
    int64_t supervision = 0;
    for (const int64_t pair : order) {
      Role& r = role[static_cast<std::size_t>(pair)];
      if (r == Role::kMessage && supervision < num_disjoint) {
        r = Role::kSupervision;
        ++supervision;
      }
    }
  }

  LinkSplitResult out;
  out.num_pairs = m;
  std::vector<uint8_t> keep(static_cast<std::size_t>(e_count), 0);
  const Role train_role = num_disjoint > 0 ? Role::kSupervision : Role::kMessage;
  for (int64_t i = 0; i < m; ++i) {
    const Pair& pair = pairs[static_cast<std::size_t>(i)];
    const Role r = role[static_cast<std::size_t>(i)];
    // The edge's direction as stored: (lo, hi) when some entry runs lo -> hi (its column is hi).
    bool forward = false;
    const Entry& head = entries[static_cast<std::size_t>(pair.first)];
    for (int64_t k = pair.first; k < pair.last; ++k) {
      const Entry& entry = entries[static_cast<std::size_t>(k)];
      if (r == Role::kMessage) keep[static_cast<std::size_t>(entry.position)] = 1;
      forward = forward || entry.forward;
    }
    std::vector<int64_t>& list = r == Role::kValid ? out.valid : r == Role::kTest ? out.test : out.train;
    std::vector<int64_t>& times = r == Role::kValid ? out.valid_time : r == Role::kTest ? out.test_time : out.train_time;
    if (r != Role::kValid && r != Role::kTest && r != train_role) continue;
    list.push_back(forward ? head.lo : head.hi);
    list.push_back(forward ? head.hi : head.lo);
    if (timed) times.push_back(pair.time);
  }
  // Pairs are visited in (lo, hi) order; an edge stored only as hi -> lo sorts among them by
  // (hi, lo), so each list is sorted again by (src, dst).
  sort_rows(out.train, out.train_time);
  sort_rows(out.valid, out.valid_time);
  sort_rows(out.test, out.test_time);

  out.indptr.assign(static_cast<std::size_t>(n + 1), 0);
  std::visit(
      [&](auto indices) {
        for (int64_t v = 0; v < n; ++v) {
          for (int64_t p = csc.indptr[v]; p < csc.indptr[v + 1]; ++p) {
            if (!keep[static_cast<std::size_t>(p)]) continue;
            out.indices.push_back(static_cast<int64_t>(indices[static_cast<std::size_t>(p)]));
            if (timed) out.edge_time.push_back(edge_time[static_cast<std::size_t>(p)]);
          }
          out.indptr[static_cast<std::size_t>(v + 1)] = static_cast<int64_t>(out.indices.size());
        }
      },
      csc.indices);
  return out;
}

LinkSplitReport split_links_dataset(const std::string& in_dir, const std::string& out_dir, const LinkSplitOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  check_options(options);  // before reading anything
  const graph::Dataset in = graph::Dataset::open(in_dir);
  const graph::Manifest& m = in.manifest();
  GRAPHTIER_EXPECTS(!in.is_hetero(), InvalidArgument, in_dir,
                    " is a typed dataset: split-links splits homogeneous datasets only (a typed split would pick its ",
                    "relations, which it does not yet)");
  GRAPHTIER_EXPECTS(!in.has_link_split(), InvalidArgument, in_dir,
                    " already holds a link split (its CSC lacks the held-out edges): split the dataset it was made from");
  GRAPHTIER_EXPECTS(in.has_edge_time() || !options.by_time, InvalidArgument, in_dir,
                    " has no edge times (edge_time.bin) to order the edges by (--by-time)");

  const LinkSplitResult split =
      split_links(graph::CscView::of(in), options, in.has_edge_time() ? in.edge_time() : std::span<const int64_t>{});

  graph::DatasetWriter writer(out_dir, options.overwrite);
  writer.write_array("indptr", std::span<const int64_t>(split.indptr));
  if (m.indices_dtype == DType::kInt32) {
    const std::vector<int32_t> narrow(split.indices.begin(), split.indices.end());
    writer.write_array("indices", std::span<const int32_t>(narrow));
  } else {
    writer.write_array("indices", std::span<const int64_t>(split.indices));
  }
  writer.write_array(graph::LinkSplit::array(graph::Split::kTrain), std::span<const int64_t>(split.train));
  writer.write_array(graph::LinkSplit::array(graph::Split::kValid), std::span<const int64_t>(split.valid));
  writer.write_array(graph::LinkSplit::array(graph::Split::kTest), std::span<const int64_t>(split.test));
  if (in.has_edge_time()) {
    writer.write_array("edge_time", std::span<const int64_t>(split.edge_time));
    writer.write_array(graph::LinkSplit::time_array(graph::Split::kTrain), std::span<const int64_t>(split.train_time));
    writer.write_array(graph::LinkSplit::time_array(graph::Split::kValid), std::span<const int64_t>(split.valid_time));
    writer.write_array(graph::LinkSplit::time_array(graph::Split::kTest), std::span<const int64_t>(split.test_time));
  }
  // Every node array (features, labels, node splits, permutation, hotness, node times) is the input's.
  for (const auto& [array, entry] : m.files) {
    if (array == "indptr" || array == "indices" || array == "edge_time") continue;
    const MappedFile mapped(in.dir() + "/" + entry.path);
    writer.open_array(array).write(mapped.data(), mapped.size());
  }

  graph::Manifest out_manifest = m;
  out_manifest.num_edges = static_cast<int64_t>(split.indices.size());
  graph::LinkSplit links;
  links.seed = options.seed;
  links.val = options.val;
  links.test = options.test;
  links.disjoint = options.disjoint;
  links.by_time = options.by_time;
  links.num_train = static_cast<int64_t>(split.train.size() / 2);
  links.num_valid = static_cast<int64_t>(split.valid.size() / 2);
  links.num_test = static_cast<int64_t>(split.test.size() / 2);
  out_manifest.links = links;
  out_manifest.source = detail::concat(m.source.empty() ? "" : m.source + "; ", "split-links --val ", options.val,
                                       " --test ", options.test, " --disjoint ", options.disjoint, options.by_time ? " --by-time" : "", " --seed ", options.seed);

  LinkSplitReport report;
  report.num_nodes = in.num_nodes();
  report.num_edges = in.num_edges();
  report.num_pairs = split.num_pairs;
  report.num_message_edges = out_manifest.num_edges;
  report.links = links;
  writer.commit(out_manifest);
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace graphtier::prep
