// A typed dataset through the loader: each batch is make_sampler's per-relation minibatch of its
// seeds and stream, split by node type and relation (hetero_blocks), with each type's features
// from a TypedFeatureStore byte exact (none for a type without a table); relation_fanouts by
// relation name, and the refusals that name the bad entry. The feature path is the one-table
// path per type: each type's window announcements reach its own store's caches, merged gathers
// serve every batch its own rows, and pinned and device output equal host output.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/loader/loader.hpp"
#include "graphtier/sample/epoch.hpp"
#include "feature/feature_test_util.hpp"
#include "test_util.hpp"

namespace graphtier::loader {
namespace {

// Papers 0..3 (float32, 3 a row), authors 4..6 (float32, 2 a row), institutes none (no rows, no
// table). Relations: 0 paper:cites:paper, 1 author:writes:paper, 2 paper:written_by:author,
// 3 institute:affiliated:author (no edges). CSC columns: 0 <- cites 1, 2, 3, writes 4, 5;
// 1 <- cites 0, writes 4; 2 <- cites 3, writes 6; 3 none; 4 <- written_by 0, 1; 5 <- written_by 0;
// 6 <- written_by 2.
std::string typed_dataset(const test::TempDir& tmp) {
  const std::string dir = tmp / "typed";
  graph::Manifest m;
  m.num_nodes = 7;
  m.num_edges = 13;
  graph::HeteroSchema& s = m.hetero;
  s.node_types = {{"paper", graph::FeatureLayout::make(3, DType::kFloat32, 0)},
                  {"author", graph::FeatureLayout::make(2, DType::kFloat32, 0)},
                  {"institute", {}}};
  s.node_type_offset = {0, 4, 7, 7};
  s.relations = {{"cites", {0, 0}, -1}, {"writes", {1, 0}, 2}, {"written_by", {0, 1}, 1}, {"affiliated", {2, 1}, -1}};
  graph::DatasetWriter w(dir, false);
  w.write_array("indptr", std::span<const int64_t>(std::vector<int64_t>{0, 5, 7, 9, 9, 11, 12, 13}));
  w.write_array("indices", std::span<const int32_t>(std::vector<int32_t>{1, 2, 3, 4, 5, 0, 4, 3, 6, 0, 1, 0, 2}));
  w.write_array("type_per_edge", std::span<const uint8_t>(std::vector<uint8_t>{0, 0, 0, 1, 1, 0, 1, 0, 1, 2, 2, 2, 2}));
  std::vector<float> paper(4 * 3), author(3 * 2);
  for (std::size_t i = 0; i < paper.size(); ++i) paper[i] = 10.0f + static_cast<float>(i);
  for (std::size_t i = 0; i < author.size(); ++i) author[i] = -1.0f - static_cast<float>(i);
  w.write_array(graph::HeteroSchema::feature_array("paper"), std::span<const float>(paper));
  w.write_array(graph::HeteroSchema::feature_array("author"), std::span<const float>(author));
  w.commit(m);
  return dir;
}

/// A float32 view's rows on the host, wherever the loader wrote them.
std::vector<float> rows_of(const TensorView& x) {
  std::vector<float> out(static_cast<std::size_t>(x.shape[0] * x.shape[1]));
  if (!out.empty()) copy_bytes(out.data(), MemoryKind::kHost, x.data, x.memory, out.size() * sizeof(float));
  return out;
}

// A ring of kRing papers (ids 0 ..; float32, 4 a row, row v = 100 v + k) and kRing authors (ids
// kRing ..; float32, 2 a row, local row a = -1 - (100 a + k)). Paper j cites paper j + 1 and is
// written by authors j - 1 and j (mod kRing). With fanouts {-1} and batches of papers {2k, 2k+1} in
// order, batch k reads papers 2k .. 2k+2 and authors 2k-1 .. 2k+1: neighbouring batches share one
// row of each type, and batch 0 and the last share paper 0 and author kRing - 1.
constexpr int64_t kRing = 40;

std::string ring_dataset(const test::TempDir& tmp) {
  const std::string dir = tmp / "ring";
  graph::Manifest m;
  m.num_nodes = 2 * kRing;
  m.num_edges = 3 * kRing;
  graph::HeteroSchema& s = m.hetero;
  s.node_types = {{"paper", graph::FeatureLayout::make(4, DType::kFloat32, 0)},
                  {"author", graph::FeatureLayout::make(2, DType::kFloat32, 0)}};
  s.node_type_offset = {0, kRing, 2 * kRing};
  s.relations = {{"cites", {0, 0}, -1}, {"writes", {1, 0}, -1}};
  std::vector<int64_t> indptr;
  std::vector<int32_t> indices;
  std::vector<uint8_t> types;
  for (int64_t j = 0; j <= 2 * kRing; ++j) indptr.push_back(3 * std::min(j, kRing));
  for (int64_t j = 0; j < kRing; ++j) {
    const int64_t before = (j + kRing - 1) % kRing;
    indices.push_back(static_cast<int32_t>((j + 1) % kRing));
    indices.push_back(static_cast<int32_t>(kRing + std::min(j, before)));
    indices.push_back(static_cast<int32_t>(kRing + std::max(j, before)));
    types.insert(types.end(), {0, 1, 1});
  }
  graph::DatasetWriter w(dir, false);
  w.write_array("indptr", std::span<const int64_t>(indptr));
  w.write_array("indices", std::span<const int32_t>(indices));
  w.write_array("type_per_edge", std::span<const uint8_t>(types));
  std::vector<float> paper, author;
  for (int64_t v = 0; v < kRing; ++v) {
    for (int k = 0; k < 4; ++k) paper.push_back(static_cast<float>(100 * v + k));
    for (int k = 0; k < 2; ++k) author.push_back(-1.0f - static_cast<float>(100 * v + k));
  }
  w.write_array(graph::HeteroSchema::feature_array("paper"), std::span<const float>(paper));
  w.write_array(graph::HeteroSchema::feature_array("author"), std::span<const float>(author));
  w.commit(m);
  return dir;
}

std::vector<int64_t> ring_papers() {
  std::vector<int64_t> ids;
  for (int64_t v = 0; v < kRing; ++v) ids.push_back(v);
  return ids;
}

LoaderOptions ring_options() {
  LoaderOptions o;
  o.fanouts = {-1};
  o.batch_size = 2;
  o.shuffle = false;
  o.accumulate = false;
  o.seed = 3;
  o.sample_threads = 2;
  return o;
}

/// Batch `b`'s rows of each type, in its input node lists' order, against the ring's formula.
void expect_ring_rows(const LoadedBatch& b) {
  const sample::HeteroBlock& last = b.hetero_blocks.back();
  std::vector<float> paper, author;
  for (const int64_t v : last.src_nodes[0]) {
    for (int k = 0; k < 4; ++k) paper.push_back(static_cast<float>(100 * v + k));
  }
  for (const int64_t v : last.src_nodes[1]) {
    for (int k = 0; k < 2; ++k) author.push_back(-1.0f - static_cast<float>(100 * (v - kRing) + k));
  }
  ASSERT_EQ(b.type_x.size(), 2u);
  EXPECT_EQ(last.src_nodes[0].size(), 3u) << "batch " << b.index;
  EXPECT_EQ(last.src_nodes[1].size(), 3u) << "batch " << b.index;
  EXPECT_EQ(rows_of(b.type_x[0]), paper) << "batch " << b.index;
  EXPECT_EQ(rows_of(b.type_x[1]), author) << "batch " << b.index;
}

/// A fault hook that holds the gather of batch 0 until the sampler has taken up `batches` batches
/// (and a moment for their announcements), so that the window is full when gathering starts.
std::function<void(Stage, int64_t)> hold_first_gather(std::atomic<int64_t>& sampled, int64_t batches) {
  return [&sampled, batches](Stage stage, int64_t b) {
    if (stage == Stage::kSample) {
      ++sampled;
      return;
    }
    if (b != 0) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (sampled.load() < batches && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  };
}

LoaderOptions typed_options() {
  LoaderOptions o;
  o.fanouts = {-1, 1};
  o.relation_fanouts = {{"paper:cites:paper", {1, 0}}};
  o.batch_size = 2;
  o.seed = 7;
  o.sample_threads = 2;
  return o;
}

TEST(TypedLoader, BatchesAreTheSamplersSplitByTypeWithEachTypesFeatures) {
  const test::TempDir tmp;
  const graph::Dataset d = graph::Dataset::open(typed_dataset(tmp));
  ThreadPool pool(2);
  feature::FeatureStoreOptions so;
  so.budgets.cpu_buffer = Budget::percent(50);  // some rows from memory, the rest from the file
  const feature::TypedFeatureStore store(d, so, pool);
  const LoaderOptions o = typed_options();
  Loader loader(d, nullptr, {0, 1, 2, 3}, o, &store);
  sample::SamplerSpec spec;
  spec.fanouts = o.fanouts;
  spec.relation_fanouts = {{1, 0}, {}, {}, {}};  // by relation id: cites
  spec.seed = o.seed;
  const sample::SampleGraph graph{graph::CscView::of(d), {}, d.hetero()};
  const auto sampler = sample::make_sampler(spec, graph);
  loader.start(2);
  int64_t batches = 0;
  while (auto b = loader.next()) {
    ++batches;
    const sample::MiniBatch want = sampler->sample(b->batch.seeds, sample::minibatch_stream(2, b->index));
    ASSERT_EQ(b->batch.blocks.size(), 2u);
    ASSERT_EQ(b->hetero_blocks.size(), 2u);
    for (std::size_t l = 0; l < 2; ++l) {
      EXPECT_EQ(b->batch.blocks[l].src_nodes, want.blocks[l].src_nodes);
      EXPECT_EQ(b->batch.blocks[l].indices, want.blocks[l].indices);
      EXPECT_EQ(b->batch.blocks[l].edge_types, want.blocks[l].edge_types);
      const sample::HeteroBlock split = sample::split_block(want.blocks[l], d.hetero());
      EXPECT_EQ(b->hetero_blocks[l].src_nodes, split.src_nodes);
      EXPECT_EQ(b->hetero_blocks[l].num_dst, split.num_dst);
      ASSERT_EQ(b->hetero_blocks[l].relations.size(), 4u);  // every relation, empty ones too
      for (std::size_t r = 0; r < 4; ++r) {
        EXPECT_EQ(b->hetero_blocks[l].relations[r].indptr, split.relations[r].indptr);
        EXPECT_EQ(b->hetero_blocks[l].relations[r].indices, split.relations[r].indices);
      }
    }
    // Cites takes one paper in block 0 and none in block 1 (its own fanouts), writes all.
    EXPECT_EQ(b->hetero_blocks[1].relations[0].num_edges(), 0);
    // Each type's rows, in its input node list's order; the institutes have no table.
    const sample::HeteroBlock& last = b->hetero_blocks.back();
    ASSERT_EQ(b->type_x.size(), 3u);
    EXPECT_EQ(b->type_x[2].data, nullptr);
    std::vector<float> paper, author;
    for (const int64_t v : last.src_nodes[0]) {
      for (int k = 0; k < 3; ++k) paper.push_back(10.0f + static_cast<float>(v * 3 + k));
    }
    for (const int64_t v : last.src_nodes[1]) {
      for (int k = 0; k < 2; ++k) author.push_back(-1.0f - static_cast<float>((v - 4) * 2 + k));
    }
    EXPECT_EQ(b->type_x[0].shape[0], static_cast<int64_t>(last.src_nodes[0].size()));
    EXPECT_EQ(rows_of(b->type_x[0]), paper);
    EXPECT_EQ(rows_of(b->type_x[1]), author);
  }
  EXPECT_EQ(batches, 2);
  if (!cuda_available()) {
    LoaderOptions device_output = o;
    device_output.output = MemoryKind::kDevice;
    EXPECT_THROW(Loader(d, nullptr, {0, 1}, device_output, &store), Unsupported) << "device output without a GPU";
  }
}

// Window buffering per type: each type's input nodes are announced to its own store, whose host
// cache (3 lines a type, as many as one batch reads of each type) then keeps the rows with
// announced uses. Without a window no line is ever pinned, so no miss bypasses the cache; with the
// whole epoch announced, paper 0 and author kRing - 1 (read by the last batch) stay pinned from
// batch 0 on, and misses of every type bypass the cache.
TEST(TypedLoader, EachTypesWindowReachesItsOwnStoresCache) {
  const test::TempDir tmp;
  const graph::Dataset d = graph::Dataset::open(ring_dataset(tmp));
  ThreadPool pool(2);
  feature::FeatureStoreOptions so;
  so.budgets.cpu_buffer = Budget::bytes(0);
  so.budgets.host_cache = Budget::bytes(72);  // 48 bytes of paper rows, 24 of author rows: 3 lines each
  const std::vector<feature::TierLayout> tiers = feature::typed_tiers(d, so);
  ASSERT_EQ(tiers[0].host_cache_rows, 3);
  ASSERT_EQ(tiers[1].host_cache_rows, 3);
  for (const int window : {0, 32}) {
    SCOPED_TRACE("window " + std::to_string(window));
    const feature::TypedFeatureStore store(d, so, pool);
    LoaderOptions o = ring_options();
    o.window = window;
    std::atomic<int64_t> sampled{0};
    if (window > 0) o.fault_hook = hold_first_gather(sampled, kRing / 2);  // the whole epoch announced
    Loader loader(d, nullptr, ring_papers(), o, &store);
    loader.start(0);
    int64_t n = 0;
    while (auto b = loader.next()) {
      ++n;
      expect_ring_rows(*b);
    }
    EXPECT_EQ(n, kRing / 2);
    const EpochStats stats = loader.stats();
    EXPECT_EQ(stats.gathers, n);
    EXPECT_GE(stats.window_wait_seconds, 0.0);
    for (int32_t t = 0; t < 2; ++t) {
      const feature::GatherStats total = store.store(t)->total();
      EXPECT_EQ(total.rows, 3 * n) << "type " << t;
      if (window == 0) {
        EXPECT_EQ(total.cache_bypasses, 0) << "type " << t << ": no announcement, no pinned line";
      } else {
        EXPECT_GT(total.cache_bypasses, 0) << "type " << t << ": its store saw no announcement";
      }
    }
  }
}

// Merging per type: a gather serves the batches waiting in the window (the storage reads of every
// type stay below their stores' depth), one output for all of them, each batch its own rows.
TEST(TypedLoader, MergedGathersServeEachBatchItsOwnRowsOfEveryType) {
  const test::TempDir tmp;
  const graph::Dataset d = graph::Dataset::open(ring_dataset(tmp));
  ThreadPool pool(2);
  feature::FeatureStoreOptions so;
  so.budgets.cpu_buffer = Budget::bytes(0);  // every row from storage
  so.io_depth = 64;
  const feature::TypedFeatureStore store(d, so, pool);
  LoaderOptions o = ring_options();
  o.accumulate = true;
  o.max_merge = 4;
  o.window = 8;
  std::atomic<int64_t> sampled{0};
  o.fault_hook = hold_first_gather(sampled, 9);
  Loader loader(d, nullptr, ring_papers(), o, &store);
  loader.start(0);
  std::vector<LoadedBatch> batches;
  while (auto b = loader.next()) batches.push_back(std::move(*b));
  ASSERT_EQ(batches.size(), static_cast<std::size_t>(kRing / 2));
  std::set<const void*> outputs;
  for (const LoadedBatch& b : batches) {
    expect_ring_rows(b);
    EXPECT_EQ(b.type_x_buffers[0], b.type_x_buffers[1]) << "one output per gather, for every type";
    outputs.insert(b.type_x_buffers[0].get());
  }
  const EpochStats stats = loader.stats();
  EXPECT_LT(stats.gathers, stats.batches) << "no gather merged the batches waiting in the window";
  EXPECT_EQ(static_cast<int64_t>(outputs.size()), stats.gathers);
  EXPECT_GT(stats.expected_storage_reads, 0);
  EXPECT_EQ(stats.features.storage.rows + stats.features.host_cache.rows, stats.features.rows);
}

// Pinned and device output (kept pools: the pinned ring, the device's stream-ordered pool) are the
// host output byte for byte, also on a second pass that reuses the first one's memory.
TEST(TypedLoader, PinnedAndDeviceOutputAreTheHostOutput) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: typed pinned and device output not checked";
  const test::TempDir tmp;
  const graph::Dataset d = graph::Dataset::open(ring_dataset(tmp));
  ThreadPool pool(2);
  feature::FeatureStoreOptions so;
  so.budgets.cpu_buffer = Budget::percent(30);
  so.budgets.host_cache = Budget::percent(10);
  const feature::TypedFeatureStore store(d, so, pool);
  for (const MemoryKind output : {MemoryKind::kPinned, MemoryKind::kDevice}) {
    LoaderOptions o = ring_options();
    o.accumulate = true;
    o.output = output;
    Loader loader(d, nullptr, ring_papers(), o, &store);
    for (int pass = 0; pass < 2; ++pass) {
      loader.start(pass);
      int64_t n = 0;
      while (auto b = loader.next()) {
        ++n;
        ASSERT_EQ(b->type_x[0].memory, output);
        ASSERT_EQ(b->type_x[1].memory, output);
        expect_ring_rows(*b);
      }
      EXPECT_EQ(n, kRing / 2);
    }
  }
}

TEST(TypedLoader, GpuSamplingDeliversTheCpuLoadersBatches) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: typed GPU sampling through the loader not checked";
  const test::TempDir tmp;
  const graph::Dataset d = graph::Dataset::open(typed_dataset(tmp));
  LoaderOptions cpu = typed_options();
  LoaderOptions gpu = cpu;
  gpu.gpu_sampling = true;
  gpu.device_batches = true;  // a typed graph's blocks come to the host all the same, to be split
  Loader a(d, nullptr, {0, 1, 2, 3, 4, 5, 6}, cpu);
  Loader b(d, nullptr, {0, 1, 2, 3, 4, 5, 6}, gpu);
  a.start(1);
  b.start(1);
  int64_t batches = 0;
  while (auto want = a.next()) {
    auto got = b.next();
    ASSERT_TRUE(got);
    ++batches;
    EXPECT_EQ(got->device, nullptr);
    ASSERT_EQ(got->hetero_blocks.size(), want->hetero_blocks.size());
    for (std::size_t l = 0; l < want->batch.blocks.size(); ++l) {
      EXPECT_EQ(got->batch.blocks[l].src_nodes, want->batch.blocks[l].src_nodes);
      EXPECT_EQ(got->batch.blocks[l].indices, want->batch.blocks[l].indices);
      EXPECT_EQ(got->batch.blocks[l].edge_types, want->batch.blocks[l].edge_types);
      EXPECT_EQ(got->hetero_blocks[l].src_nodes, want->hetero_blocks[l].src_nodes);
      for (std::size_t r = 0; r < 4; ++r) {
        EXPECT_EQ(got->hetero_blocks[l].relations[r].indptr, want->hetero_blocks[l].relations[r].indptr);
        EXPECT_EQ(got->hetero_blocks[l].relations[r].indices, want->hetero_blocks[l].relations[r].indices);
      }
    }
  }
  EXPECT_FALSE(b.next());
  EXPECT_EQ(batches, 4);
}

void expect_invalid(const graph::Dataset& d, const LoaderOptions& o, const std::string& words) {
  try {
    Loader loader(d, nullptr, {0, 1}, o);
    ADD_FAILURE() << "no InvalidArgument; expected one saying '" << words << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(TypedLoader, BadRelationFanoutsAreRefusedByName) {
  const test::TempDir tmp;
  const graph::Dataset d = graph::Dataset::open(typed_dataset(tmp));
  LoaderOptions o = typed_options();
  o.relation_fanouts = {{"paper:cites:author", {1, 1}}};
  expect_invalid(d, o, "relation_fanouts: unknown relation 'paper:cites:author' (the dataset's relations: "
                       "paper:cites:paper, author:writes:paper, paper:written_by:author, institute:affiliated:author)");
  o.relation_fanouts = {{"author:writes:paper", {1}}};
  expect_invalid(d, o, "relation_fanouts['author:writes:paper'] has 1 hops, fanouts has 2");
  o = typed_options();
  o.sampler = sample::SamplerKind::kLadies;
  o.relation_fanouts.clear();
  expect_invalid(d, o, "neighbor");
  const graph::Dataset plain = graph::Dataset::open(test::feature_dataset(50, 4, DType::kFloat32, 0));
  o = typed_options();
  expect_invalid(plain, o, "is a homogeneous dataset (no relations); use fanouts");
}

}  // namespace
}  // namespace graphtier::loader
