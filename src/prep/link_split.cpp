// `split-links`: group the CSC entries into undirected edges, order the edges by a counter-based
// key, cut the order into validation, test, disjoint-supervision and message-passing edges, and
// write the message-passing CSC with the seed-edge arrays as a new dataset.
#include "graphtier/prep/link_split.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

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
};

enum class Role : uint8_t { kValid, kTest, kSupervision, kMessage };

void check_fraction(double value, const char* name) {
  GRAPHTIER_EXPECTS(std::isfinite(value) && value >= 0.0 && value < 1.0, InvalidArgument, name,
                    " must be a fraction in [0, 1), got ", value);
}

/// Sorts flattened (src, dst) rows by (src, dst).
void sort_rows(std::vector<int64_t>& flat) {
  std::vector<std::pair<int64_t, int64_t>> rows(flat.size() / 2);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = {flat[2 * i], flat[2 * i + 1]};
  std::sort(rows.begin(), rows.end());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    flat[2 * i] = rows[i].first;
    flat[2 * i + 1] = rows[i].second;
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

std::vector<int64_t> renumber_link_edges(std::span<const int64_t> pairs, std::span<const int64_t> old_to_new) {
  std::vector<int64_t> out(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    GRAPHTIER_EXPECTS(pairs[i] >= 0 && static_cast<std::size_t>(pairs[i]) < old_to_new.size(), InvalidArgument,
                      "seed-edge node id ", pairs[i], " is out of range [0, ", old_to_new.size(), ")");
    out[i] = old_to_new[static_cast<std::size_t>(pairs[i])];
  }
  sort_rows(out);
  return out;
}

LinkSplitResult split_links(const graph::CscView& csc, const LinkSplitOptions& options) {
  check_options(options);
  csc.check_shape("split-links input");
  const int64_t n = csc.num_nodes();
  const int64_t e_count = csc.num_edges();
  GRAPHTIER_EXPECTS(e_count > 0, InvalidArgument, "the graph has no edges to split");

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
    pairs.push_back(Pair{philox_u64(options.seed, kLinkSplitStream ^ mix64(static_cast<uint64_t>(head.lo)),
                                    static_cast<uint64_t>(head.hi)),
                         i, j});
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
  for (int64_t rank = 0; rank < m; ++rank) {
    role[static_cast<std::size_t>(order[static_cast<std::size_t>(rank)])] =
        rank < num_valid                              ? Role::kValid
        : rank < num_valid + num_test                 ? Role::kTest
        : rank < num_valid + num_test + num_disjoint ? Role::kSupervision
                                                      : Role::kMessage;
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
    if (r != Role::kValid && r != Role::kTest && r != train_role) continue;
    list.push_back(forward ? head.lo : head.hi);
    list.push_back(forward ? head.hi : head.lo);
  }
  // Pairs are visited in (lo, hi) order; an edge stored only as hi -> lo sorts among them by
  // (hi, lo), so each list is sorted again by (src, dst).
  for (std::vector<int64_t>* list : {&out.train, &out.valid, &out.test}) sort_rows(*list);

  out.indptr.assign(static_cast<std::size_t>(n + 1), 0);
  std::visit(
      [&](auto indices) {
        for (int64_t v = 0; v < n; ++v) {
          for (int64_t p = csc.indptr[v]; p < csc.indptr[v + 1]; ++p) {
            if (keep[static_cast<std::size_t>(p)]) out.indices.push_back(static_cast<int64_t>(indices[static_cast<std::size_t>(p)]));
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
  GRAPHTIER_EXPECTS(!in.has_edge_time(), InvalidArgument, in_dir,
                    " has edge times (edge_time.bin): split-links does not yet carry them to the split's CSC");

  const LinkSplitResult split = split_links(graph::CscView::of(in), options);

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
  // Every node array (features, labels, node splits, permutation, hotness) is the input's.
  for (const auto& [array, entry] : m.files) {
    if (array == "indptr" || array == "indices") continue;
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
  links.num_train = static_cast<int64_t>(split.train.size() / 2);
  links.num_valid = static_cast<int64_t>(split.valid.size() / 2);
  links.num_test = static_cast<int64_t>(split.test.size() / 2);
  out_manifest.links = links;
  out_manifest.source = detail::concat(m.source.empty() ? "" : m.source + "; ", "split-links --val ", options.val,
                                       " --test ", options.test, " --disjoint ", options.disjoint, " --seed ", options.seed);

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
