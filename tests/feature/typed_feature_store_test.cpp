// A typed dataset's feature tables through TypedFeatureStore: every type's rows byte exact from its
// own table (its own dim and dtype), the budgets shared between the types, and ids of another
// type, types without features and homogeneous datasets refused.
#include "graphtier/feature/typed_feature_store.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "feature/feature_test_util.hpp"
#include "graphtier/core/error.hpp"
#include "test_util.hpp"

namespace graphtier::feature {
namespace {

using test::uniform_ids;

// paper [0, 500): 24 float32 values a row; author [500, 800): 8 float16 values; field [800, 840):
// no features. No edges: the store reads no topology. Hotness puts the authors' first rows ahead.
std::string typed_dataset(const test::TempDir& tmp) {
  const std::string dir = tmp / "typed";
  graph::Manifest m;
  m.num_nodes = 840;
  graph::HeteroSchema& s = m.hetero;
  s.node_types = {{"paper", graph::FeatureLayout::make(24, DType::kFloat32, 0)},
                  {"author", graph::FeatureLayout::make(8, DType::kFloat16, 0)},
                  {"field", {}}};
  s.node_type_offset = {0, 500, 800, 840};
  s.relations = {{"cites", {0, 0}, -1}};
  graph::DatasetWriter w(dir, false);
  w.write_array("indptr", std::span<const int64_t>(std::vector<int64_t>(841, 0)));
  w.write_array("indices", std::span<const int32_t>());
  w.write_array("type_per_edge", std::span<const uint8_t>());
  std::vector<std::byte> paper(500 * 24 * 4);
  std::vector<std::byte> author(300 * 8 * 2);
  for (std::size_t i = 0; i < paper.size(); ++i) paper[i] = static_cast<std::byte>(i * 7 + 1);
  for (std::size_t i = 0; i < author.size(); ++i) author[i] = static_cast<std::byte>(i * 13 + 5);
  w.write_array(graph::HeteroSchema::feature_array("paper"), std::span<const std::byte>(paper));
  w.write_array(graph::HeteroSchema::feature_array("author"), std::span<const std::byte>(author));
  std::vector<double> hotness(840, 1.0);
  for (int64_t v = 500; v < 800; ++v) hotness[static_cast<std::size_t>(v)] = v < 520 ? 1000.0 : 1.0;
  w.write_array("hotness", std::span<const double>(hotness));
  m.hotness = "test";
  w.commit(m);
  return dir;
}

std::vector<std::byte> gather(const TypedFeatureStore& store, int32_t type, std::span<const int64_t> ids) {
  const FeatureStore& s = *store.store(type);
  std::vector<std::byte> out(ids.size() * static_cast<std::size_t>(s.layout().row_bytes()));
  store.gather(type, ids, TensorView::contiguous(out.data(), s.layout().dtype,
                                                 {static_cast<int64_t>(ids.size()), s.layout().dim}));
  return out;
}

std::vector<std::byte> expected(const graph::Dataset& d, int32_t type, std::span<const int64_t> ids) {
  const std::span<const std::byte> table = d.type_feature_bytes(type);
  const graph::FeatureLayout& layout = d.schema().node_types[static_cast<std::size_t>(type)].features;
  const int64_t offset = d.schema().node_type_offset[static_cast<std::size_t>(type)];
  std::vector<std::byte> out;
  for (const int64_t v : ids) {
    const std::byte* row = table.data() + (v - offset) * layout.row_stride;
    out.insert(out.end(), row, row + layout.row_bytes());
  }
  return out;
}

TEST(TypedFeatureStore, EveryTypeServesItsOwnTableByteExact) {
  const test::TempDir tmp;
  const graph::Dataset d = graph::Dataset::open(typed_dataset(tmp));
  ThreadPool pool(2);
  FeatureStoreOptions options;
  options.budgets.cpu_buffer = Budget::percent(30);
  options.budgets.host_cache = Budget::percent(10);
  options.io_depth = 4;
  const TypedFeatureStore store(d, options, pool);
  ASSERT_EQ(store.num_types(), 3);
  EXPECT_EQ(store.store(2), nullptr);
  EXPECT_EQ(store.store(0)->layout().dim, 24);
  EXPECT_EQ(store.store(1)->layout().dtype, DType::kFloat16);
  for (int32_t type : {0, 1}) {
    std::vector<int64_t> ids = uniform_ids(300, store.store(type)->num_nodes(), 3 + type);
    for (int64_t& v : ids) v += store.offset(type);
    ASSERT_EQ(gather(store, type, ids), expected(d, type, ids)) << "type " << type;
    const GatherStats s = store.store(type)->last_gather();
    EXPECT_EQ(s.host.rows + s.host_cache.rows + s.storage.rows, 300);
  }
  // 30% of the 52 800 bytes (48 000 of papers, 4 800 of authors) is 15 840: the 20 hot authors
  // first (1000 reads in 16 bytes), then the other authors (1 in 16) before any paper (1 in 96):
  // all 300 authors (4 800 bytes), then 115 papers. The host cache (10%: 5 280 bytes) goes to the
  // papers, the only type with rows left on storage: 55 lines.
  EXPECT_EQ(store.store(1)->tiers().ranges.cpu_end, 300);
  EXPECT_EQ(store.store(0)->tiers().ranges.cpu_end, (15840 - 4800) / 96);
  EXPECT_EQ(store.store(0)->tiers().host_cache_rows, 55);
  EXPECT_EQ(store.store(1)->tiers().host_cache_rows, 0) << "no author row is left beyond the host tier";
}

TEST(TypedFeatureStore, RefusesIdsOfAnotherTypeTypesWithoutFeaturesAndHomogeneousDatasets) {
  const test::TempDir tmp;
  const graph::Dataset d = graph::Dataset::open(typed_dataset(tmp));
  ThreadPool pool(2);
  const TypedFeatureStore store(d, FeatureStoreOptions{}, pool);
  const std::vector<int64_t> author_id = {499, 500};
  EXPECT_THROW(gather(store, 1, author_id), OutOfRange) << "499 is a paper";
  std::vector<std::byte> out(8);
  const std::vector<int64_t> field_id = {810};
  EXPECT_THROW(store.gather(2, field_id, TensorView::contiguous(out.data(), DType::kFloat32, {1, 2})),
               InvalidArgument);
  EXPECT_THROW(store.store(3), OutOfRange);
  const graph::Dataset plain = graph::Dataset::open(test::feature_dataset(100, 4, DType::kFloat32, 0));
  EXPECT_THROW(TypedFeatureStore(plain, FeatureStoreOptions{}, pool), InvalidArgument);
}

}  // namespace
}  // namespace graphtier::feature
