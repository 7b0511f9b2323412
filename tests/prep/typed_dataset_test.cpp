// `prepare` and `partition` on a typed dataset (docs/format.md, Heterogeneous datasets). prepare:
// nodes are renumbered within their type's range, type_per_edge moves with its edges and stays
// sorted within each column, per-type feature tables, labels and splits follow, and
// permutation.bin maps back to the input. partition: every rank's graph/ keeps the types, its
// edges' relations sliced with them. The input is a seeded random typed graph; every property is
// checked against it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "graphtier/graph/dataset.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/prep/partition.hpp"
#include "graphtier/prep/prepare.hpp"
#include "test_util.hpp"

namespace graphtier::prep {
namespace {

// Types: 0 "paper" 40 nodes (labelled, 3-d float32 features), 1 "author" 25 nodes (no features),
// 2 "field" 6 nodes (2-d float32 features, 512-byte alignment). Relations: 0 paper:cites:paper,
// 1 author:writes:paper, 2 paper:written_by:author (reverse of 1), 3 paper:has:field,
// 4 paper:cites_too:paper (so that two relations share both types and a column holds both).
const std::vector<int64_t> kOffset{0, 40, 65, 71};
const std::vector<graph::RelationTypes> kRelations{{0, 0}, {1, 0}, {0, 1}, {0, 2}, {0, 0}};

using TypedEdge = std::tuple<int64_t, int64_t, int>;  // (src, dst, relation)

float feature_value(int64_t v, int64_t j) { return static_cast<float>(v * 10 + j); }

/// Writes the random typed graph (with the per-type feature tables unless told not to); returns
/// its edges.
std::vector<TypedEdge> write_input(const std::string& dir, bool features = true) {
  std::mt19937_64 rng(5);
  std::vector<std::tuple<int64_t, int, int64_t>> by_column;  // (dst, relation, src)
  for (int r = 0; r < static_cast<int>(kRelations.size()); ++r) {
    const auto [s, d] = kRelations[static_cast<std::size_t>(r)];
    for (int k = 0; k < 60; ++k) {
      const int64_t src = kOffset[s] + static_cast<int64_t>(rng() % static_cast<uint64_t>(kOffset[s + 1] - kOffset[s]));
      const int64_t dst = kOffset[d] + static_cast<int64_t>(rng() % static_cast<uint64_t>(kOffset[d + 1] - kOffset[d]));
      by_column.emplace_back(dst, r, src);
    }
  }
  std::sort(by_column.begin(), by_column.end());
  by_column.erase(std::unique(by_column.begin(), by_column.end()), by_column.end());
  const int64_t n = kOffset.back();
  std::vector<int64_t> indptr(static_cast<std::size_t>(n) + 1, 0);
  std::vector<int32_t> indices;
  std::vector<uint8_t> types;
  std::vector<TypedEdge> edges;
  for (const auto& [dst, r, src] : by_column) {
    ++indptr[static_cast<std::size_t>(dst) + 1];
    indices.push_back(static_cast<int32_t>(src));
    types.push_back(static_cast<uint8_t>(r));
    edges.emplace_back(src, dst, r);
  }
  for (std::size_t v = 0; v < static_cast<std::size_t>(n); ++v) indptr[v + 1] += indptr[v];

  graph::Manifest m;
  m.num_nodes = n;
  m.num_edges = static_cast<int64_t>(indices.size());
  m.num_classes = 3;
  auto& s = m.hetero;
  s.node_types = {{"paper", graph::FeatureLayout::make(3, DType::kFloat32, 0)},
                  {"author", {}},
                  {"field", graph::FeatureLayout::make(2, DType::kFloat32, 512)}};
  s.node_type_offset = kOffset;
  s.relations = {{"cites", kRelations[0], -1}, {"writes", kRelations[1], 2}, {"written_by", kRelations[2], 1},
                 {"has", kRelations[3], -1}, {"cites_too", kRelations[4], -1}};
  s.labelled_type = 0;
  if (!features) {
    for (auto& type : s.node_types) type.features = {};
  }

  graph::DatasetWriter w(dir, false);
  w.write_array("indptr", std::span<const int64_t>(indptr));
  w.write_array("indices", std::span<const int32_t>(indices));
  w.write_array("type_per_edge", std::span<const uint8_t>(types));
  for (int32_t t : {0, 2}) {
    const graph::FeatureLayout& f = s.node_types[static_cast<std::size_t>(t)].features;
    if (f.dim == 0) continue;
    std::vector<std::byte> table(static_cast<std::size_t>(s.num_nodes_of(t) * f.row_stride));
    for (int64_t i = 0; i < s.num_nodes_of(t); ++i) {
      for (int64_t j = 0; j < f.dim; ++j) {
        const float x = feature_value(kOffset[static_cast<std::size_t>(t)] + i, j);
        std::memcpy(table.data() + i * f.row_stride + j * 4, &x, 4);
      }
    }
    w.write_array(graph::HeteroSchema::feature_array(s.node_types[static_cast<std::size_t>(t)].name),
                  std::span<const std::byte>(table));
  }
  std::vector<int32_t> labels(static_cast<std::size_t>(n), -1);
  for (int64_t v = 0; v < 40; ++v) labels[static_cast<std::size_t>(v)] = static_cast<int32_t>(v % 3);
  w.write_array("labels", std::span<const int32_t>(labels));
  const std::vector<int64_t> train{0, 5, 9, 33}, valid{2, 39}, test{7};
  w.write_array("train", std::span<const int64_t>(train));
  w.write_array("valid", std::span<const int64_t>(valid));
  w.write_array("test", std::span<const int64_t>(test));
  w.commit(m);
  return edges;
}

class PrepareTypedTest : public ::testing::TestWithParam<HotnessMethod> {};

TEST_P(PrepareTypedTest, RenumbersWithinTypesAndEverythingMapsBack) {
  test::TempDir tmp;
  std::vector<TypedEdge> input_edges = write_input(tmp / "in");
  PrepareOptions o;
  o.method = GetParam();
  ThreadPool pool(2);
  prepare_dataset(tmp / "in", tmp / "out", o, pool);
  const graph::Dataset in = graph::Dataset::open(tmp / "in");
  const graph::Dataset out = graph::Dataset::open(tmp / "out");  // checks the typed invariants
  ASSERT_TRUE(out.is_hetero());
  EXPECT_EQ(out.schema().node_type_offset, kOffset);
  ASSERT_TRUE(out.has_permutation());
  const auto perm = out.permutation();  // new id -> input id

  // Every node keeps its type's range; the ids were really reordered.
  int64_t moved = 0;
  for (int64_t v = 0; v < out.num_nodes(); ++v) {
    EXPECT_EQ(out.schema().type_of(v), in.schema().type_of(perm[v])) << v;
    moved += perm[v] != v;
  }
  EXPECT_GT(moved, 0);

  // Hotness is non-increasing within each type.
  const auto hotness = out.hotness();
  for (std::size_t t = 0; t + 1 < kOffset.size(); ++t) {
    for (int64_t v = kOffset[t] + 1; v < kOffset[t + 1]; ++v) EXPECT_GE(hotness[v - 1], hotness[v]) << v;
  }

  // The typed edges map back to the input's, relation by relation; within each column the
  // relations never decrease (also checked by open()).
  std::vector<TypedEdge> mapped;
  const auto indptr = out.indptr();
  const auto indices = std::get<std::span<const int32_t>>(out.indices());
  const auto types = out.hetero().type_per_edge;
  for (int64_t v = 0; v < out.num_nodes(); ++v) {
    for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
      if (e > indptr[v]) {
        EXPECT_LE(types[e - 1], types[e]);
      }
      mapped.emplace_back(perm[indices[e]], perm[v], types[e]);
    }
  }
  std::sort(mapped.begin(), mapped.end());
  std::sort(input_edges.begin(), input_edges.end());
  EXPECT_EQ(mapped, input_edges);

  // Per-type feature rows, labels and splits follow their nodes.
  for (int32_t t : {0, 2}) {
    const auto& f = out.schema().node_types[static_cast<std::size_t>(t)].features;
    const auto bytes = out.type_feature_bytes(t);
    for (int64_t i = 0; i < out.schema().num_nodes_of(t); ++i) {
      for (int64_t j = 0; j < f.dim; ++j) {
        float x;
        std::memcpy(&x, bytes.data() + i * f.row_stride + j * 4, 4);
        EXPECT_EQ(x, feature_value(perm[kOffset[static_cast<std::size_t>(t)] + i], j)) << t << " " << i;
      }
    }
  }
  for (int64_t v = 0; v < out.num_nodes(); ++v) EXPECT_EQ(out.labels()[v], in.labels()[perm[v]]);
  for (graph::Split s : {graph::Split::kTrain, graph::Split::kValid, graph::Split::kTest}) {
    std::vector<int64_t> back;
    for (const int64_t v : out.split(s)) back.push_back(perm[v]);
    std::sort(back.begin(), back.end());
    EXPECT_EQ(back, std::vector<int64_t>(in.split(s).begin(), in.split(s).end()));
  }
  EXPECT_NO_THROW(out.verify_checksums());
}

/// The typed edges of a dataset, as (src, dst, relation).
std::vector<TypedEdge> typed_edges(const graph::Dataset& d) {
  std::vector<TypedEdge> edges;
  const auto indptr = d.indptr();
  const auto indices = std::get<std::span<const int32_t>>(d.indices());
  for (int64_t v = 0; v < d.num_nodes(); ++v) {
    for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) edges.emplace_back(indices[e], v, d.hetero().type_per_edge[e]);
  }
  return edges;
}

TEST(PartitionTyped, EveryRankKeepsTheTypesReplicatedOrPartitioned) {
  test::TempDir tmp;
  std::vector<TypedEdge> input = write_input(tmp / "in", /*features=*/false);
  std::sort(input.begin(), input.end());
  ThreadPool pool(2);
  for (const PartitionGraph mode : {PartitionGraph::kReplicated, PartitionGraph::kPartitioned}) {
    PartitionOptions o;
    o.ranks = 2;
    o.graph = mode;
    const std::string out = tmp / std::string(partition_graph_name(mode));
    write_partition(tmp / "in", out, o, pool);
    EXPECT_NO_THROW(verify_partition(out, tmp / "in"));
    std::vector<TypedEdge> all;
    for (const char* rank : {"/rank-0000/graph", "/rank-0001/graph"}) {
      const graph::Dataset g = graph::Dataset::open(out + rank);  // checks the typed invariants
      ASSERT_TRUE(g.is_hetero());
      EXPECT_EQ(g.schema().node_type_offset, kOffset);
      EXPECT_EQ(g.schema().relation_name(2), "paper:written_by:author");
      const auto edges = typed_edges(g);
      all.insert(all.end(), edges.begin(), edges.end());
    }
    std::sort(all.begin(), all.end());
    if (mode == PartitionGraph::kPartitioned) {
      EXPECT_EQ(all, input);  // the block rows cover the edges once
    } else {
      all.erase(std::unique(all.begin(), all.end()), all.end());
      EXPECT_EQ(all, input);  // each rank holds them all
    }
  }
}

TEST(PartitionTyped, SplitsEachTypeTableByItsOwnRows) {
  test::TempDir tmp;
  write_input(tmp / "in");
  const graph::Dataset source = graph::Dataset::open(tmp / "in");
  ThreadPool pool(2);
  PartitionOptions o;
  o.ranks = 4;
  o.replication = 2;
  const PartitionLayout l = write_partition(tmp / "in", tmp / "out", o, pool).layout;
  EXPECT_NO_THROW(verify_partition(tmp / "out", tmp / "in"));
  ASSERT_TRUE(l.typed());
  EXPECT_TRUE(l.feature_bounds.empty());
  // Each type's range in two halves (field: 6 rows, 3 each; alignment kept with the rows).
  EXPECT_EQ(l.type_feature_bounds, (std::vector<std::vector<int64_t>>{{0, 20, 40}, {40, 52, 65}, {65, 68, 71}}));
  for (int64_t k = 0; k < 4; ++k) {
    const int64_t row = k / 2;
    const graph::Dataset f = graph::Dataset::open(tmp / ("out/rank-000" + std::to_string(k) + "/features"));
    ASSERT_TRUE(f.is_hetero());
    EXPECT_EQ(f.num_edges(), 0);
    EXPECT_EQ(f.schema().labelled_type, -1);
    for (int32_t t = 0; t < 3; ++t) {
      const auto& b = l.type_feature_bounds[static_cast<size_t>(t)];
      const int64_t lo = b[static_cast<size_t>(row)], hi = b[static_cast<size_t>(row + 1)];
      EXPECT_EQ(f.schema().num_nodes_of(t), hi - lo);
      const graph::FeatureLayout& layout = source.schema().node_types[static_cast<size_t>(t)].features;
      ASSERT_EQ(f.schema().node_types[static_cast<size_t>(t)].features.row_stride, layout.row_stride);
      if (layout.dim == 0) continue;  // author: no table on either side
      const auto mine = f.type_feature_bytes(t);
      const auto whole = source.type_feature_bytes(t);
      const auto first = static_cast<size_t>((lo - kOffset[static_cast<size_t>(t)]) * layout.row_stride);
      ASSERT_EQ(mine.size(), static_cast<size_t>((hi - lo) * layout.row_stride));
      EXPECT_EQ(std::memcmp(mine.data(), whole.data() + first, mine.size()), 0) << "rank " << k << " type " << t;
    }
  }
  // The graph keeps its types, without the tables (they are in features/).
  const graph::Dataset g = graph::Dataset::open(tmp / "out/rank-0003/graph");
  EXPECT_TRUE(g.is_hetero());
  for (const graph::NodeTypeEntry& type : g.schema().node_types) EXPECT_EQ(type.features.dim, 0) << type.name;
}

TEST(PartitionTyped, RefusesReplicatedRowsAndHotnessBalanceNamingTheOption) {
  test::TempDir tmp;
  write_input(tmp / "in");
  ThreadPool pool(2);
  const auto refusal = [&](PartitionOptions o) {
    o.ranks = 2;
    try {
      write_partition(tmp / "in", tmp / "out", o, pool);
    } catch (const Unsupported& e) {
      return std::string(e.what());
    }
    return std::string("(partitioned)");
  };
  PartitionOptions hot;
  hot.hot_rows.count = 3;
  EXPECT_NE(refusal(hot).find("--hot-replicated (3 rows) does not replicate per-type rows yet"), std::string::npos)
      << refusal(hot);
  PartitionOptions hotness;
  hotness.balance = PartitionBalance::kHotness;
  EXPECT_NE(refusal(hotness).find("--balance hotness does not split per-type tables yet"), std::string::npos)
      << refusal(hotness);
}

INSTANTIATE_TEST_SUITE_P(Methods, PrepareTypedTest,
                         ::testing::Values(HotnessMethod::kDegree, HotnessMethod::kWeightedReversePageRank));

}  // namespace
}  // namespace graphtier::prep
