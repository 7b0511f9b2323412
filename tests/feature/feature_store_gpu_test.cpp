// The GPU tiers (CUDA builds on a GPU machine): the same byte-exactness as the CPU tiers, for
// device and host outputs, each pinned-tier path, GPU cache hits, fills and window pinning; the
// device cache's hits, fills, bypasses and evictions against the naive host model; rows beyond
// 2^31 bytes of the pinned tier; the output consumed on another stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#if GRAPHTIER_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "cache/gpu_cache_reference.hpp"
#include "feature/feature_test_util.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/feature/feature_store.hpp"
#include "io/io_test_util.hpp"

namespace graphtier::feature {
namespace {

constexpr int64_t kGpuNodes = 1200;

std::vector<std::byte> gather_device(FeatureStore& store, std::span<const int64_t> ids, const DeviceIds& device_ids = {}) {
  const auto bytes = ids.size() * static_cast<std::size_t>(store.layout().row_bytes());
  Buffer out(MemoryKind::kDevice, std::max<std::size_t>(bytes, 1));
  store.gather(ids,
               TensorView::contiguous(out.data(), store.layout().dtype,
                                      {static_cast<int64_t>(ids.size()), store.layout().dim}, MemoryKind::kDevice),
               device_ids);
  std::vector<std::byte> host(bytes);
  copy_bytes(host.data(), MemoryKind::kHost, out.data(), MemoryKind::kDevice, bytes);
  return host;
}

/// One step of a run with a window of three batches, on the store and on the host model of its GPU
/// cache at once: announce `ids`; once three are announced, gather the oldest and compare its rows
/// with the file and its hits, fills, bypasses and evictions with the model's, then consume it.
/// The cache holds the ids from 100 on (the stores of these tests keep rows [0, 100) hot).
void windowed_step(FeatureStore& store, test::NaiveGpuCache& model, const std::string& dir,
                   std::vector<std::vector<int64_t>>& window, std::vector<int64_t> ids, uint64_t g) {
  const auto cached_of = [](const std::vector<int64_t>& v) {
    std::vector<int64_t> cached;
    for (const int64_t id : v) {
      if (id >= 100) cached.push_back(id);
    }
    return cached;
  };
  store.window(ids, FeatureStore::kAnnounce);
  model.announce(cached_of(ids));
  window.push_back(std::move(ids));
  if (window.size() < 3) return;
  const std::vector<int64_t> batch = window.front();
  window.erase(window.begin());
  const std::vector<int64_t> batch_cached = cached_of(batch);
  ASSERT_EQ(gather_device(store, batch), test::reference_rows(dir, batch)) << "gather " << g;
  const test::GpuCacheCounts want = model.gather(batch_cached);
  const GatherStats s = store.last_gather();
  EXPECT_EQ(s.gpu_cache.rows, want.hits) << "gather " << g;
  EXPECT_EQ(s.cache_fills, want.fills) << "gather " << g;
  EXPECT_EQ(s.cache_bypasses, want.bypasses) << "gather " << g;
  EXPECT_EQ(s.gpu_cache_evictions, want.evictions) << "gather " << g;
  store.window(batch, FeatureStore::kConsume);
  model.consume(batch_cached);
}

TEST(FeatureStoreGpuTest, EveryTierAndPathIsByteExact) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU tiers (hot tier, GPU cache, zero-copy) not checked";
  const test::Watchdog watchdog(120);
  ThreadPool pool(2);
  struct Case {
    int64_t dim;
    DType dtype;
    int64_t alignment;
  };
  // 96 B packed rows (16-byte path, not 128-aligned: the shifted loads), 80 B fp16 rows at a 128 B
  // stride, 50 B bf16 packed rows (byte path), 4400 B rows at an 8 KiB stride.
  for (const Case c : {Case{24, DType::kFloat32, 0}, Case{40, DType::kFloat16, 512}, Case{25, DType::kBFloat16, 0},
                       Case{1100, DType::kFloat32, 4096}}) {
    const std::string& dir = test::feature_dataset(kGpuNodes, c.dim, c.dtype, c.alignment);
    for (const PinnedPath path : {PinnedPath::kMeasured, PinnedPath::kZeroCopy, PinnedPath::kCpuCopy}) {
      SCOPED_TRACE("dim " + std::to_string(c.dim) + " path " + std::to_string(static_cast<int>(path)));
      FeatureStoreOptions options;
      options.budgets.gpu_hot = Budget::percent(20);
      options.budgets.gpu_cache = Budget::percent(10);
      options.budgets.cpu_buffer = Budget::percent(30);
      options.budgets.host_cache = Budget::percent(5);
      options.pinned_path = path;
      options.io_depth = 8;
      FeatureStore store(graph::Dataset::open(dir), options, pool);
      for (uint64_t b = 0; b < 4; ++b) {
        const std::vector<int64_t> ids = test::uniform_ids(3000, kGpuNodes, 60 + b);
        ASSERT_EQ(gather_device(store, ids), test::reference_rows(dir, ids)) << "batch " << b;
        const GatherStats s = store.last_gather();
        EXPECT_GT(s.gpu_hot.rows, 0);
        EXPECT_EQ(s.gpu_hot.rows + s.gpu_cache.rows + s.host.rows + s.host_cache.rows + s.storage.rows,
                  static_cast<int64_t>(ids.size()));
        if (b > 0) {
          EXPECT_GT(s.gpu_cache.rows, 0);
        }
        // Into host memory through the device.
        std::vector<std::byte> host(ids.size() * static_cast<std::size_t>(store.layout().row_bytes()));
        store.gather(ids, TensorView::contiguous(host.data(), store.layout().dtype,
                                                 {static_cast<int64_t>(ids.size()), store.layout().dim}));
        ASSERT_EQ(host, test::reference_rows(dir, ids));
      }
    }
  }
}

// Every tier (hot 20%, cache 10%, pinned 30%, the rest storage), the pinned path forced.
FeatureStoreOptions every_tier(PinnedPath path) {
  FeatureStoreOptions options;
  options.budgets.gpu_hot = Budget::percent(20);
  options.budgets.gpu_cache = Budget::percent(10);
  options.budgets.cpu_buffer = Budget::percent(30);
  options.io_depth = 8;
  options.pinned_path = path;
  return options;
}

// A GPU-sampled minibatch's input nodes are on the device already: the tiers read them there (no
// upload; the device routes them), with the same rows and the same cache decisions as from the host copy. The
// pinned path is forced, once each way: measured, each store's own calibration splits the pinned
// rows between zero-copy and the CPU, and the two stores' routes (so their hit counts) would differ
// for that reason alone (seen on an H200: shares 0.64 and 0.58, hits 196 against 201).
TEST(FeatureStoreGpuTest, IdsAlreadyOnTheDeviceGatherTheSameRows) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: gathers from device ids not checked";
  const test::Watchdog watchdog(120);
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kGpuNodes, 24, DType::kFloat32, 0);
  for (const PinnedPath path : {PinnedPath::kZeroCopy, PinnedPath::kCpuCopy}) {
    SCOPED_TRACE(path == PinnedPath::kZeroCopy ? "zero-copy" : "CPU copy");
    const FeatureStoreOptions options = every_tier(path);
    FeatureStore from_host(graph::Dataset::open(dir), options, pool);
    FeatureStore from_device(graph::Dataset::open(dir), options, pool);
    for (uint64_t b = 0; b < 4; ++b) {
      const std::vector<int64_t> ids = test::uniform_ids(3000, kGpuNodes, 90 + b);
      Buffer on_device(MemoryKind::kDevice, ids.size() * sizeof(int64_t));
      copy_bytes(on_device.data(), MemoryKind::kDevice, ids.data(), MemoryKind::kHost, ids.size() * sizeof(int64_t));
      const std::vector<std::byte> rows =
          gather_device(from_device, ids, DeviceIds{static_cast<const int64_t*>(on_device.data()), 0});
      ASSERT_EQ(rows, test::reference_rows(dir, ids)) << "batch " << b;
      ASSERT_EQ(rows, gather_device(from_host, ids)) << "batch " << b;
      const GatherStats d = from_device.last_gather(), h = from_host.last_gather();
      EXPECT_EQ(d.gpu_cache.rows, h.gpu_cache.rows) << "batch " << b;
      EXPECT_EQ(d.cache_fills, h.cache_fills) << "batch " << b;
      if (b > 0) {
        EXPECT_GT(d.gpu_cache.rows, 0) << "batch " << b << ": the cache served nothing";
      }
    }
  }
}

// Every id the GPU tiers gather is checked on the device as it is routed, whether the caller hands
// the ids there or the tiers upload them (the host checks none first): a bad id reads nothing,
// takes no line, and the gather throws OutOfRange naming it and its position; the store then
// gathers as before. Both routings: on the device before the serve kernel (a pinned tier split with the
// CPU) and in the serve kernel (nothing staged).
TEST(FeatureStoreGpuTest, BadIdsAreRefusedOnTheDeviceAndLeaveTheStoreExact) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the device's id check not checked";
  const test::Watchdog watchdog(120);
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kGpuNodes, 24, DType::kFloat32, 0);
  for (const PinnedPath path : {PinnedPath::kCpuCopy, PinnedPath::kZeroCopy}) {
    for (const bool from_host : {false, true}) {
      SCOPED_TRACE(path == PinnedPath::kZeroCopy ? "routed in the serve kernel" : "routed before it");
      SCOPED_TRACE(from_host ? "ids uploaded by the tiers" : "ids handed on the device");
      const FeatureStoreOptions options = every_tier(path);
      FeatureStore store(graph::Dataset::open(dir), options, pool);
      const int64_t bads[] = {-1, kGpuNodes, int64_t{1} << 40, std::numeric_limits<int64_t>::min()};
      for (std::size_t j = 0; j < std::size(bads); ++j) {
        std::vector<int64_t> ids = test::uniform_ids(3000, kGpuNodes, 140 + j);
        const std::size_t at = 700 * j + 11;
        ids[at] = bads[j];
        Buffer on_device(MemoryKind::kDevice, ids.size() * sizeof(int64_t));
        const auto gather_ids = [&] {
          if (from_host) return gather_device(store, ids);
          copy_bytes(on_device.data(), MemoryKind::kDevice, ids.data(), MemoryKind::kHost,
                     ids.size() * sizeof(int64_t));
          return gather_device(store, ids, DeviceIds{static_cast<const int64_t*>(on_device.data()), 0});
        };
        const int64_t rows_before = store.total().rows;
        try {
          gather_ids();
          FAIL() << "id " << bads[j] << " was accepted";
        } catch (const OutOfRange& e) {
          const std::string what = e.what();
          EXPECT_NE(what.find("feature id " + std::to_string(bads[j]) + " at position " + std::to_string(at)),
                    std::string::npos)
              << what;
        }
        EXPECT_EQ(store.total().rows, rows_before) << "a refused gather was counted";
        // The same ids without the bad one: every row exact, the cache intact.
        ids[at] = 5;
        ASSERT_EQ(gather_ids(), test::reference_rows(dir, ids)) << "after id " << bads[j];
      }
      EXPECT_GT(store.total().gpu_cache.rows, 0) << "the cache served nothing";
    }
  }
}

TEST(FeatureStoreGpuTest, WindowPinsGpuCacheLines) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU cache window not checked";
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kGpuNodes, 24, DType::kFloat32, 0);
  FeatureStoreOptions options;
  options.budgets.gpu_cache = Budget::bytes(32 * 96);
  options.io_depth = 8;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  const std::vector<int64_t> next{10, 20, 30, 40};
  store.window(next, FeatureStore::kAnnounce);
  gather_device(store, next);
  for (uint64_t b = 0; b < 10; ++b) {
    std::vector<int64_t> ids = test::uniform_ids(64, kGpuNodes, 80 + b);
    for (int64_t& id : ids) id = 100 + id % (kGpuNodes - 100);
    gather_device(store, ids);
  }
  EXPECT_EQ(gather_device(store, next), test::reference_rows(dir, next));
  EXPECT_EQ(store.last_gather().gpu_cache.rows, 4);
  store.window(next, FeatureStore::kConsume);
}

TEST(FeatureStoreGpuTest, CacheCountsMatchTheHostModelOverAWindow) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the device cache's counts against the host model not checked";
  const test::Watchdog watchdog(120);
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kGpuNodes, 24, DType::kFloat32, 0);
  constexpr int64_t kLines = 48;
  // Storage rows (the probe route, with the host reading only misses) and pinned rows read by
  // zero-copy (misses served inside the serve kernel).
  for (const bool pinned : {false, true}) {
    SCOPED_TRACE(pinned ? "pinned tier, zero-copy" : "storage tier");
    FeatureStoreOptions options;
    options.budgets.gpu_hot = Budget::bytes(100 * 96);  // ids [0, 100) hot: the cache serves [100, kGpuNodes)
    options.budgets.gpu_cache = Budget::bytes(kLines * 96);
    options.budgets.cpu_buffer = pinned ? Budget::percent(100) : Budget::bytes(0);
    options.pinned_path = PinnedPath::kZeroCopy;
    options.io_depth = 8;
    FeatureStore store(graph::Dataset::open(dir), options, pool);
    ASSERT_EQ(store.tiers().gpu_cache_rows, kLines);
    test::NaiveGpuCache model(kLines);
    std::vector<std::vector<int64_t>> window;
    for (uint64_t g = 0; g < 40; ++g) {
      // Skewed to a few hundred ids so that lines are hit, evicted and pinned.
      std::vector<int64_t> ids = test::uniform_ids(40 + g % 5 * 30, 300, 900 + g);
      if (g % 4 == 0) ids.push_back(kGpuNodes - 1);
      ASSERT_NO_FATAL_FAILURE(windowed_step(store, model, dir, window, std::move(ids), g));
    }
  }
}

TEST(FeatureStoreGpuTest, ManyLinesAndLargeRequestsMatchTheHostModel) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the victim sweep over many lines and grid-stride rounds not checked";
  const test::Watchdog watchdog(300);
  ThreadPool pool(2);
  constexpr int64_t kManyNodes = 20000;
  const std::string& dir = test::feature_dataset(kManyNodes, 24, DType::kFloat32, 0);
  // 1 line (the sweep's one block, an ordinary launch), 2500 lines (three blocks of 1024 threads,
  // cooperative: victims across the blocks' boundaries) and 12000 (twelve); pinned rows read by
  // zero-copy.
  for (const int64_t lines : {int64_t{1}, int64_t{2500}, int64_t{12000}}) {
    SCOPED_TRACE("lines " + std::to_string(lines));
    FeatureStoreOptions options;
    options.budgets.gpu_hot = Budget::bytes(100 * 96);  // ids [0, 100) hot
    options.budgets.gpu_cache = Budget::bytes(lines * 96);
    options.budgets.cpu_buffer = Budget::percent(100);
    options.pinned_path = PinnedPath::kZeroCopy;
    options.io_depth = 8;
    FeatureStore store(graph::Dataset::open(dir), options, pool);
    ASSERT_EQ(store.tiers().gpu_cache_rows, lines);
    test::NaiveGpuCache model(lines);
    std::vector<std::vector<int64_t>> window;
    for (uint64_t g = 0; g < 14; ++g) {
      // Every third request has 600000 positions, more than the 65535 blocks x 8 warps of one
      // launch: every grid-stride loop of the gather takes a second round. The others are skewed
      // to 4000 ids, so that lines are hit, evicted and pinned.
      const bool large = g % 3 == 2;
      std::vector<int64_t> ids = test::uniform_ids(large ? 600000 : 3000 + g * 500, large ? kManyNodes : 4000, 1300 + g);
      ASSERT_NO_FATAL_FAILURE(windowed_step(store, model, dir, window, std::move(ids), g));
    }
  }
}

TEST(FeatureStoreGpuTest, StoreAndGatherLeaveTheCallersCurrentDeviceAsItWas) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the caller's current device after a gather not checked";
#if GRAPHTIER_WITH_CUDA
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  if (devices < 2) GTEST_SKIP() << "needs two GPUs (the store's tiers on one, the caller on the other); has " << devices;
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kGpuNodes, 24, DType::kFloat32, 0);
  FeatureStoreOptions options;
  options.budgets.gpu_hot = Budget::percent(10);
  options.budgets.gpu_cache = Budget::percent(10);
  options.budgets.cpu_buffer = Budget::percent(40);
  options.io_depth = 8;
  options.device = 1;
  // A caller that drives device 0 (as PyTorch's current device) makes the store and gathers from
  // it into host memory.
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0) << "after the store was made";
  const std::vector<int64_t> ids = test::uniform_ids(500, kGpuNodes, 77);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  std::vector<std::byte> host(ids.size() * 96);
  store.window(ids, FeatureStore::kAnnounce);
  store.gather(ids, TensorView::contiguous(host.data(), DType::kFloat32, {static_cast<int64_t>(ids.size()), 24}));
  store.window(ids, FeatureStore::kConsume);
  EXPECT_EQ(host, test::reference_rows(dir, ids));
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0) << "after a gather";
#endif
}

TEST(FeatureStoreGpuTest, OutputIsCompleteForAnotherStreamWhenGatherReturns) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: output consumed on another stream not checked";
#if GRAPHTIER_WITH_CUDA
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kGpuNodes, 24, DType::kFloat32, 0);
  FeatureStoreOptions options;
  options.budgets.gpu_hot = Budget::percent(10);
  options.budgets.gpu_cache = Budget::percent(10);
  options.budgets.cpu_buffer = Budget::percent(40);
  options.io_depth = 8;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  cudaStream_t producer = nullptr;
  cudaStream_t consumer = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking), cudaSuccess);
  for (uint64_t b = 0; b < 4; ++b) {
    const std::vector<int64_t> ids = test::uniform_ids(4000, kGpuNodes, 700 + b);
    const auto bytes = ids.size() * 96;
    // The output is allocated and dirtied on the caller's own non-default stream, which it
    // finishes before the gather (the caller's part of the contract).
    void* out = nullptr;
    ASSERT_EQ(cudaMallocAsync(&out, bytes, producer), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(out, 0xab, bytes, producer), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(producer), cudaSuccess);
    store.gather(ids, TensorView::contiguous(out, DType::kFloat32, {static_cast<int64_t>(ids.size()), 24},
                                             MemoryKind::kDevice));
    // Consumed at once on a third stream that waits for nothing.
    std::vector<std::byte> host(bytes);
    ASSERT_EQ(cudaMemcpyAsync(host.data(), out, bytes, cudaMemcpyDeviceToHost, consumer), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(consumer), cudaSuccess);
    ASSERT_EQ(host, test::reference_rows(dir, ids)) << "batch " << b;
    ASSERT_EQ(cudaFreeAsync(out, consumer), cudaSuccess);
  }
  ASSERT_EQ(cudaStreamSynchronize(consumer), cudaSuccess);
  cudaStreamDestroy(producer);
  cudaStreamDestroy(consumer);
#endif
}

TEST(FeatureStoreGpuTest, WindowChangesFromAnotherThreadKeepGathersExact) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: announce/consume racing gathers not checked";
  const test::Watchdog watchdog(120);
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kGpuNodes, 24, DType::kFloat32, 0);
  FeatureStoreOptions options;
  options.budgets.gpu_hot = Budget::percent(5);
  options.budgets.gpu_cache = Budget::bytes(64 * 96);
  options.budgets.cpu_buffer = Budget::percent(40);
  options.io_depth = 8;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  std::atomic<bool> stop{false};
  // The sampler's side: announce a batch, later consume it, while the gathers below run (their
  // probes and updates share the GPU tiers' stream with these window changes). The batches grow,
  // so that the device copy of the ids is replaced while earlier window kernels may be queued.
  std::thread sampler([&] {
    for (uint64_t b = 0; !stop.load(); ++b) {
      const std::vector<int64_t> ids = test::uniform_ids(50 * (1 + b % 400), kGpuNodes, 5000 + b);
      store.window(ids, FeatureStore::kAnnounce);
      store.window(ids, FeatureStore::kConsume);
    }
  });
  for (uint64_t b = 0; b < 30; ++b) {
    const std::vector<int64_t> ids = test::uniform_ids(2000, 400, 6000 + b);
    const bool exact = gather_device(store, ids) == test::reference_rows(dir, ids);
    EXPECT_TRUE(exact) << "batch " << b;
    if (!exact) break;  // not ASSERT: the sampler thread must be joined
  }
  stop = true;
  sampler.join();
  // Every announce was consumed, so no line may stay pinned: 64 new distinct ids at a time, every
  // one of them gets a line (a leaked reuse count on a held key would make one bypass).
  const int64_t gpu_end = store.tiers().ranges.gpu_end;
  for (int64_t begin = gpu_end; begin < kGpuNodes; begin += 64) {
    std::vector<int64_t> ids;
    for (int64_t id = begin; id < std::min(kGpuNodes, begin + 64); ++id) ids.push_back(id);
    ASSERT_EQ(gather_device(store, ids), test::reference_rows(dir, ids)) << "ids from " << begin;
    EXPECT_EQ(store.last_gather().cache_bypasses, 0) << "ids from " << begin;
  }
}

// Bytes free for a test that needs them (MemAvailable), 0 when unknown.
int64_t available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

TEST(FeatureStoreGpuTest, RowsBeyondTwoGiBOfThePinnedTierAreExact) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: byte offsets >= 2^31 in the pinned tier not checked";
  constexpr int64_t kGiB = int64_t{1} << 30;
  // A 5 GiB table of 128 B rows: pinned once (5 GiB), written to disk once, read back as reference.
  if (available_memory() < 16 * kGiB) {
    GTEST_SKIP() << "needs 16 GiB of available memory for a 5 GiB pinned table; has " << available_memory() / kGiB
                 << " GiB";
  }
  const test::Watchdog watchdog(540);
  ThreadPool pool(8);
  constexpr int64_t kRows = 5 * kGiB / 128 + 1000;
  // Generated here with a wide pool and few edges: only the features matter.
  const test::TempDir root;
  const std::string dir = root / "big";
  {
    graph::GenerateOptions g;
    g.num_nodes = kRows;
    g.num_edges = 4096;
    g.num_classes = 3;
    g.feature_dim = 32;
    g.seed = 5;
    ThreadPool wide(16);
    graph::generate_dataset(dir, g, wide);
  }
  FeatureStoreOptions options;
  options.budgets.gpu_cache = Budget::bytes(8192 * 128);
  options.budgets.cpu_buffer = Budget::percent(100);
  options.pinned_path = PinnedPath::kZeroCopy;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  ASSERT_EQ(store.tiers().ranges.cpu_end, kRows);
  // Rows near the end, all beyond 2^31 bytes (and beyond 2^32), a few repeated.
  std::vector<int64_t> ids;
  for (int64_t k = 0; k < 4096; ++k) ids.push_back(kRows - 1 - k * 977 % 3000000);
  for (int64_t k = 0; k < 64; ++k) ids.push_back(ids[static_cast<std::size_t>(k * 13)]);
  for (const int64_t id : ids) ASSERT_GT(id * 128, 4 * kGiB);
  const std::vector<std::byte> want = test::reference_rows(dir, ids);
  ASSERT_EQ(gather_device(store, ids), want);  // zero-copy reads, and fills of the cache
  GatherStats s = store.last_gather();
  EXPECT_GT(s.host.rows, 0);
  EXPECT_GT(s.cache_fills, 0);
  ASSERT_EQ(gather_device(store, ids), want);  // the same rows from the cache's lines
  s = store.last_gather();
  EXPECT_EQ(s.gpu_cache.rows, static_cast<int64_t>(ids.size()));
}

// The device routes every gather (graphtier/feature/gather_route.hpp): for each tier layout (hot
// only, pinned only, storage only with and without a cache, every tier with and without a cache),
// each pinned path, ids from the host and from the device, into device and host memory, the rows
// are the file's and the device's census matches the host's count of each tier.
TEST(FeatureStoreGpuTest, DeviceRoutedGathersAreExactForEveryLayoutPathAndIdSource) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: device-routed gathers not checked";
  const test::Watchdog watchdog(120);
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kGpuNodes, 24, DType::kFloat32, 0);
  struct Layout {
    const char* name;
    int gpu_hot, gpu_cache, cpu, host_cache;  // percents
  };
  for (const Layout l : {Layout{"hot only", 100, 0, 0, 0}, Layout{"pinned only", 0, 0, 100, 0},
                         Layout{"storage only", 0, 0, 0, 10}, Layout{"storage and cache", 0, 30, 0, 0},
                         Layout{"every tier", 20, 0, 30, 5}, Layout{"every tier and cache", 20, 10, 30, 5},
                         Layout{"pinned and cache", 0, 20, 100, 0}}) {
    for (const PinnedPath path : {PinnedPath::kMeasured, PinnedPath::kZeroCopy, PinnedPath::kCpuCopy}) {
      SCOPED_TRACE(std::string(l.name) + ", path " + std::to_string(static_cast<int>(path)));
      FeatureStoreOptions options;
      options.budgets.gpu_hot = Budget::percent(l.gpu_hot);
      options.budgets.gpu_cache = Budget::percent(l.gpu_cache);
      options.budgets.cpu_buffer = Budget::percent(l.cpu);
      options.budgets.host_cache = Budget::percent(l.host_cache);
      options.pinned_path = path;
      options.io_depth = 8;
      FeatureStore store(graph::Dataset::open(dir), options, pool);
      const TierRanges& r = store.tiers().ranges;
      for (uint64_t b = 0; b < 3; ++b) {
        // A single row, then full batches.
        const std::vector<int64_t> ids = b == 0 ? std::vector<int64_t>{kGpuNodes - 1 - static_cast<int64_t>(l.gpu_hot)}
                                                : test::uniform_ids(2500, kGpuNodes, 300 + b);
        const std::vector<std::byte> want = test::reference_rows(dir, ids);
        const auto n = static_cast<int64_t>(ids.size());
        const auto hot = std::count_if(ids.begin(), ids.end(), [&](int64_t id) { return id < r.gpu_end; });
        const auto pinned =
            std::count_if(ids.begin(), ids.end(), [&](int64_t id) { return id >= r.gpu_end && id < r.cpu_end; });
        const auto check_stats = [&](const char* what) {
          const GatherStats s = store.last_gather();
          EXPECT_EQ(s.gpu_hot.rows, hot) << what << ", batch " << b;
          EXPECT_EQ(s.gpu_hot.rows + s.gpu_cache.rows + s.host.rows + s.host_cache.rows + s.storage.rows, n)
              << what << ", batch " << b;
          if (l.gpu_cache == 0) {
            EXPECT_EQ(s.host.rows, pinned) << what << ", batch " << b;
          }
        };
        ASSERT_EQ(gather_device(store, ids), want) << "host ids, batch " << b;
        check_stats("host ids");
        Buffer on_device(MemoryKind::kDevice, ids.size() * sizeof(int64_t));
        copy_bytes(on_device.data(), MemoryKind::kDevice, ids.data(), MemoryKind::kHost, ids.size() * sizeof(int64_t));
        ASSERT_EQ(gather_device(store, ids, DeviceIds{static_cast<const int64_t*>(on_device.data()), 0}), want)
            << "device ids, batch " << b;
        check_stats("device ids");
        std::vector<std::byte> host(want.size());
        store.gather(ids, TensorView::contiguous(host.data(), store.layout().dtype, {n, store.layout().dim}));
        ASSERT_EQ(host, want) << "host output, batch " << b;
        check_stats("host output");
      }
    }
  }
}

// A cache that holds every storage row it has seen: the second gather of the same storage-only
// batch is all hits, and the host learns from the missed positions alone (none) that there is
// nothing to read or update; a third batch mixing seen and new rows fills only the new ones.
TEST(FeatureStoreGpuTest, StorageRowsThatAllHitNeedNoReadsAndNoFills) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: all-hit gathers of storage rows not checked";
  const test::Watchdog watchdog(60);
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kGpuNodes, 24, DType::kFloat32, 0);
  FeatureStoreOptions options;
  options.budgets.gpu_cache = Budget::percent(100);
  options.io_depth = 8;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  std::vector<int64_t> ids = test::uniform_ids(2000, kGpuNodes / 2, 41);
  ASSERT_EQ(gather_device(store, ids), test::reference_rows(dir, ids));
  GatherStats s = store.last_gather();
  EXPECT_GT(s.cache_fills, 0);
  EXPECT_GT(s.storage.rows, 0);
  ASSERT_EQ(gather_device(store, ids), test::reference_rows(dir, ids));
  s = store.last_gather();
  EXPECT_EQ(s.gpu_cache.rows, static_cast<int64_t>(ids.size()));
  EXPECT_EQ(s.cache_fills, 0);
  EXPECT_EQ(s.storage.rows, 0);
  EXPECT_EQ(s.io.reads, 0);
  // Half seen, half new (ids from the upper half of the table were never gathered).
  std::vector<int64_t> mixed(ids.begin(), ids.begin() + 500);
  for (int64_t k = 0; k < 500; ++k) mixed.push_back(kGpuNodes / 2 + k);
  ASSERT_EQ(gather_device(store, mixed), test::reference_rows(dir, mixed));
  s = store.last_gather();
  EXPECT_EQ(s.gpu_cache.rows, 500);
  EXPECT_EQ(s.cache_fills, 500);
  EXPECT_EQ(s.storage.rows, 500);
}

// The output is stream-ordered memory of the caller's stream, still being written there when
// gather is called: with output_after the tiers wait for that stream on the device, so the last
// write is the gather's. Without the wait the memsets queued behind a long one would land after
// the gather's rows.
TEST(FeatureStoreGpuTest, OutputAfterOrdersTheGatherBehindTheOutputStream) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: stream-ordered outputs not checked";
#if GRAPHTIER_WITH_CUDA
  const test::Watchdog watchdog(60);
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kGpuNodes, 24, DType::kFloat32, 0);
  FeatureStoreOptions options;
  options.budgets.gpu_hot = Budget::percent(20);
  options.budgets.gpu_cache = Budget::percent(10);
  options.budgets.cpu_buffer = Budget::percent(30);
  options.pinned_path = PinnedPath::kCpuCopy;  // rows from both of the tiers' streams
  options.io_depth = 8;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  cudaStream_t producer = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking), cudaSuccess);
  const std::size_t slow_bytes = std::size_t{512} << 20;
  void* slow = nullptr;
  ASSERT_EQ(cudaMalloc(&slow, slow_bytes), cudaSuccess);
  for (uint64_t b = 0; b < 3; ++b) {
    const std::vector<int64_t> ids = test::uniform_ids(3000, kGpuNodes, 810 + b);
    const auto bytes = ids.size() * 96;
    void* out = nullptr;
    ASSERT_EQ(cudaMallocAsync(&out, bytes, producer), cudaSuccess);
    for (int i = 0; i < 8; ++i) ASSERT_EQ(cudaMemsetAsync(slow, i, slow_bytes, producer), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(out, 0xab, bytes, producer), cudaSuccess);
    const CudaStream after{producer};
    store.gather(ids,
                 TensorView::contiguous(out, DType::kFloat32, {static_cast<int64_t>(ids.size()), 24}, MemoryKind::kDevice),
                 {}, &after);
    std::vector<std::byte> host(bytes);
    ASSERT_EQ(cudaMemcpyAsync(host.data(), out, bytes, cudaMemcpyDeviceToHost, producer), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(producer), cudaSuccess);
    ASSERT_EQ(host, test::reference_rows(dir, ids)) << "batch " << b;
    ASSERT_EQ(cudaFreeAsync(out, producer), cudaSuccess);
  }
  ASSERT_EQ(cudaStreamSynchronize(producer), cudaSuccess);
  cudaFree(slow);
  cudaStreamDestroy(producer);
#endif
}

}  // namespace
}  // namespace graphtier::feature
