// A typed dataset through the loader: each batch is make_sampler's per-relation minibatch of its
// seeds and stream, split by node type and relation (hetero_blocks), with each type's features
// from a TypedFeatureStore byte exact (none for a type without a table); relation_fanouts by
// relation name, and the refusals that name the bad entry.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
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

std::vector<float> rows_of(const TensorView& x) {
  std::vector<float> out(static_cast<std::size_t>(x.shape[0] * x.shape[1]));
  std::memcpy(out.data(), x.data, out.size() * sizeof(float));
  return out;
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
  LoaderOptions device_output = o;
  device_output.output = MemoryKind::kDevice;
  EXPECT_THROW(Loader(d, nullptr, {0, 1}, device_output, &store), Unsupported) << "typed rows on the device";
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
