#include "graphtier/loader/loader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <optional>
#include <string>
#include <stdexcept>
#include <thread>

#if GRAPHTIER_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "feature/feature_test_util.hpp"
#include "io/io_test_util.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/io/fault_injection.hpp"
#include "graphtier/sample/bulk_sampler.hpp"
#include "graphtier/sample/epoch.hpp"
#include "graphtier/sample/layer_sampler.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"

namespace graphtier::loader {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kNodes = 3000;
constexpr int64_t kDim = 12;

const std::string& dataset_dir() { return test::feature_dataset(kNodes, kDim, DType::kFloat32, 512); }

std::vector<int64_t> train_ids(const graph::Dataset& d) {
  const auto s = d.split(graph::Split::kTrain);
  return {s.begin(), s.end()};
}

LoaderOptions small_options() {
  LoaderOptions o;
  o.fanouts = {5, 3};
  o.batch_size = 100;
  o.seed = 11;
  o.sample_threads = 2;
  return o;
}

feature::FeatureStoreOptions store_options(const std::string& cpu, const std::string& host_cache) {
  feature::FeatureStoreOptions o;
  o.budgets.cpu_buffer = Budget::parse(cpu);
  o.budgets.host_cache = Budget::parse(host_cache);
  return o;
}

std::vector<LoadedBatch> run_epoch(Loader& loader, int64_t epoch, int64_t first = 0) {
  std::vector<LoadedBatch> out;
  loader.start(epoch, first);
  while (auto b = loader.next()) out.push_back(std::move(*b));
  return out;
}

/// The batch's features on the host, wherever the loader wrote them; none for a loader without a
/// store (an empty view: null data, and numel() 1 as for any 0-d view).
std::vector<std::byte> x_bytes(const LoadedBatch& b) {
  if (b.x.data == nullptr) return {};
  std::vector<std::byte> x(static_cast<std::size_t>(b.x.numel()) * sizeof(float));
  copy_bytes(x.data(), MemoryKind::kHost, b.x.data, b.x.memory, x.size());
  return x;
}

/// Epoch 3 of `ids` through a store holding every row in memory: what every other configuration
/// must deliver.
std::vector<LoadedBatch> reference_epoch(const graph::Dataset& d, const std::vector<int64_t>& ids) {
  ThreadPool pool(2);
  feature::FeatureStore in_memory(d, store_options("100%", "0"), pool);
  Loader base(d, &in_memory, ids, small_options());
  return run_epoch(base, 3);
}

void expect_same_batch(const LoadedBatch& a, const LoadedBatch& b) {
  ASSERT_EQ(a.index, b.index);
  EXPECT_EQ(a.batch.seeds, b.batch.seeds);
  ASSERT_EQ(a.batch.blocks.size(), b.batch.blocks.size());
  for (std::size_t l = 0; l < a.batch.blocks.size(); ++l) {
    EXPECT_EQ(a.batch.blocks[l].src_nodes, b.batch.blocks[l].src_nodes);
    EXPECT_EQ(a.batch.blocks[l].indptr, b.batch.blocks[l].indptr);
    EXPECT_EQ(a.batch.blocks[l].indices, b.batch.blocks[l].indices);
  }
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(x_bytes(a), x_bytes(b));
}

TEST(Loader, EveryTrainIdOnceAnEpochInTheSamplersOrder) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  ThreadPool pool(2);
  feature::FeatureStore store(d, store_options("100%", "0"), pool);
  const std::vector<int64_t> ids = train_ids(d);
  Loader loader(d, &store, ids, small_options());
  ASSERT_EQ(loader.num_batches(), (static_cast<int64_t>(ids.size()) + 99) / 100);

  sample::NeighborSamplerOptions so;
  so.fanouts = {5, 3};
  so.seed = 11;
  const sample::NeighborSampler reference(sample::SampleGraph{graph::CscView::of(d), {}}, so);
  const auto labels = d.labels();
  for (int64_t epoch : {0, 1}) {
    const std::vector<LoadedBatch> batches = run_epoch(loader, epoch);
    ASSERT_EQ(static_cast<int64_t>(batches.size()), loader.num_batches());
    const std::vector<int64_t> order = sample::shuffled_ids(ids, 11, static_cast<uint64_t>(epoch));
    std::vector<int64_t> seen;
    for (std::size_t b = 0; b < batches.size(); ++b) {
      const LoadedBatch& lb = batches[b];
      EXPECT_EQ(lb.epoch, epoch);
      EXPECT_EQ(lb.index, static_cast<int64_t>(b));
      const auto begin = order.begin() + static_cast<std::ptrdiff_t>(b * 100);
      const auto end = order.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>((b + 1) * 100, order.size()));
      ASSERT_EQ(lb.batch.seeds, std::vector<int64_t>(begin, end));
      const sample::MiniBatch expected = reference.sample(lb.batch.seeds, (static_cast<uint64_t>(epoch) << 32) | b);
      ASSERT_EQ(lb.batch.input_nodes().size(), expected.input_nodes().size());
      EXPECT_TRUE(std::equal(lb.batch.input_nodes().begin(), lb.batch.input_nodes().end(),
                             expected.input_nodes().begin()));
      sample::check_minibatch(lb.batch, d.num_nodes(), d.num_edges());
      ASSERT_EQ(lb.labels.size(), lb.batch.seeds.size());
      for (std::size_t k = 0; k < lb.labels.size(); ++k) EXPECT_EQ(lb.labels[k], labels[lb.batch.seeds[k]]);
      ASSERT_EQ(lb.x.shape[0], static_cast<int64_t>(lb.batch.input_nodes().size()));
      ASSERT_EQ(lb.x.shape[1], kDim);
      EXPECT_EQ(x_bytes(lb), test::reference_rows(dataset_dir(), lb.batch.input_nodes()));
      seen.insert(seen.end(), lb.batch.seeds.begin(), lb.batch.seeds.end());
    }
    std::sort(seen.begin(), seen.end());
    std::vector<int64_t> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(seen, sorted) << "epoch " << epoch << " must visit every train id exactly once";
  }
}

TEST(Loader, DropLastAndNoShuffle) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  std::vector<int64_t> ids(250);
  for (int64_t i = 0; i < 250; ++i) ids[i] = 3 * i;
  LoaderOptions o = small_options();
  o.shuffle = false;
  o.drop_last = true;
  Loader loader(d, nullptr, ids, o);
  ASSERT_EQ(loader.num_batches(), 2);
  const std::vector<LoadedBatch> batches = run_epoch(loader, 4);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1].batch.seeds, std::vector<int64_t>(ids.begin() + 100, ids.begin() + 200));
  EXPECT_EQ(batches[0].x.data, nullptr) << "no store: no features";

  o.drop_last = false;
  Loader all(d, nullptr, ids, o);
  const std::vector<LoadedBatch> three = run_epoch(all, 0);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[2].batch.seeds.size(), 50u);
}

TEST(Loader, SeedPositionsPointIntoTheIdsAndASplitIsInTheDatasetsOwnNumbering) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  std::vector<int64_t> ids = train_ids(d);
  std::reverse(ids.begin(), ids.end());  // positions differ from the split's
  LoaderOptions o = small_options();
  Loader loader(d, nullptr, ids, o);
  std::vector<int64_t> positions;
  for (const LoadedBatch& b : run_epoch(loader, 2)) {
    ASSERT_EQ(b.seed_positions.size(), b.batch.seeds.size());
    for (std::size_t k = 0; k < b.seed_positions.size(); ++k) {
      ASSERT_EQ(ids[static_cast<std::size_t>(b.seed_positions[k])], b.batch.seeds[k]) << "batch " << b.index;
    }
    positions.insert(positions.end(), b.seed_positions.begin(), b.seed_positions.end());
  }
  std::sort(positions.begin(), positions.end());
  for (std::size_t i = 0; i < positions.size(); ++i) ASSERT_EQ(positions[i], static_cast<int64_t>(i));
  ASSERT_EQ(positions.size(), ids.size());

  const std::unique_ptr<Loader> by_split = Loader::over_split(d, nullptr, graph::Split::kTrain, o);
  Loader by_ids(d, nullptr, train_ids(d), o);
  const std::vector<LoadedBatch> a = run_epoch(*by_split, 1);
  const std::vector<LoadedBatch> b = run_epoch(by_ids, 1);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].batch.seeds, b[i].batch.seeds);
    EXPECT_EQ(a[i].seed_positions, b[i].seed_positions);
  }
  o.ids_numbering = graph::Numbering::kOriginal;
  EXPECT_THROW(Loader::over_split(d, nullptr, graph::Split::kValid, o), InvalidArgument)
      << "a split is in the dataset's own numbering; 'original' applies to ids given";
}

// The output is a pure function of (ids, seed, epoch, batch): the tiers, the window, merging,
// prefetch depth and thread counts change nothing.
TEST(Loader, OutputIndependentOfTiersWindowAccumulatorAndThreads) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  const std::vector<int64_t> ids = train_ids(d);
  const std::vector<LoadedBatch> expected = reference_epoch(d, ids);

  struct Variant {
    const char* name;
    const char* cpu;
    const char* host_cache;
    int window;
    bool accumulate;
    int prefetch;
    int threads;
  };
  for (const Variant& v : {Variant{"storage only, window, merging", "0", "0", 8, true, 1, 2},
                           Variant{"storage + host cache, no window", "0", "20%", 0, true, 3, 1},
                           Variant{"half in memory, no merging", "50%", "5%", 4, false, 2, 2}}) {
    SCOPED_TRACE(v.name);
    ThreadPool p(2);
    feature::FeatureStore store(d, store_options(v.cpu, v.host_cache), p);
    LoaderOptions o = small_options();
    o.window = v.window;
    o.accumulate = v.accumulate;
    o.prefetch = v.prefetch;
    o.sample_threads = v.threads;
    Loader loader(d, &store, ids, o);
    const std::vector<LoadedBatch> got = run_epoch(loader, 3);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t b = 0; b < got.size(); ++b) expect_same_batch(got[b], expected[b]);
    const EpochStats s = loader.stats();
    EXPECT_EQ(s.batches, static_cast<int64_t>(got.size()));
    EXPECT_GT(s.features.rows, 0);
    if (!v.accumulate) {
      EXPECT_EQ(s.gathers, s.batches) << "without the accumulator every batch is its own gather";
    }
  }
}

TEST(Loader, DeviceOutputAndGpuSamplingMatchTheCpuPipeline) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: device output and GPU sampling through the loader not checked";
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  const std::vector<int64_t> ids = train_ids(d);
  const std::vector<LoadedBatch> expected = reference_epoch(d, ids);

  // Every tier at once: GPU hot rows, GPU cache, pinned rows, host cache and storage.
  feature::FeatureStoreOptions so = store_options("30%", "5%");
  so.budgets.gpu_hot = Budget::percent(10);
  so.budgets.gpu_cache = Budget::percent(10);
  ThreadPool p(2);
  feature::FeatureStore store(d, so, p);
  for (const bool gpu_sampling : {false, true}) {
    SCOPED_TRACE(gpu_sampling ? "GPU sampling" : "CPU sampling");
    LoaderOptions o = small_options();
    o.output = MemoryKind::kDevice;
    o.gpu_sampling = gpu_sampling;
    Loader loader(d, &store, ids, o);
    const std::vector<LoadedBatch> got = run_epoch(loader, 3);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t b = 0; b < got.size(); ++b) {
      ASSERT_EQ(got[b].x.memory, MemoryKind::kDevice);
      expect_same_batch(got[b], expected[b]);
    }
  }
}

TEST(Loader, DeviceBatchesStayOnTheDeviceAndMatchTheCpuPipeline) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: device-resident minibatches not checked";
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  const std::vector<int64_t> ids = train_ids(d);
  const std::vector<LoadedBatch> expected = reference_epoch(d, ids);
  feature::FeatureStoreOptions so = store_options("30%", "5%");
  so.budgets.gpu_hot = Budget::percent(10);
  so.budgets.gpu_cache = Budget::percent(10);
  ThreadPool p(2);
  feature::FeatureStore store(d, so, p);
  OwnedCudaStream consumer(0);
  for (const bool features : {true, false}) {
    SCOPED_TRACE(features ? "with features" : "without features");
    LoaderOptions o = small_options();
    o.output = MemoryKind::kDevice;
    o.gpu_sampling = true;
    o.device_batches = true;
    Loader loader(d, features ? &store : nullptr, ids, o);
    for (int pass = 0; pass < 2; ++pass) {  // the second reuses the pinned slots and the pool's memory
      std::vector<LoadedBatch> got = run_epoch(loader, 3);
      ASSERT_EQ(got.size(), expected.size());
      EXPECT_EQ(loader.stats().blocks_to_host, 0) << "no block was copied to the host";
      for (std::size_t b = 0; b < got.size(); ++b) {
        LoadedBatch& lb = got[b];
        ASSERT_NE(lb.device, nullptr);
        EXPECT_TRUE(lb.batch.blocks.empty());
        // The test copies the blocks back to compare them; the loader did not.
        LoadedBatch host;
        host.index = lb.index;
        host.batch = lb.device->to_host();
        host.labels = lb.labels;
        const LoadedBatch& want = expected[b];
        EXPECT_EQ(host.batch.seeds, want.batch.seeds);
        ASSERT_EQ(host.batch.blocks.size(), want.batch.blocks.size());
        for (std::size_t l = 0; l < want.batch.blocks.size(); ++l) {
          EXPECT_EQ(host.batch.blocks[l].src_nodes, want.batch.blocks[l].src_nodes);
          EXPECT_EQ(host.batch.blocks[l].indptr, want.batch.blocks[l].indptr);
          EXPECT_EQ(host.batch.blocks[l].indices, want.batch.blocks[l].indices);
        }
        EXPECT_EQ(lb.labels, want.labels);
        if (features) {
          ASSERT_EQ(lb.x.memory, MemoryKind::kDevice);
          EXPECT_EQ(x_bytes(lb), x_bytes(want));
        } else {
          EXPECT_EQ(lb.x.data, nullptr);
        }
        lb.release_after(consumer.get());  // then freed on the sampler's and the output stream
      }
    }
  }
}

TEST(Loader, PinnedOutputIsTheCpuPipelinesInReusedBuffers) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: pinned output not checked";
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  const std::vector<int64_t> ids = train_ids(d);
  const std::vector<LoadedBatch> expected = reference_epoch(d, ids);
  ThreadPool p(2);
  feature::FeatureStore store(d, store_options("30%", "5%"), p);
  LoaderOptions o = small_options();
  o.output = MemoryKind::kPinned;
  Loader loader(d, &store, ids, o);
  for (int pass = 0; pass < 2; ++pass) {  // the second pass writes into the first one's buffers
    const std::vector<LoadedBatch> got = run_epoch(loader, 3);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t b = 0; b < got.size(); ++b) {
      ASSERT_EQ(got[b].x.memory, MemoryKind::kPinned);
      expect_same_batch(got[b], expected[b]);
    }
  }
}

#if GRAPHTIER_WITH_CUDA
/// Holds `stream` (a consumer's copy still queued) until `open` is set, or 20 s pass.
void hold_stream(cudaStream_t stream, std::atomic<bool>* open) {
  const auto wait = [](void* flag) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!static_cast<std::atomic<bool>*>(flag)->load() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  ASSERT_EQ(cudaLaunchHostFunc(stream, wait, open), cudaSuccess);
}
#endif

TEST(Loader, PinnedOutputIsReusedOnlyAfterTheConsumersStreamPassedIt) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the pinned ring's event-based recycling not checked";
#if GRAPHTIER_WITH_CUDA
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  ThreadPool p(2);
  feature::FeatureStore store(d, store_options("30%", "5%"), p);
  LoaderOptions o = small_options();
  o.output = MemoryKind::kPinned;
  o.accumulate = false;  // one buffer per batch
  Loader loader(d, &store, train_ids(d), o);
  OwnedCudaStream consumer(0);
  std::atomic<bool> open{false};
  loader.start(0);
  std::optional<LoadedBatch> first = loader.next();
  ASSERT_TRUE(first.has_value());
  const void* held = first->x_buffer.get();
  // The consumer queues work that reads x (held back by a host function), releases the batch
  // after it and drops it: its buffer must not serve another gather until the stream passes.
  hold_stream(static_cast<cudaStream_t>(consumer.get().handle), &open);
  first->release_after(consumer.get());
  first.reset();
  int64_t delivered = 1;
  for (int i = 0; i < 6; ++i) {
    std::optional<LoadedBatch> b = loader.next();
    if (!b) break;
    ++delivered;
    EXPECT_NE(b->x_buffer.get(), held) << "batch " << b->index << " reuses a buffer the consumer's stream still reads";
  }
  open.store(true);
  ASSERT_EQ(cudaStreamSynchronize(static_cast<cudaStream_t>(consumer.get().handle)), cudaSuccess);
  while (loader.next()) ++delivered;
  EXPECT_EQ(delivered, loader.num_batches());
#endif
}

TEST(Loader, DeviceBatchesLeaveCpuSamplingOnTheHost) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  const std::vector<int64_t> ids = train_ids(d);
  const std::vector<LoadedBatch> expected = reference_epoch(d, ids);
  ThreadPool pool(2);
  feature::FeatureStore store(d, store_options("100%", "0"), pool);
  LoaderOptions o = small_options();
  o.device_batches = true;  // only GPU sampling has a device form
  Loader loader(d, &store, ids, o);
  const std::vector<LoadedBatch> got = run_epoch(loader, 3);
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t b = 0; b < got.size(); ++b) {
    EXPECT_EQ(got[b].device, nullptr);
    EXPECT_TRUE(got[b].streams.empty());
    got[b].release_after(CudaStream{});  // nothing to order: no CUDA call, also without CUDA
    expect_same_batch(got[b], expected[b]);
  }
  EXPECT_EQ(loader.stats().blocks_to_host, 0);
}

TEST(Loader, GpuLayerWiseSamplingMatchesTheCpuLoader) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: layer-wise GPU sampling through the loader not checked";
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  const std::vector<int64_t> ids = train_ids(d);
  for (const sample::SamplerKind kind : {sample::SamplerKind::kLadies, sample::SamplerKind::kFastGcn}) {
    SCOPED_TRACE(kind == sample::SamplerKind::kLadies ? "ladies" : "fastgcn");
    LoaderOptions o = small_options();
    o.sampler = kind;
    o.fanouts = {64, 32};
    Loader cpu(d, nullptr, ids, o);
    o.gpu_sampling = true;  // four pool threads, each on a stream of its own
    o.sample_threads = 0;
    Loader gpu(d, nullptr, ids, o);
    const std::vector<LoadedBatch> want = run_epoch(cpu, 1), got = run_epoch(gpu, 1);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t b = 0; b < got.size(); ++b) {
      expect_same_batch(got[b], want[b]);
      for (std::size_t l = 0; l < want[b].batch.blocks.size(); ++l) {
        EXPECT_EQ(got[b].batch.blocks[l].weights, want[b].batch.blocks[l].weights) << "batch " << b << " block " << l;
      }
    }
    EXPECT_EQ(gpu.stats().blocks_to_host, static_cast<int64_t>(got.size())) << "without device_batches";
  }
}

TEST(Loader, GpuLayerWiseDeviceBatchesStayOnTheDeviceAndMatchTheCpuLoader) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: layer-wise device batches through the loader not checked";
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  const std::vector<int64_t> ids = train_ids(d);
  ThreadPool p(2);
  feature::FeatureStore store(d, store_options("30%", "5%"), p);
  OwnedCudaStream consumer(0);
  for (const sample::SamplerKind kind : {sample::SamplerKind::kLadies, sample::SamplerKind::kFastGcn}) {
    for (const bool features : {true, false}) {  // with features the input ids go through the sink
      SCOPED_TRACE(::testing::Message() << (kind == sample::SamplerKind::kLadies ? "ladies" : "fastgcn")
                                        << (features ? " with features" : " without features"));
      LoaderOptions o = small_options();
      o.sampler = kind;
      o.fanouts = {64, 32};
      Loader cpu(d, features ? &store : nullptr, ids, o);
      o.gpu_sampling = true;
      o.sample_threads = 0;
      o.device_batches = true;
      Loader gpu(d, features ? &store : nullptr, ids, o);
      const std::vector<LoadedBatch> want = run_epoch(cpu, 1);
      std::vector<LoadedBatch> got = run_epoch(gpu, 1);
      ASSERT_EQ(got.size(), want.size());
      EXPECT_EQ(gpu.stats().blocks_to_host, 0) << "no block was copied to the host";
      for (std::size_t b = 0; b < got.size(); ++b) {
        LoadedBatch& lb = got[b];
        ASSERT_NE(lb.device, nullptr);
        EXPECT_TRUE(lb.batch.blocks.empty());
        const sample::MiniBatch host = lb.device->to_host();  // the test's copy; the loader made none
        const sample::MiniBatch& w = want[b].batch;
        EXPECT_EQ(host.seeds, w.seeds);
        ASSERT_EQ(host.blocks.size(), w.blocks.size());
        for (std::size_t l = 0; l < w.blocks.size(); ++l) {
          EXPECT_EQ(host.blocks[l].num_dst, w.blocks[l].num_dst) << "batch " << b << " block " << l;
          EXPECT_EQ(host.blocks[l].src_nodes, w.blocks[l].src_nodes) << "batch " << b << " block " << l;
          EXPECT_EQ(host.blocks[l].indptr, w.blocks[l].indptr) << "batch " << b << " block " << l;
          EXPECT_EQ(host.blocks[l].indices, w.blocks[l].indices) << "batch " << b << " block " << l;
          EXPECT_EQ(host.blocks[l].weights, w.blocks[l].weights) << "batch " << b << " block " << l;
        }
        EXPECT_EQ(lb.labels, want[b].labels);
        EXPECT_EQ(x_bytes(lb), x_bytes(want[b])) << "features of the input ids the sink received";
        lb.release_after(consumer.get());
      }
    }
  }
}

TEST(Loader, AccumulatorMergesWaitingBatchesWhenStorageReadsAreFew) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  ThreadPool pool(2);
  feature::FeatureStoreOptions so = store_options("0", "0");
  so.io_depth = 64;
  feature::FeatureStore store(d, so, pool);
  LoaderOptions o = small_options();
  o.batch_size = 4;  // at most 4 + 8 + 8 = 20 input nodes: no batch reaches the depth alone
  o.fanouts = {2, 1};
  o.window = 8;
  o.max_merge = 4;
  o.prefetch = 8;
  Loader loader(d, &store, train_ids(d), o);
  loader.start(0);
  std::this_thread::sleep_for(300ms);  // let the sampler fill the window before gathers start draining it
  int64_t n = 0;
  while (loader.next()) ++n;
  const EpochStats s = loader.stats();
  EXPECT_EQ(s.batches, n);
  EXPECT_LT(s.gathers, s.batches) << "waiting batches should share gathers";
  EXPECT_GE(s.gathers * 4, s.batches) << "at most max_merge batches per gather";
  EXPECT_GT(s.expected_storage_reads, 0);
}

TEST(Loader, ResumeAtABatchContinuesTheSameStream) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  ThreadPool pool(2);
  feature::FeatureStore store(d, store_options("30%", "10%"), pool);
  Loader loader(d, &store, train_ids(d), small_options());
  const std::vector<LoadedBatch> full = run_epoch(loader, 2);
  const std::vector<LoadedBatch> tail = run_epoch(loader, 2, 5);
  ASSERT_EQ(tail.size(), full.size() - 5);
  for (std::size_t b = 0; b < tail.size(); ++b) expect_same_batch(tail[b], full[b + 5]);
  EXPECT_TRUE(run_epoch(loader, 2, loader.num_batches()).empty());
  EXPECT_THROW(loader.start(2, loader.num_batches() + 1), OutOfRange);
}

TEST(Loader, APassAfterAFullPassIsTheSameWhicheverEpochItAsksFor) {
  // A pass that sampled all its batches samples the next epoch's first ones: the next pass uses
  // them when it is that epoch from batch 0 (1, 2, 6, 9), drops them otherwise (5, 8 after 7 was
  // left early, 3 from batch 4), and every pass is a fresh loader's.
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  ThreadPool pool(2);
  feature::FeatureStore store(d, store_options("30%", "10%"), pool);
  for (const int threads : {1, 3}) {
    SCOPED_TRACE(threads);
    LoaderOptions o = small_options();
    o.sample_threads = threads;
    Loader chained(d, &store, train_ids(d), o);
    const auto expect_fresh = [&](int64_t epoch, int64_t first, const std::vector<LoadedBatch>& got) {
      SCOPED_TRACE(epoch);
      Loader fresh(d, &store, train_ids(d), o);
      const std::vector<LoadedBatch> want = run_epoch(fresh, epoch, first);
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t b = 0; b < got.size(); ++b) expect_same_batch(got[b], want[b]);
    };
    for (const int64_t epoch : {0, 1, 2, 5, 6}) expect_fresh(epoch, 0, run_epoch(chained, epoch));
    chained.start(7);
    ASSERT_TRUE(chained.next().has_value());
    for (const int64_t epoch : {8, 9}) expect_fresh(epoch, 0, run_epoch(chained, epoch));
    expect_fresh(3, 4, run_epoch(chained, 3, 4));
  }
}

TEST(Loader, AFailedEarlyBatchFailsItsPassInItsPlace) {
  // Batch 1's second draw fails: epoch 1's, sampled while epoch 0's pass ends. Epoch 1's pass
  // delivers batch 0 and then that failure; batch 1 is not drawn again.
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  for (const int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    std::atomic<int> draws{0};
    LoaderOptions o = small_options();
    o.sample_threads = threads;
    o.fault_hook = [&draws](Stage stage, int64_t batch) {
      if (stage == Stage::kSample && batch == 1 && ++draws == 2) throw std::runtime_error("batch 1's second draw");
    };
    Loader loader(d, nullptr, train_ids(d), o);
    EXPECT_EQ(static_cast<int64_t>(run_epoch(loader, 0).size()), loader.num_batches());
    loader.start(1);
    const std::optional<LoadedBatch> first = loader.next();
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->index, 0);
    try {
      loader.next();
      FAIL() << "the early batch's failure must reach next()";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "batch 1's second draw");
    }
    loader.stop();
    EXPECT_EQ(draws.load(), 2);
  }
}

TEST(Loader, StridedBatchesAreTheUnstridedBatchesOfTheSameIndex) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  ThreadPool pool(2);
  feature::FeatureStore store(d, store_options("100%", "0"), pool);
  Loader whole(d, &store, train_ids(d), small_options());
  const std::vector<LoadedBatch> full = run_epoch(whole, 2);
  const auto n = static_cast<int64_t>(full.size());
  ASSERT_EQ(whole.num_delivered(), n);
  const std::vector<std::pair<int64_t, int64_t>> strides{{0, 1}, {0, 3}, {2, 3}, {1, 4}, {3, 2}};
  for (const auto& [offset, stride] : strides) {
    LoaderOptions o = small_options();
    o.batch_offset = offset;
    o.batch_stride = stride;
    o.sample_threads = 3;  // groups that do not line up with the stride
    Loader strided(d, &store, train_ids(d), o);
    ASSERT_EQ(strided.num_batches(), n);
    std::vector<int64_t> expected;
    for (int64_t b = offset; b < n; b += stride) expected.push_back(b);
    ASSERT_EQ(strided.num_delivered(), static_cast<int64_t>(expected.size()));
    const std::vector<LoadedBatch> got = run_epoch(strided, 2);
    ASSERT_EQ(got.size(), expected.size()) << "offset " << offset << " stride " << stride;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].epoch, 2);
      expect_same_batch(got[i], full[static_cast<std::size_t>(expected[i])]);
      EXPECT_EQ(got[i].batch.blocks[0].edge_ids, full[static_cast<std::size_t>(expected[i])].batch.blocks[0].edge_ids);
    }
    // first_batch stays a global index: the epoch resumes at the first delivered batch >= it.
    const std::vector<LoadedBatch> tail = run_epoch(strided, 2, 5);
    std::vector<int64_t> tail_expected;
    for (const int64_t b : expected) {
      if (b >= 5) tail_expected.push_back(b);
    }
    ASSERT_EQ(tail.size(), tail_expected.size());
    for (std::size_t i = 0; i < tail.size(); ++i) EXPECT_EQ(tail[i].index, tail_expected[i]);
    EXPECT_TRUE(run_epoch(strided, 2, n).empty());
  }
  LoaderOptions beyond = small_options();
  beyond.batch_offset = n;  // more ranks than batches: this one gets none
  Loader none(d, &store, train_ids(d), beyond);
  EXPECT_EQ(none.num_delivered(), 0);
  EXPECT_TRUE(run_epoch(none, 0).empty());
}

TEST(Loader, BadBatchStridingIsRejectedNamingTheOption) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  LoaderOptions o = small_options();
  o.batch_offset = -1;
  try {
    Loader(d, nullptr, {0, 1}, o);
    FAIL() << "batch_offset -1 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("batch_offset"), std::string::npos) << e.what();
  }
  o = small_options();
  for (const int64_t stride : {int64_t{0}, int64_t{-2}}) {
    o.batch_stride = stride;
    try {
      Loader(d, nullptr, {0, 1}, o);
      FAIL() << "batch_stride " << stride << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("batch_stride"), std::string::npos) << e.what();
    }
  }
}

// The sampler keeps filling the window while a gather is parked inside its storage reads: its
// announce takes only the caches' policy lock, never the one the gather holds through its I/O
// (docs/architecture.md, "Feature store and tiers"). What announce/consume waited is reported.
TEST(Loader, SamplerFillsTheWindowWhileAGatherIsInItsReads) {
  const test::Watchdog watchdog(60);
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  ThreadPool pool(2);
  const std::unique_ptr<io::ReadDevice> inner = io::make_read_device(io::IoBackend::kAuto, 16);
  test::GatedDevice gated(*inner);
  feature::FeatureStoreOptions so = store_options("0", "10%");
  so.read_device = &gated;
  so.io_depth = 8;
  feature::FeatureStore store(d, so, pool);
  LoaderOptions o = small_options();
  o.batch_size = 10;
  o.window = 4;
  o.prefetch = 1;
  o.max_merge = 1;
  o.sample_threads = 2;  // groups of 2
  std::atomic<int64_t> sampled{0};
  // From the second group on, sampling waits for the first gather to be parked in its reads, so
  // the sampler cannot run ahead before the gather holds its lock.
  o.fault_hook = [&](Stage stage, int64_t b) {
    if (stage != Stage::kSample) return;
    ++sampled;
    if (b >= 2) gated.wait_entered(std::chrono::seconds(10));
  };
  Loader loader(d, &store, train_ids(d), o);
  loader.start(0);
  ASSERT_TRUE(gated.wait_entered(std::chrono::seconds(10))) << "no gather reached its reads";
  // Batches 0-5 sampled: 0 in the parked gather, 1-4 announced into the window, and 5, the other
  // half of the group {4, 5}, waiting for room.
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (sampled.load() < 6 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  const int64_t sampled_while_parked = sampled.load();
  gated.open();
  int64_t n = 0;
  while (loader.next()) ++n;
  EXPECT_GE(sampled_while_parked, 6) << "the sampler stalled behind the gather's reads";
  const EpochStats s = loader.stats();
  EXPECT_EQ(s.batches, n);
  EXPECT_GE(s.window_wait_seconds, 0.0);
  EXPECT_LT(s.window_wait_seconds, s.seconds);
}

TEST(Loader, BackPressureBoundsHowFarSamplingRunsAhead) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  LoaderOptions o = small_options();
  o.batch_size = 10;  // 180 batches
  o.window = 3;
  o.prefetch = 2;
  o.sample_threads = 2;
  std::atomic<int64_t> sampled{0};
  o.fault_hook = [&](Stage stage, int64_t) {
    if (stage == Stage::kSample) ++sampled;
  };
  Loader loader(d, nullptr, train_ids(d), o);
  ASSERT_GT(loader.num_batches(), 100);
  loader.start(0);
  std::this_thread::sleep_for(300ms);  // the consumer takes nothing
  // window (3) + ready (2) + up to 2 x threads in the sampler's hands (4: the one waiting to enter
  // the window and those sampled ahead of it, BatchSampler::sample_in_order) + one in the gather's (1)
  EXPECT_LE(sampled.load(), 3 + 2 + 4 + 1);
  EXPECT_GE(sampled.load(), 3);
}

TEST(Loader, BatchesFinishedOutOfOrderAreDeliveredInOrder) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  const std::vector<int64_t> ids = train_ids(d);
  const std::vector<LoadedBatch> expected = reference_epoch(d, ids);
  ThreadPool p(2);
  feature::FeatureStore store(d, store_options("100%", "0"), p);
  LoaderOptions o = small_options();
  o.sample_threads = 4;
  // Every third batch is slow, so the threads finish their batches out of order.
  o.fault_hook = [](Stage stage, int64_t batch) {
    if (stage == Stage::kSample && batch % 3 == 0) std::this_thread::sleep_for(5ms);
  };
  Loader loader(d, &store, ids, o);
  const std::vector<LoadedBatch> got = run_epoch(loader, 3);
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t b = 0; b < got.size(); ++b) {
    EXPECT_EQ(got[b].index, static_cast<int64_t>(b));
    expect_same_batch(got[b], expected[b]);
  }
}

TEST(Loader, SampleStageFailureReachesTheConsumerAfterEveryBatchBeforeIt) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  // With several threads the failing batch is drawn while earlier ones are still being sampled
  // (they are slow) and later ones are done: the earlier ones are still delivered first.
  for (const int threads : {1, 3}) {
    SCOPED_TRACE(threads);
    const int64_t failing = threads + 1;
    LoaderOptions o = small_options();
    o.batch_size = 10;
    o.sample_threads = threads;
    o.fault_hook = [failing](Stage stage, int64_t batch) {
      if (stage != Stage::kSample) return;
      if (batch == failing - 1 || batch == failing - 2) std::this_thread::sleep_for(20ms);
      if (batch == failing) throw std::runtime_error("injected sampler failure at batch " + std::to_string(failing));
    };
    Loader loader(d, nullptr, train_ids(d), o);
    loader.start(0);
    for (int64_t b = 0; b < failing; ++b) {
      auto got = loader.next();
      ASSERT_TRUE(got.has_value());
      EXPECT_EQ(got->index, b);
    }
    try {
      loader.next();
      FAIL() << "the sampler's failure must reach next()";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "injected sampler failure at batch " + std::to_string(failing));
    }
  }
}

TEST(Loader, OutOfMemoryInAStageNamesTheStageAndTheBatch) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  ThreadPool pool(2);
  feature::FeatureStore store(d, store_options("0", "0"), pool);
  for (const Stage failing : {Stage::kSample, Stage::kGather}) {
    const std::string stage = failing == Stage::kSample ? "sample" : "gather";
    SCOPED_TRACE(stage);
    LoaderOptions o = small_options();
    o.sample_threads = 1;
    o.accumulate = false;
    o.fault_hook = [failing](Stage s, int64_t batch) {
      if (s == failing && batch == 2) throw OutOfMemory("cudaMallocAsync failed: out of memory");
    };
    Loader loader(d, &store, train_ids(d), o);
    loader.start(5);
    try {
      while (loader.next()) {
      }
      FAIL() << "the stage's OutOfMemory must reach next()";
    } catch (const OutOfMemory& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("the " + stage + " stage"), std::string::npos) << m;
      EXPECT_NE(m.find("epoch 5"), std::string::npos) << m;
      EXPECT_NE(m.find("batch 2"), std::string::npos) << m;
      EXPECT_NE(m.find("cudaMallocAsync failed"), std::string::npos) << m;
    }
  }
}

TEST(Loader, GatherIoErrorReachesTheConsumer) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  auto device = io::make_read_device(io::IoBackend::kAuto, 16);
  io::FaultPlan plan;
  plan.eio_probability = 1.0;
  io::FaultInjectingDevice faulty(*device, plan);
  ThreadPool pool(2);
  feature::FeatureStoreOptions so = store_options("0", "0");
  so.read_device = &faulty;
  so.io_depth = 4;
  feature::FeatureStore store(d, so, pool);
  Loader loader(d, &store, train_ids(d), small_options());
  loader.start(0);
  auto drain = std::async(std::launch::async, [&] {
    try {
      while (loader.next()) {
      }
    } catch (const IoError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  });
  ASSERT_EQ(drain.wait_for(20s), std::future_status::ready) << "a failed gather must not hang the consumer";
  EXPECT_NE(drain.get().find("features.bin"), std::string::npos);
}

TEST(Loader, EarlyExitNeverHangs) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  ThreadPool pool(2);
  feature::FeatureStore store(d, store_options("0", "10%"), pool);
  LoaderOptions o = small_options();
  o.batch_size = 10;
  auto done = std::async(std::launch::async, [&] {
    {
      Loader loader(d, &store, train_ids(d), o);
      loader.start(0);
      ASSERT_TRUE(loader.next().has_value());
      loader.start(1);  // abandons epoch 0 mid-way
      ASSERT_TRUE(loader.next().has_value());
      std::this_thread::sleep_for(50ms);
    }  // destroyed with full queues and blocked stages
    // The abandoned window's announcements were given back: a later loader still fills the cache.
    Loader again(d, &store, train_ids(d), o);
    EXPECT_FALSE(run_epoch(again, 0).empty());
  });
  ASSERT_EQ(done.wait_for(30s), std::future_status::ready) << "stopping a loader hung";
  done.get();
}

TEST(Loader, LayerWiseSamplerThroughThePipeline) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  ThreadPool pool(2);
  feature::FeatureStore store(d, store_options("100%", "0"), pool);
  LoaderOptions o = small_options();
  o.sampler = sample::SamplerKind::kLadies;
  o.fanouts = {64, 64};
  const std::vector<int64_t> ids = train_ids(d);
  Loader loader(d, &store, ids, o);
  const std::vector<LoadedBatch> batches = run_epoch(loader, 1);
  sample::LayerSamplerOptions lo;
  lo.layer_sizes = {64, 64};
  lo.seed = 11;
  const sample::LayerSampler reference(sample::SampleGraph{graph::CscView::of(d), {}}, lo);
  for (const LoadedBatch& b : batches) {
    const sample::MiniBatch expected = reference.sample(b.batch.seeds, (uint64_t{1} << 32) | static_cast<uint64_t>(b.index));
    ASSERT_EQ(b.batch.blocks.size(), 2u);
    EXPECT_EQ(b.batch.blocks[1].src_nodes, expected.blocks[1].src_nodes);
    EXPECT_EQ(b.batch.blocks[0].weights, expected.blocks[0].weights);
    EXPECT_EQ(x_bytes(b), test::reference_rows(dataset_dir(), b.batch.input_nodes()));
  }
}

/// Every field of two minibatches, weights and edge ids included.
void expect_same_minibatch(const sample::MiniBatch& a, const sample::MiniBatch& b) {
  ASSERT_EQ(a.seeds, b.seeds);
  ASSERT_EQ(a.blocks.size(), b.blocks.size());
  for (std::size_t l = 0; l < a.blocks.size(); ++l) {
    SCOPED_TRACE(l);
    EXPECT_EQ(a.blocks[l].num_dst, b.blocks[l].num_dst);
    EXPECT_EQ(a.blocks[l].src_nodes, b.blocks[l].src_nodes);
    EXPECT_EQ(a.blocks[l].indptr, b.blocks[l].indptr);
    EXPECT_EQ(a.blocks[l].indices, b.blocks[l].indices);
    EXPECT_EQ(a.blocks[l].edge_ids, b.blocks[l].edge_ids);
    EXPECT_EQ(a.blocks[l].weights, b.blocks[l].weights);  // bitwise
  }
}

TEST(Loader, BulkBatchIsTheBulkSamplersBatchAloneWithItsStream) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  ThreadPool pool(2);
  feature::FeatureStore store(d, store_options("100%", "0"), pool);
  const std::vector<int64_t> ids = train_ids(d);
  struct Case {
    sample::SamplerKind kind;
    std::vector<int64_t> fanouts;
    bool replace;
  };
  for (const Case& c : {Case{sample::SamplerKind::kNeighbor, {5, 3}, false}, Case{sample::SamplerKind::kNeighbor, {5, 3}, true},
                        Case{sample::SamplerKind::kLadies, {64, 64}, false}}) {
    sample::BulkSamplerOptions bo;
    bo.algorithm = c.kind == sample::SamplerKind::kLadies ? sample::BulkAlgorithm::kLadies : sample::BulkAlgorithm::kGraphSage;
    bo.fanouts = c.fanouts;
    bo.replace = c.replace;
    bo.seed = 11;
    const sample::BulkSampler reference(sample::SampleGraph{graph::CscView::of(d), {}}, bo);
    for (const auto& [k, gpu] : std::vector<std::pair<int, bool>>{{1, false}, {3, false}, {3, true}}) {
      if (gpu && !cuda_available()) continue;  // CudaBulkSampler: the same batches, checked where a GPU is
      for (const auto& [offset, stride] : std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 3}}) {
        SCOPED_TRACE(testing::Message() << "ladies " << (c.kind == sample::SamplerKind::kLadies) << " replace " << c.replace
                                        << " bulk " << k << " gpu " << gpu << " offset " << offset << " stride "
                                        << stride);
        LoaderOptions o = small_options();
        o.gpu_sampling = gpu;
        o.sampler = c.kind;
        o.fanouts = c.fanouts;
        o.replace = c.replace;
        o.bulk = k;
        o.batch_offset = offset;
        o.batch_stride = stride;
        Loader loader(d, &store, ids, o);
        const std::vector<LoadedBatch> got = run_epoch(loader, 2, 2);  // resumed at batch 2
        std::vector<int64_t> expected;
        for (int64_t b = offset; b < loader.num_batches(); b += stride) {
          if (b >= 2) expected.push_back(b);
        }
        ASSERT_EQ(got.size(), expected.size());
        const std::vector<int64_t> order = sample::shuffled_ids(ids, 11, 2);
        for (std::size_t i = 0; i < got.size(); ++i) {
          const int64_t b = expected[i];
          ASSERT_EQ(got[i].index, b);
          const std::span<const int64_t> seeds = sample::batch_seeds(order, o.batch_size, b);
          const std::vector<sample::MiniBatch> alone =
              reference.sample(std::vector<std::span<const int64_t>>{seeds}, sample::minibatch_stream(2, b));
          expect_same_minibatch(got[i].batch, alone[0]);
          EXPECT_EQ(x_bytes(got[i]), test::reference_rows(dataset_dir(), got[i].batch.input_nodes()));
        }
      }
    }
  }
}

TEST(Loader, GpuBulkDeviceBatchesStayOnTheDeviceAndMatchTheCpuLoader) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: bulk device batches through the loader not checked";
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  const std::vector<int64_t> ids = train_ids(d);
  ThreadPool p(2);
  feature::FeatureStore store(d, store_options("30%", "5%"), p);
  OwnedCudaStream consumer(0);
  for (const sample::SamplerKind kind : {sample::SamplerKind::kNeighbor, sample::SamplerKind::kLadies}) {
    for (const bool features : {true, false}) {  // with features the input ids go through the sinks
      SCOPED_TRACE(::testing::Message() << (kind == sample::SamplerKind::kLadies ? "ladies" : "graphsage")
                                        << (features ? " with features" : " without features"));
      LoaderOptions o = small_options();
      o.sampler = kind;
      o.fanouts = kind == sample::SamplerKind::kLadies ? std::vector<int64_t>{64, 32} : std::vector<int64_t>{5, 3};
      o.bulk = 3;
      Loader cpu(d, features ? &store : nullptr, ids, o);
      o.gpu_sampling = true;
      o.device_batches = true;
      Loader gpu(d, features ? &store : nullptr, ids, o);
      const std::vector<LoadedBatch> want = run_epoch(cpu, 1);
      std::vector<LoadedBatch> got = run_epoch(gpu, 1);
      ASSERT_EQ(got.size(), want.size());
      EXPECT_EQ(gpu.stats().blocks_to_host, 0) << "no block was copied to the host";
      for (std::size_t b = 0; b < got.size(); ++b) {
        LoadedBatch& lb = got[b];
        ASSERT_NE(lb.device, nullptr);
        EXPECT_TRUE(lb.batch.blocks.empty());
        expect_same_minibatch(lb.device->to_host(), want[b].batch);  // the test's copy; the loader made none
        EXPECT_EQ(lb.labels, want[b].labels);
        EXPECT_EQ(x_bytes(lb), x_bytes(want[b])) << "features of the input ids the sinks received";
        lb.release_after(consumer.get());
      }
    }
  }
}

TEST(Loader, BadBulkIsRejectedNamingTheOption) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  const auto message = [&](const LoaderOptions& o) -> std::string {
    try {
      Loader(d, nullptr, {0, 1}, o);
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "(accepted)";
  };
  LoaderOptions o = small_options();
  o.bulk = -1;
  EXPECT_NE(message(o).find("bulk"), std::string::npos) << message(o);
  o = small_options();
  o.sampler = sample::SamplerKind::kFastGcn;
  o.fanouts = {64};
  o.bulk = 2;
  EXPECT_NE(message(o).find("bulk with fastgcn"), std::string::npos) << message(o);
  o.bulk = 0;
  EXPECT_EQ(message(o), "(accepted)");
#if !GRAPHTIER_WITH_CUDA
  o = small_options();
  o.bulk = 2;
  o.gpu_sampling = true;
  EXPECT_THROW(Loader(d, nullptr, {0, 1}, o), Unsupported);
#endif
}

TEST(Loader, BadOptionsAndIdsAreRejected) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  LoaderOptions o = small_options();
  EXPECT_THROW(Loader(d, nullptr, {}, o), InvalidArgument);
  EXPECT_THROW(Loader(d, nullptr, {0, kNodes}, o), OutOfRange);
  o.batch_size = 0;
  EXPECT_THROW(Loader(d, nullptr, {0, 1}, o), InvalidArgument);
  o = small_options();
  o.drop_last = true;
  EXPECT_THROW(Loader(d, nullptr, {0, 1}, o), InvalidArgument) << "drop_last leaving no batch";
  o = small_options();
  o.prefetch = 0;
  EXPECT_THROW(Loader(d, nullptr, {0, 1}, o), InvalidArgument);
  Loader idle(d, nullptr, {0, 1}, small_options());
  EXPECT_THROW(idle.next(), InvalidArgument) << "next() before start()";
#if !GRAPHTIER_WITH_CUDA
  o = small_options();
  o.gpu_sampling = true;
  EXPECT_THROW(Loader(d, nullptr, {0, 1}, o), Unsupported);
  o.device_batches = true;
  EXPECT_THROW(Loader(d, nullptr, {0, 1}, o), Unsupported) << "device batches without CUDA";
  o.device_batches = false;
  o.sampler = sample::SamplerKind::kLadies;
  EXPECT_THROW(Loader(d, nullptr, {0, 1}, o), Unsupported) << "layer-wise GPU sampling without CUDA";
#endif
}

TEST(Loader, ARepeatedOriginalIdIsNamedAsGiven) {
  // A renumbered path of 3 nodes: prepared id v is original id perm[v].
  const test::TempDir tmp;
  const std::vector<int64_t> perm{2, 0, 1};
  {
    graph::DatasetWriter w(tmp / "ds", false);
    const std::vector<int64_t> indptr{0, 1, 2, 3};
    const std::vector<int32_t> indices{1, 2, 0};
    w.write_array("indptr", std::span<const int64_t>(indptr));
    w.write_array("indices", std::span<const int32_t>(indices));
    w.write_array("permutation", std::span<const int64_t>(perm));
    graph::Manifest m;
    m.num_nodes = 3;
    m.num_edges = 3;
    w.commit(m);
  }
  const graph::Dataset d = graph::Dataset::open(tmp / "ds");
  LoaderOptions o = small_options();
  o.ids_numbering = graph::Numbering::kOriginal;
  try {
    Loader bad(d, nullptr, {2, 1, 2}, o);  // original 2 is prepared 0: the message names 2
    ADD_FAILURE() << "original id 2 given twice was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), "seed 2 appears more than once (ids in the original numbering)");
  }
  try {
    Loader bad(d, nullptr, {0, 3}, o);
    ADD_FAILURE() << "original id 3 of a 3-node graph was accepted";
  } catch (const OutOfRange& e) {
    EXPECT_NE(std::string(e.what()).find("original node id 3 at position 1"), std::string::npos) << e.what();
  }
}

TEST(Loader, IdsInTheOriginalNumberingAreMappedToTheDatasetsOwn) {
  // A renumbered ring of 6 nodes (v <- v + 1): prepared id v is original id perm[v].
  const test::TempDir tmp;
  const std::vector<int64_t> perm{4, 0, 5, 2, 1, 3};
  {
    graph::DatasetWriter w(tmp / "ds", false);
    const std::vector<int64_t> indptr{0, 1, 2, 3, 4, 5, 6};
    const std::vector<int32_t> indices{1, 2, 3, 4, 5, 0};
    w.write_array("indptr", std::span<const int64_t>(indptr));
    w.write_array("indices", std::span<const int32_t>(indices));
    w.write_array("permutation", std::span<const int64_t>(perm));
    graph::Manifest m;
    m.num_nodes = 6;
    m.num_edges = 6;
    w.commit(m);
  }
  const graph::Dataset d = graph::Dataset::open(tmp / "ds");
  LoaderOptions o = small_options();
  o.shuffle = false;
  o.batch_size = 2;
  o.ids_numbering = graph::Numbering::kOriginal;
  Loader original(d, nullptr, {0, 3, 5}, o);
  const auto batches = run_epoch(original, 0);
  ASSERT_EQ(batches.size(), 2u);
  // Original 0, 3, 5 are prepared 1, 5, 2 (perm[1] = 0, perm[5] = 3, perm[2] = 5).
  EXPECT_EQ(batches[0].batch.seeds, (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(batches[1].batch.seeds, (std::vector<int64_t>{2}));
  o.ids_numbering = graph::Numbering::kPrepared;  // the ids as given
  Loader prepared(d, nullptr, {1, 5, 2}, o);
  const auto same = run_epoch(prepared, 0);
  ASSERT_EQ(same.size(), 2u);
  for (std::size_t b = 0; b < same.size(); ++b) {
    EXPECT_EQ(same[b].batch.seeds, batches[b].batch.seeds);
    const auto a = same[b].batch.input_nodes(), c = batches[b].batch.input_nodes();
    EXPECT_EQ(std::vector<int64_t>(a.begin(), a.end()), std::vector<int64_t>(c.begin(), c.end())) << b;
  }
  o.ids_numbering = graph::Numbering::kOriginal;
  try {
    Loader bad(d, nullptr, {0, 6}, o);
    ADD_FAILURE() << "original id 6 of a 6-node graph was accepted";
  } catch (const OutOfRange& e) {
    EXPECT_NE(std::string(e.what()).find("original node id 6 at position 1"), std::string::npos) << e.what();
  }
  // Unset: a renumbered dataset cannot tell original ids from its own, so it refuses them; its
  // splits are its own ids whatever is set.
  o.ids_numbering.reset();
  try {
    Loader unsaid(d, nullptr, {0, 3, 5}, o);
    ADD_FAILURE() << "ids without a numbering were read in one on a renumbered dataset";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("ids_numbering='original'"), std::string::npos) << e.what();
  }
}

TEST(Loader, IdsWithoutANumberingAreTheDatasetsOwnWhereItWasNeverRenumbered) {
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  ASSERT_FALSE(d.has_permutation());
  LoaderOptions o = small_options();
  o.shuffle = false;
  o.batch_size = 2;
  ASSERT_FALSE(o.ids_numbering.has_value());
  Loader unsaid(d, nullptr, {3, 1}, o);
  EXPECT_EQ(run_epoch(unsaid, 0).at(0).batch.seeds, (std::vector<int64_t>{3, 1}));
}

TEST(Loader, AnEmptySplitIsNamed) {
  const test::TempDir tmp;
  {
    graph::DatasetWriter w(tmp / "ds", false);
    const std::vector<int64_t> indptr{0, 1, 2, 3}, none, valid{1};
    const std::vector<int32_t> indices{1, 2, 0};
    w.write_array("indptr", std::span<const int64_t>(indptr));
    w.write_array("indices", std::span<const int32_t>(indices));
    w.write_array("train", std::span<const int64_t>(none));
    w.write_array("valid", std::span<const int64_t>(valid));
    graph::Manifest m;
    m.num_nodes = 3;
    m.num_edges = 3;
    w.commit(m);
  }
  const graph::Dataset d = graph::Dataset::open(tmp / "ds");
  EXPECT_NE(Loader::over_split(d, nullptr, graph::Split::kValid, small_options()), nullptr);
  try {
    Loader::over_split(d, nullptr, graph::Split::kTrain, small_options());
    ADD_FAILURE() << "an empty train split was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), "the train split of " + d.dir() +
                                         " is empty: no node to iterate (graphtier info lists the splits)");
  }
}

TEST(Loader, GpuSamplingWithoutCudaNamesTheOption) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is visible: GPU sampling works here";
  const graph::Dataset d = graph::Dataset::open(dataset_dir());
  LoaderOptions o = small_options();
  o.gpu_sampling = true;
  try {
    Loader loader(d, nullptr, train_ids(d), o);
    ADD_FAILURE() << "GPU sampling was accepted without CUDA";
  } catch (const Unsupported& e) {
    EXPECT_EQ(std::string(e.what()), "gpu_sampling (--gpu-sampling) needs graphtier built with CUDA (the 'cuda' "
                                     "preset) and a visible GPU; without them, leave it off to sample on the CPU");
  }
}

}  // namespace
}  // namespace graphtier::loader
