// `split-links`: a golden tiny graph, properties of random graphs against a naive reading of the
// CSC (no held-out edge left in message passing, reverses and duplicates together, counts,
// determinism), the dataset written (and renumbered by prepare), and refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph_generate/generate.hpp"
#include "graphtier/prep/link_split.hpp"
#include "graphtier/prep/prepare.hpp"
#include "test_util.hpp"

namespace graphtier::prep {
namespace {

using Pair = std::pair<int64_t, int64_t>;

/// A CSC held in vectors, viewed as the split reads it.
struct Csc {
  std::vector<int64_t> indptr;
  std::vector<int64_t> indices;
  graph::CscView view() const { return {indptr, graph::IndexSpan(std::span<const int64_t>(indices))}; }
};

/// Directed edges (src, dst) -> CSC (columns are destinations), entries in the given order.
Csc csc_of(int64_t n, const std::vector<Pair>& edges) {
  Csc c;
  c.indptr.assign(static_cast<std::size_t>(n + 1), 0);
  for (const auto& [u, v] : edges) ++c.indptr[static_cast<std::size_t>(v + 1)];
  for (int64_t v = 0; v < n; ++v) c.indptr[static_cast<std::size_t>(v + 1)] += c.indptr[static_cast<std::size_t>(v)];
  std::vector<int64_t> fill(c.indptr.begin(), c.indptr.end() - 1);
  c.indices.resize(edges.size());
  for (const auto& [u, v] : edges) c.indices[static_cast<std::size_t>(fill[static_cast<std::size_t>(v)]++)] = u;
  return c;
}

/// The directed edges of a CSC, in entry order.
std::vector<Pair> edges_of(const std::vector<int64_t>& indptr, const std::vector<int64_t>& indices) {
  std::vector<Pair> out;
  for (std::size_t v = 0; v + 1 < indptr.size(); ++v) {
    for (int64_t p = indptr[v]; p < indptr[v + 1]; ++p) out.emplace_back(indices[static_cast<std::size_t>(p)], static_cast<int64_t>(v));
  }
  return out;
}

std::vector<Pair> rows_of(const std::vector<int64_t>& flat) {
  std::vector<Pair> out;
  for (std::size_t i = 0; i + 1 < flat.size(); i += 2) out.emplace_back(flat[i], flat[i + 1]);
  return out;
}

Pair unordered(Pair p) { return {std::min(p.first, p.second), std::max(p.first, p.second)}; }

// 5 nodes: {0, 1} both ways, {1, 2} both ways with 2 -> 1 twice, 3 -> 0 only, 2 -> 4 only, a
// self-loop at 4. Five undirected edges, eight CSC entries.
const std::vector<Pair> kTiny = {{1, 0}, {3, 0}, {0, 1}, {2, 1}, {2, 1}, {1, 2}, {2, 4}, {4, 4}};

TEST(LinkSplit, GoldenTinyGraphWithoutHeldOutEdges) {
  const Csc c = csc_of(5, kTiny);
  LinkSplitOptions o;
  o.val = 0;
  o.test = 0;
  const LinkSplitResult r = split_links(c.view(), o);
  EXPECT_EQ(r.num_pairs, 5);
  EXPECT_EQ(r.indptr, c.indptr);
  EXPECT_EQ(r.indices, c.indices);
  // One row per undirected edge, in a direction the graph holds: 3 -> 0, not 0 -> 3.
  EXPECT_EQ(rows_of(r.train), (std::vector<Pair>{{0, 1}, {1, 2}, {2, 4}, {3, 0}, {4, 4}}));
  EXPECT_TRUE(r.valid.empty());
  EXPECT_TRUE(r.test.empty());
}

TEST(LinkSplit, GoldenTinyGraphCountsAndRemovals) {
  const Csc c = csc_of(5, kTiny);
  LinkSplitOptions o;
  o.val = 0.2;   // floor(0.2 * 5) = 1 pair
  o.test = 0.2;  // 1 pair
  o.disjoint = 0.5;  // floor(0.5 * 3) = 1 of the 3 training pairs
  o.seed = 3;
  const LinkSplitResult r = split_links(c.view(), o);
  ASSERT_EQ(r.valid.size(), 2u);
  ASSERT_EQ(r.test.size(), 2u);
  ASSERT_EQ(r.train.size(), 2u);
  // The two message-passing pairs are the rest, with all their entries (2 -> 1 twice when {1, 2}).
  std::set<Pair> held{unordered({r.valid[0], r.valid[1]}), unordered({r.test[0], r.test[1]}),
                      unordered({r.train[0], r.train[1]})};
  ASSERT_EQ(held.size(), 3u);
  std::vector<Pair> expected;
  for (const Pair& e : edges_of(c.indptr, c.indices)) {
    if (held.count(unordered(e)) == 0) expected.push_back(e);
  }
  EXPECT_EQ(edges_of(r.indptr, r.indices), expected);
}

/// A random multigraph: `pairs` undirected edges stored both ways, some directed-only, some
/// duplicated, a few self-loops; the entries of each column in random order.
Csc random_graph(int64_t n, int64_t pairs, uint64_t seed) {
  std::vector<Pair> edges;
  for (int64_t i = 0; i < pairs; ++i) {
    const auto u = static_cast<int64_t>(bounded_u64(philox_u64(seed, 1, static_cast<uint64_t>(i)), static_cast<uint64_t>(n)));
    const auto v = static_cast<int64_t>(bounded_u64(philox_u64(seed, 2, static_cast<uint64_t>(i)), static_cast<uint64_t>(n)));
    const uint64_t kind = philox_u64(seed, 3, static_cast<uint64_t>(i)) % 8;
    edges.emplace_back(u, v);
    if (kind != 0) edges.emplace_back(v, u);  // 1 in 8 directed only
    if (kind == 1) edges.emplace_back(u, v);  // a duplicate
  }
  std::sort(edges.begin(), edges.end(), [seed](const Pair& a, const Pair& b) {
    return philox_u64(seed, 4, static_cast<uint64_t>(a.first * 1000003 + a.second)) <
           philox_u64(seed, 4, static_cast<uint64_t>(b.first * 1000003 + b.second));
  });
  return csc_of(n, edges);
}

TEST(LinkSplit, PropertiesOnRandomGraphs) {
  for (uint64_t graph_seed = 1; graph_seed <= 4; ++graph_seed) {
    const Csc c = random_graph(60, 400, graph_seed);
    const std::vector<Pair> input = edges_of(c.indptr, c.indices);
    std::set<Pair> all_pairs, stored;
    for (const Pair& e : input) {
      all_pairs.insert(unordered(e));
      stored.insert(e);
    }
    const auto m = static_cast<int64_t>(all_pairs.size());
    for (const double disjoint : {0.0, 0.3}) {
      LinkSplitOptions o;
      o.val = 0.05;
      o.test = 0.1;
      o.disjoint = disjoint;
      o.seed = graph_seed * 7;
      const LinkSplitResult r = split_links(c.view(), o);
      SCOPED_TRACE(testing::Message() << "graph " << graph_seed << ", disjoint " << disjoint);
      const int64_t nv = static_cast<int64_t>(0.05 * static_cast<double>(m));
      const int64_t nt = static_cast<int64_t>(0.1 * static_cast<double>(m));
      const int64_t nd = static_cast<int64_t>(disjoint * static_cast<double>(m - nv - nt));
      EXPECT_EQ(r.num_pairs, m);
      EXPECT_EQ(static_cast<int64_t>(r.valid.size() / 2), nv);
      EXPECT_EQ(static_cast<int64_t>(r.test.size() / 2), nt);
      EXPECT_EQ(static_cast<int64_t>(r.train.size() / 2), disjoint > 0 ? nd : m - nv - nt);

      // Naive reference: the output CSC is the input's entries whose undirected edge is neither
      // held out nor disjoint, in the input's order.
      std::set<Pair> held;
      std::set<Pair> seen;
      for (const auto* list : {&r.valid, &r.test, &r.train}) {
        for (const Pair& row : rows_of(*list)) {
          EXPECT_TRUE(stored.count(row)) << row.first << " -> " << row.second << " is not an edge of the graph";
          EXPECT_TRUE(seen.insert(unordered(row)).second) << "edge listed twice";
          if (list != &r.train || disjoint > 0) held.insert(unordered(row));
        }
        const std::vector<Pair> rows = rows_of(*list);
        EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
      }
      if (disjoint == 0) {
        EXPECT_EQ(static_cast<int64_t>(seen.size()), m);
      }
      std::vector<Pair> expected;
      for (const Pair& e : input) {
        if (held.count(unordered(e)) == 0) expected.push_back(e);
      }
      const std::vector<Pair> output = edges_of(r.indptr, r.indices);
      EXPECT_EQ(output, expected);
      // No held-out edge, in either direction, is left for message passing.
      for (const Pair& e : output) EXPECT_EQ(held.count(unordered(e)), 0u);
      EXPECT_EQ(static_cast<int64_t>(seen.size()), disjoint > 0 ? nv + nt + nd : m);

      // Deterministic per seed; another seed draws another split.
      const LinkSplitResult again = split_links(c.view(), o);
      EXPECT_EQ(again.valid, r.valid);
      EXPECT_EQ(again.test, r.test);
      EXPECT_EQ(again.train, r.train);
      EXPECT_EQ(again.indices, r.indices);
      o.seed += 1;
      EXPECT_NE(split_links(c.view(), o).test, r.test);
    }
  }
}

TEST(LinkSplit, DoesNotDependOnTheOrderOfEntries) {
  std::vector<Pair> edges = kTiny;
  for (int64_t i = 5; i < 40; ++i) {
    edges.emplace_back(i, i - 5);
    edges.emplace_back(i - 5, i);
  }
  std::vector<Pair> reversed(edges.rbegin(), edges.rend());
  LinkSplitOptions o;
  o.val = 0.2;
  o.test = 0.2;
  o.seed = 9;
  const LinkSplitResult a = split_links(csc_of(40, edges).view(), o);
  const LinkSplitResult b = split_links(csc_of(40, reversed).view(), o);
  EXPECT_EQ(a.valid, b.valid);
  EXPECT_EQ(a.test, b.test);
  EXPECT_EQ(a.train, b.train);
}

// kTiny's entries in CSC order, with times: {0, 1} at 5 (entry 1 -> 0) and 7, {0, 3} at 2,
// {1, 2} at 9, 4 (the earliest of a duplicate) and 8, {2, 4} at 1, the self-loop at 6.
// Pair times (earliest entry): {0,1} 5, {0,3} 2, {1,2} 4, {2,4} 1, {4,4} 6.
const std::vector<int64_t> kTinyTimes = {5, 2, 7, 9, 4, 8, 1, 6};

TEST(LinkSplit, GoldenTinyGraphByTime) {
  const Csc c = csc_of(5, kTiny);
  ASSERT_EQ(c.indices, (std::vector<int64_t>{1, 3, 0, 2, 2, 1, 2, 4}));  // the times' order
  LinkSplitOptions o;
  o.val = 0.2;   // 1 pair: the second latest, {0, 1} at 5
  o.test = 0.2;  // 1 pair: the latest, the self-loop at 6
  o.by_time = true;
  for (const uint64_t seed : {0u, 1u, 2u}) {  // no tied times: the seed cannot matter
    o.seed = seed;
    const LinkSplitResult r = split_links(c.view(), o, kTinyTimes);
    EXPECT_EQ(rows_of(r.test), (std::vector<Pair>{{4, 4}}));
    EXPECT_EQ(r.test_time, (std::vector<int64_t>{6}));
    EXPECT_EQ(rows_of(r.valid), (std::vector<Pair>{{0, 1}}));  // both directions went together
    EXPECT_EQ(r.valid_time, (std::vector<int64_t>{5}));
    EXPECT_EQ(rows_of(r.train), (std::vector<Pair>{{1, 2}, {2, 4}, {3, 0}}));
    EXPECT_EQ(r.train_time, (std::vector<int64_t>{4, 1, 2}));
    // The message-passing CSC keeps its entries' own times: 3 -> 0, 2 -> 1 twice, 1 -> 2, 2 -> 4.
    EXPECT_EQ(r.indices, (std::vector<int64_t>{3, 2, 2, 1, 2}));
    EXPECT_EQ(r.edge_time, (std::vector<int64_t>{2, 9, 4, 8, 1}));
  }
  // A random split carries the same times, row by row.
  o.by_time = false;
  const LinkSplitResult r = split_links(c.view(), o, kTinyTimes);
  const std::map<Pair, int64_t> pair_time{{{0, 1}, 5}, {{3, 0}, 2}, {{1, 2}, 4}, {{2, 4}, 1}, {{4, 4}, 6}};
  for (const auto& [rows, times] : {std::pair{&r.train, &r.train_time}, {&r.valid, &r.valid_time}, {&r.test, &r.test_time}}) {
    ASSERT_EQ(rows->size(), 2 * times->size());
    for (std::size_t i = 0; i < times->size(); ++i) EXPECT_EQ((*times)[i], pair_time.at({(*rows)[2 * i], (*rows)[2 * i + 1]}));
  }
  EXPECT_TRUE(split_links(c.view(), o).edge_time.empty());
  EXPECT_TRUE(split_links(c.view(), o).train_time.empty());
}

TEST(LinkSplit, ByTimeHoldsOutTheLatestEdgesOnRandomGraphs) {
  for (uint64_t graph_seed = 1; graph_seed <= 3; ++graph_seed) {
    const Csc c = random_graph(60, 400, graph_seed);
    std::vector<int64_t> times(c.indices.size());
    for (std::size_t p = 0; p < times.size(); ++p) times[p] = static_cast<int64_t>(philox_u64(graph_seed, 9, p) % 50);
    LinkSplitOptions o;
    o.val = 0.1;
    o.test = 0.1;
    o.disjoint = 0.2;
    o.by_time = true;
    o.seed = graph_seed;
    const LinkSplitResult r = split_links(c.view(), o, times);
    SCOPED_TRACE(testing::Message() << "graph " << graph_seed);
    // Naive reference: each undirected edge's time is its entries' minimum.
    std::map<Pair, int64_t> pair_time;
    const std::vector<Pair> input = edges_of(c.indptr, c.indices);
    for (std::size_t p = 0; p < input.size(); ++p) {
      const auto [it, fresh] = pair_time.emplace(unordered(input[p]), times[p]);
      if (!fresh) it->second = std::min(it->second, times[p]);
    }
    const auto check_times = [&](const std::vector<int64_t>& rows, const std::vector<int64_t>& t) {
      ASSERT_EQ(rows.size(), 2 * t.size());
      for (std::size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i], pair_time.at(unordered({rows[2 * i], rows[2 * i + 1]})));
    };
    check_times(r.train, r.train_time);
    check_times(r.valid, r.valid_time);
    check_times(r.test, r.test_time);
    // Every test edge is at least as late as every validation edge, which are at least as late as
    // every training or message-passing edge.
    const int64_t test_min = *std::min_element(r.test_time.begin(), r.test_time.end());
    const int64_t valid_max = *std::max_element(r.valid_time.begin(), r.valid_time.end());
    const int64_t valid_min = *std::min_element(r.valid_time.begin(), r.valid_time.end());
    EXPECT_LE(valid_max, test_min);
    for (const int64_t t : r.train_time) EXPECT_LE(t, valid_min);
    std::set<Pair> held;
    for (const auto* list : {&r.valid, &r.test, &r.train}) {
      for (const Pair& row : rows_of(*list)) held.insert(unordered(row));
    }
    const std::vector<Pair> output = edges_of(r.indptr, r.indices);
    ASSERT_EQ(output.size(), r.edge_time.size());
    for (std::size_t p = 0; p < output.size(); ++p) {
      EXPECT_EQ(held.count(unordered(output[p])), 0u);
      EXPECT_LE(pair_time.at(unordered(output[p])), valid_min);
    }
    // The entries' own times, in the input's order: the kept entries' subsequence.
    std::vector<int64_t> expected;
    for (std::size_t p = 0; p < input.size(); ++p) {
      if (held.count(unordered(input[p])) == 0) expected.push_back(times[p]);
    }
    EXPECT_EQ(r.edge_time, expected);
    // Deterministic.
    const LinkSplitResult again = split_links(c.view(), o, times);
    EXPECT_EQ(again.test, r.test);
    EXPECT_EQ(again.train, r.train);
  }
}

TEST(LinkSplit, ByTimeNeedsTimes) {
  const Csc c = csc_of(5, kTiny);
  LinkSplitOptions o;
  o.by_time = true;
  try {
    split_links(c.view(), o);
    ADD_FAILURE() << "split by time without times";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("--by-time"), std::string::npos) << e.what();
  }
  const std::vector<int64_t> short_times(3, 0);
  EXPECT_THROW(split_links(c.view(), LinkSplitOptions{}, short_times), InvalidArgument);
}

TEST(LinkSplit, RefusesBadFractionsAndTooFewEdges) {
  const Csc c = csc_of(5, kTiny);
  const auto refused = [&](double val, double test, double disjoint, const std::string& text) {
    LinkSplitOptions o;
    o.val = val;
    o.test = test;
    o.disjoint = disjoint;
    try {
      split_links(c.view(), o);
      ADD_FAILURE() << "accepted val " << val << " test " << test << " disjoint " << disjoint;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  refused(1.5, 0.1, 0, "--val must be a fraction in [0, 1)");
  refused(0.1, -0.1, 0, "--test must be a fraction in [0, 1)");
  refused(0.1, 0.1, 1.0, "--disjoint must be a fraction in [0, 1)");
  refused(0.6, 0.4, 0, "--val + --test must be below 1");
  // floor(v * M) + floor(t * M) < M and floor(d * T) < T: fractions below 1 always leave a
  // message-passing edge, here 1 of 5.
  LinkSplitOptions o;
  o.val = 0.4;
  o.test = 0.4;
  o.disjoint = 0.99;
  const LinkSplitResult r = split_links(c.view(), o);
  EXPECT_EQ(r.train.size(), 2u);  // floor(0.99 * 1) = 0 disjoint: the one message-passing pair
  EXPECT_FALSE(r.indices.empty());
  const Csc empty = csc_of(3, {});
  try {
    split_links(empty.view(), LinkSplitOptions{});
    ADD_FAILURE() << "a graph without edges was split";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("no edges"), std::string::npos) << e.what();
  }
}

std::string make_link_input(const test::TempDir& tmp) {
  graph::GenerateOptions o;
  o.num_nodes = 500;
  o.num_edges = 4000;
  o.num_classes = 3;
  o.feature_dim = 8;
  o.undirected = true;
  o.seed = 5;
  ThreadPool pool(2);
  graph::generate_dataset(tmp / "in", o, pool);
  return tmp / "in";
}

std::set<Pair> rows_set(std::span<const int64_t> flat) {
  std::set<Pair> out;
  for (std::size_t i = 0; i + 1 < flat.size(); i += 2) out.emplace(flat[i], flat[i + 1]);
  return out;
}

TEST(LinkSplitDataset, WritesTheSplitAndKeepsTheNodeArrays) {
  test::TempDir tmp;
  const std::string in_dir = make_link_input(tmp);
  LinkSplitOptions o;
  o.disjoint = 0.3;
  o.seed = 4;
  const LinkSplitReport report = split_links_dataset(in_dir, tmp / "out", o);
  const graph::Dataset in = graph::Dataset::open(in_dir);
  const graph::Dataset out = graph::Dataset::open(tmp / "out");
  out.verify_checksums();
  ASSERT_TRUE(out.has_link_split());
  EXPECT_FALSE(in.has_link_split());
  EXPECT_TRUE(in.link_edges(graph::Split::kTest).empty());
  const graph::LinkSplit& links = *out.manifest().links;
  EXPECT_EQ(links.seed, 4u);
  EXPECT_DOUBLE_EQ(links.disjoint, 0.3);
  EXPECT_EQ(links.num_valid, report.links.num_valid);
  EXPECT_EQ(static_cast<int64_t>(out.link_edges(graph::Split::kValid).size()), 2 * links.num_valid);
  EXPECT_EQ(static_cast<int64_t>(out.link_edges(graph::Split::kTrain).size()), 2 * links.num_train);
  EXPECT_GT(links.num_test, 0);
  EXPECT_EQ(out.num_edges(), report.num_message_edges);
  EXPECT_LT(out.num_edges(), in.num_edges());

  // The same split as in memory.
  const LinkSplitResult r = split_links(graph::CscView::of(in), o);
  EXPECT_EQ(std::vector<int64_t>(out.link_edges(graph::Split::kTest).begin(), out.link_edges(graph::Split::kTest).end()), r.test);
  EXPECT_EQ(std::vector<int64_t>(out.indptr().begin(), out.indptr().end()), r.indptr);

  // Node arrays unchanged.
  ASSERT_EQ(out.feature_bytes().size(), in.feature_bytes().size());
  EXPECT_TRUE(std::equal(in.feature_bytes().begin(), in.feature_bytes().end(), out.feature_bytes().begin()));
  EXPECT_TRUE(std::equal(in.labels().begin(), in.labels().end(), out.labels().begin(), out.labels().end()));
  EXPECT_TRUE(std::equal(in.split(graph::Split::kTrain).begin(), in.split(graph::Split::kTrain).end(),
                         out.split(graph::Split::kTrain).begin(), out.split(graph::Split::kTrain).end()));

  // Refusals: a split dataset again, an existing output.
  EXPECT_THROW(split_links_dataset(tmp / "out", tmp / "again", o), InvalidArgument);
  EXPECT_THROW(split_links_dataset(in_dir, tmp / "out", o), InvalidArgument);

  // prepare renumbers the seed edges with the nodes: mapped back, they are the same edges.
  PrepareOptions po;
  po.method = HotnessMethod::kDegree;
  ThreadPool pool(2);
  prepare_dataset(tmp / "out", tmp / "prepared", po, pool);
  const graph::Dataset prepared = graph::Dataset::open(tmp / "prepared");
  ASSERT_TRUE(prepared.has_link_split());
  for (graph::Split s : {graph::Split::kTrain, graph::Split::kValid, graph::Split::kTest}) {
    const auto edges = prepared.link_edges(s);
    std::vector<int64_t> original(edges.size());
    prepared.to_original(edges, original);
    EXPECT_EQ(rows_set(original), rows_set(out.link_edges(s)));
    const std::vector<Pair> rows = rows_of(std::vector<int64_t>(edges.begin(), edges.end()));
    EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
  }
}

/// (src, dst, time) of each row of split `s`, its ids mapped back to the original numbering.
std::set<std::tuple<int64_t, int64_t, int64_t>> timed_rows(const graph::Dataset& d, graph::Split s) {
  const auto edges = d.link_edges(s);
  const auto times = d.link_time(s);
  std::vector<int64_t> original(edges.size());
  d.to_original(edges, original);
  std::set<std::tuple<int64_t, int64_t, int64_t>> out;
  for (std::size_t i = 0; i < times.size(); ++i) out.emplace(original[2 * i], original[2 * i + 1], times[i]);
  return out;
}

TEST(LinkSplitDataset, CarriesEdgeTimesAndPrepareKeepsThemWithTheirRows) {
  test::TempDir tmp;
  graph::GenerateOptions g;
  g.num_nodes = 400;
  g.num_edges = 3000;
  g.num_classes = 3;
  g.feature_dim = 4;
  g.time_steps = 20;
  g.seed = 2;
  ThreadPool pool(2);
  graph::generate_dataset(tmp / "in", g, pool);
  LinkSplitOptions o;
  o.by_time = true;
  o.seed = 1;
  split_links_dataset(tmp / "in", tmp / "out", o);
  const graph::Dataset in = graph::Dataset::open(tmp / "in");
  const graph::Dataset out = graph::Dataset::open(tmp / "out");
  out.verify_checksums();
  ASSERT_TRUE(out.has_link_time());
  EXPECT_TRUE(out.manifest().links->by_time);
  const LinkSplitResult r = split_links(graph::CscView::of(in), o, in.edge_time());
  EXPECT_TRUE(std::equal(r.edge_time.begin(), r.edge_time.end(), out.edge_time().begin(), out.edge_time().end()));
  for (graph::Split s : {graph::Split::kTrain, graph::Split::kValid, graph::Split::kTest}) {
    EXPECT_EQ(out.link_time(s).size() * 2, out.link_edges(s).size());
  }
  EXPECT_TRUE(std::equal(r.test_time.begin(), r.test_time.end(), out.link_time(graph::Split::kTest).begin(),
                         out.link_time(graph::Split::kTest).end()));
  EXPECT_TRUE(std::equal(in.node_time().begin(), in.node_time().end(), out.node_time().begin(), out.node_time().end()));

  // Without --by-time a timed dataset is split at random, its times still carried.
  LinkSplitOptions random = o;
  random.by_time = false;
  split_links_dataset(tmp / "in", tmp / "random", random);
  EXPECT_TRUE(graph::Dataset::open(tmp / "random").has_link_time());
  EXPECT_FALSE(graph::Dataset::open(tmp / "random").manifest().links->by_time);
  // --by-time needs edge times.
  EXPECT_THROW(split_links_dataset(make_link_input(tmp), tmp / "untimed", o), InvalidArgument);

  // prepare renumbers the rows and sorts them again: each keeps its time.
  PrepareOptions po;
  po.method = HotnessMethod::kDegree;
  prepare_dataset(tmp / "out", tmp / "prepared", po, pool);
  const graph::Dataset prepared = graph::Dataset::open(tmp / "prepared");
  ASSERT_TRUE(prepared.has_link_time());
  for (graph::Split s : {graph::Split::kTrain, graph::Split::kValid, graph::Split::kTest}) {
    EXPECT_EQ(timed_rows(prepared, s), timed_rows(out, s));
  }
}

}  // namespace
}  // namespace graphtier::prep
