// The feature store in CPU-only mode: X[ids] byte for byte for every combination of host tier,
// host cache and storage, every dtype and row layout; budgets of zero, larger than the table and
// smaller than one request; out-of-range ids rejected before any read; window buffering through
// the store; faults from the read device (short reads, EAGAIN: exact; EIO: named, never cached).
#include "graphtier/feature/feature_store.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "feature/feature_test_util.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/io/fault_injection.hpp"
#include "io/io_test_util.hpp"

namespace graphtier::feature {
namespace {

using test::uniform_ids;
using test::reference_rows;
using test::Watchdog;

constexpr int64_t kNodes = 1200;

struct Combo {
  const char* name;
  Budget cpu;
  Budget host_cache;
};

std::vector<Combo> combos() {
  return {
      {"all-storage", Budget::bytes(0), Budget::bytes(0)},
      {"all-host", Budget::percent(100), Budget::bytes(0)},
      {"host+storage", Budget::percent(30), Budget::bytes(0)},
      {"host+cache+storage", Budget::percent(30), Budget::percent(20)},
      {"cache+storage", Budget::bytes(0), Budget::percent(50)},
      {"cache-smaller-than-request", Budget::percent(10), Budget::bytes(2000)},
      {"budgets-larger-than-table", Budget::bytes(int64_t{1} << 40), Budget::bytes(int64_t{1} << 40)},
      {"cache-larger-than-table", Budget::bytes(0), Budget::bytes(int64_t{1} << 40)},
  };
}

std::vector<std::byte> gather(FeatureStore& store, std::span<const int64_t> ids) {
  std::vector<std::byte> out(ids.size() * static_cast<std::size_t>(store.layout().row_bytes()));
  store.gather(ids, TensorView::contiguous(out.data(), store.layout().dtype,
                                           {static_cast<int64_t>(ids.size()), store.layout().dim}));
  return out;
}

/// gather() into an output `offset` bytes past a page (4096: rows of whole blocks that no cache
/// keeps are read into it in place; 64: the read engine copies them there), the bytes before and
/// after it checked untouched.
std::vector<std::byte> gather_at(FeatureStore& store, std::span<const int64_t> ids, std::size_t offset) {
  constexpr auto kGuard = std::byte{0xab};
  const std::size_t bytes = ids.size() * static_cast<std::size_t>(store.layout().row_bytes());
  Buffer buffer(MemoryKind::kHost, offset + bytes + 4096);
  auto* base = static_cast<std::byte*>(buffer.data());
  std::memset(base, static_cast<int>(kGuard), offset + bytes + 4096);
  store.gather(ids, TensorView::contiguous(base + offset, store.layout().dtype,
                                           {static_cast<int64_t>(ids.size()), store.layout().dim}));
  for (std::size_t b = 0; b < offset; ++b) EXPECT_EQ(base[b], kGuard) << "byte " << b << " before the output";
  for (std::size_t b = offset + bytes; b < offset + bytes + 4096; ++b) {
    EXPECT_EQ(base[b], kGuard) << "byte " << b - offset - bytes << " after the output";
  }
  return {base + offset, base + offset + bytes};
}

void expect_tier_rows_add_up(const GatherStats& s, std::size_t n) {
  EXPECT_EQ(s.rows, static_cast<int64_t>(n));
  EXPECT_EQ(s.host.rows + s.host_cache.rows + s.storage.rows, static_cast<int64_t>(n));
  EXPECT_EQ(s.gpu_hot.rows + s.gpu_cache.rows, 0);
}

struct LayoutCase {
  int64_t dim;
  DType dtype;
  int64_t alignment;
};

TEST(FeatureStoreTest, ATableWithGivenTiersServesItsRowsByteExact) {
  // One node type's table of a typed dataset, as typed_tier_ranges gives it its tiers: here the
  // first 700 rows of a dataset's features.bin, 200 in host memory, 100 cache lines.
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kNodes, 40, DType::kFloat16, 512);
  FeatureTable table = FeatureTable::of(graph::Dataset::open(dir));
  table.rows = 700;
  TierLayout tiers;
  tiers.ranges = {0, 200, 700, table.layout.row_stride};
  tiers.host_cache_rows = 100;
  FeatureStoreOptions options;
  options.io_depth = 8;
  FeatureStore store(table, tiers, options, pool);
  EXPECT_EQ(store.num_nodes(), 700);
  EXPECT_EQ(store.tiers().ranges.cpu_end, 200);
  EXPECT_EQ(store.tiers().host_cache_rows, 100);
  std::vector<int64_t> ids = uniform_ids(400, 700, 5);
  ids.push_back(699);
  ASSERT_EQ(gather(store, ids), reference_rows(dir, ids));
  const GatherStats s = store.last_gather();
  expect_tier_rows_add_up(s, ids.size());
  EXPECT_GT(s.host.rows, 0);
  EXPECT_GT(s.storage.rows, 0);
  const std::vector<int64_t> outside = {700};
  EXPECT_THROW(gather(store, outside), OutOfRange) << "the table ends at its own rows, not the file's";

  const std::vector<std::pair<const char*, void (*)(TierLayout&)>> bad_tiers = {
      {"host rows past the table", [](TierLayout& t) { t.ranges.cpu_end = 701; }},
      {"tiers for another row count", [](TierLayout& t) { t.ranges.num_nodes = kNodes; }},
      {"more cache lines than storage rows", [](TierLayout& t) { t.host_cache_rows = 501; }},
      {"another row stride", [](TierLayout& t) { t.ranges.row_stride = 8; }},
  };
  for (const auto& [what, spoil] : bad_tiers) {
    TierLayout bad = tiers;
    spoil(bad);
    EXPECT_THROW(FeatureStore(table, bad, options, pool), InvalidArgument) << what;
  }
}

TEST(FeatureStoreTest, ByteExactForEveryTierCombinationDtypeAndLayout) {
  const Watchdog watchdog(60);
  ThreadPool pool(2);
  // 1024 floats at 4096: rows of whole blocks, read in place into cache lines and aligned outputs.
  for (const LayoutCase lc : {LayoutCase{24, DType::kFloat32, 0}, LayoutCase{40, DType::kFloat16, 512},
                              LayoutCase{100, DType::kBFloat16, 4096}, LayoutCase{1100, DType::kFloat32, 4096},
                              LayoutCase{1024, DType::kFloat32, 4096}}) {
    const std::string& dir = test::feature_dataset(kNodes, lc.dim, lc.dtype, lc.alignment);
    for (const Combo& combo : combos()) {
      SCOPED_TRACE(std::string(combo.name) + " " + std::string(dtype_name(lc.dtype)) + " dim " + std::to_string(lc.dim));
      FeatureStoreOptions options;
      options.budgets.cpu_buffer = combo.cpu;
      options.budgets.host_cache = combo.host_cache;
      options.io_depth = 8;
      FeatureStore store(graph::Dataset::open(dir), options, pool);
      const TierRanges& r = store.tiers().ranges;
      EXPECT_EQ(r.gpu_end, 0);
      for (uint64_t batch = 0; batch < 4; ++batch) {
        std::vector<int64_t> ids = uniform_ids(500, kNodes, 100 * batch + 1);
        ids.push_back(0);
        ids.push_back(kNodes - 1);  // the last row, which may end the file unpadded
        if (r.cpu_end > 0) ids.push_back(r.cpu_end - 1);
        if (r.cpu_end < kNodes) ids.push_back(r.cpu_end);
        ASSERT_EQ(gather_at(store, ids, batch % 2 == 0 ? 4096 : 64), reference_rows(dir, ids)) << "batch " << batch;
        const GatherStats s = store.last_gather();
        expect_tier_rows_add_up(s, ids.size());
        if (r.cpu_end == kNodes) {
          EXPECT_EQ(s.storage.rows, 0);
          EXPECT_EQ(s.io.reads, 0);
        }
        if (r.cpu_end == 0) {
          EXPECT_EQ(s.host.rows, 0);
        }
        if (store.tiers().host_cache_rows == 0) {
          EXPECT_EQ(s.host_cache.rows, 0);
        }
      }
      if (store.tiers().host_cache_rows >= kNodes - r.cpu_end) {
        // A cache that holds every storage row serves a repeat gather without the disk.
        const std::vector<int64_t> ids = uniform_ids(300, kNodes, 999);
        gather(store, ids);
        const std::vector<std::byte> again = gather(store, ids);
        EXPECT_EQ(again, reference_rows(dir, ids));
        EXPECT_EQ(store.last_gather().storage.rows, 0);
        EXPECT_EQ(store.last_gather().io.reads, 0);
      }
      EXPECT_EQ(store.total().rows, store.total().host.rows + store.total().host_cache.rows + store.total().storage.rows);
    }
  }
}

// More rows than one read chunk (2048): with a cache, chunks are read while the rows of earlier
// ones are copied from their lines; without, every row is read into the output in one call.
// Many parts of a lookup (7000 ids, parts of 2048), repeats across them (hits on lines an earlier
// part fills), and pools of one thread (the job's tasks in order), two and three.
TEST(FeatureStoreTest, LargeRequestsAreReadInChunksAndStayExact) {
  const Watchdog watchdog(60);
  const std::string& dir = test::feature_dataset(kNodes, 40, DType::kFloat16, 512);
  for (const int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (const Combo& combo : combos()) {
      SCOPED_TRACE(std::string(combo.name) + ", threads " + std::to_string(threads));
      FeatureStoreOptions options;
      options.budgets.cpu_buffer = combo.cpu;
      options.budgets.host_cache = combo.host_cache;
      options.io_depth = 8;
      FeatureStore store(graph::Dataset::open(dir), options, pool);
      for (uint64_t batch = 0; batch < 2; ++batch) {
        const std::vector<int64_t> ids = uniform_ids(7000, kNodes, 40 + batch);
        ASSERT_EQ(gather(store, ids), reference_rows(dir, ids));
        expect_tier_rows_add_up(store.last_gather(), ids.size());
      }
    }
  }
}

TEST(FeatureStoreTest, ConcurrentCallersAreSerialisedAndExact) {
  const Watchdog watchdog(60);
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kNodes, 24, DType::kFloat32, 0);
  FeatureStoreOptions options;
  options.budgets.cpu_buffer = Budget::percent(20);
  options.budgets.host_cache = Budget::percent(10);
  options.io_depth = 8;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  std::vector<std::thread> callers;
  std::atomic<int> mismatches{0};
  for (uint64_t c = 0; c < 3; ++c) {
    callers.emplace_back([&, c] {
      for (uint64_t b = 0; b < 20; ++b) {
        const std::vector<int64_t> ids = uniform_ids(300, kNodes, 1000 * c + b);
        store.window(ids, FeatureStore::kAnnounce);
        if (gather(store, ids) != reference_rows(dir, ids)) ++mismatches;
        store.window(ids, FeatureStore::kConsume);
      }
    });
  }
  // Statistics read while the callers gather are whole snapshots: a torn read (rows counted, tier
  // rows not yet) would break these sums.
  std::atomic<bool> gathering{true};
  std::atomic<int> torn{0};
  std::thread reader([&] {
    while (gathering.load()) {
      const GatherStats total = store.total();
      const GatherStats last = store.last_gather();
      if (total.rows % 300 != 0 || total.rows != total.host.rows + total.host_cache.rows + total.storage.rows) ++torn;
      if ((last.rows != 0 && last.rows != 300) ||
          last.rows != last.host.rows + last.host_cache.rows + last.storage.rows) {
        ++torn;
      }
    }
  });
  for (std::thread& t : callers) t.join();
  gathering = false;
  reader.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(store.total().rows, 3 * 20 * 300);
}

// The store takes the open dataset: it reads the manifest it carries and features.bin, never the
// topology again, and keeps no reference to the Dataset.
TEST(FeatureStoreTest, BuiltFromTheOpenDatasetWithoutRereadingTheTopology) {
  ThreadPool pool(1);
  const std::string& source = test::feature_dataset(kNodes, 24, DType::kFloat32, 0);
  const test::TempDir tmp;
  const std::string dir = tmp / "copy";
  std::filesystem::copy(source, dir);
  auto dataset = std::make_unique<graph::Dataset>(graph::Dataset::open(dir));
  // Any second open of the directory would now fail (IoError: indptr.bin is gone); the maps of
  // the open dataset keep the unlinked files readable.
  std::filesystem::remove(dir + "/indptr.bin");
  std::filesystem::remove(dir + "/indices.bin");
  ASSERT_THROW(graph::Dataset::open(dir), IoError);
  FeatureStoreOptions options;
  options.budgets.cpu_buffer = Budget::percent(50);
  options.io_depth = 4;
  FeatureStore store(*dataset, options, pool);
  dataset.reset();  // the store does not borrow it
  EXPECT_EQ(store.num_nodes(), kNodes);
  const std::vector<int64_t> ids = uniform_ids(500, kNodes, 11);
  EXPECT_EQ(gather(store, ids), reference_rows(source, ids));
  EXPECT_GT(store.last_gather().storage.rows, 0);
  EXPECT_GT(store.last_gather().host.rows, 0);
}

TEST(FeatureStoreTest, TierRangesFollowTheBudgets) {
  ThreadPool pool(1);
  const std::string& dir = test::feature_dataset(kNodes, 24, DType::kFloat32, 0);
  FeatureStoreOptions options;
  options.budgets.cpu_buffer = Budget::percent(25);
  options.budgets.host_cache = Budget::bytes(10 * 96);
  options.io_depth = 4;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  EXPECT_EQ(store.layout().row_bytes(), 96);
  EXPECT_EQ(store.tiers().ranges.cpu_end, kNodes / 4);
  EXPECT_EQ(store.tiers().host_cache_rows, 10);
  EXPECT_EQ(store.io_depth(), 4);
  // Hot-tier ids are served from memory, the rest from the disk the first time.
  const std::vector<int64_t> ids{0, 1, 299, 300, 1199, 300};
  EXPECT_EQ(gather(store, ids), reference_rows(dir, ids));
  EXPECT_EQ(store.last_gather().host.rows, 3);
  EXPECT_EQ(store.last_gather().storage.rows, 3);  // 300 twice: the repeat comes from its staged row
  EXPECT_EQ(store.last_gather().cache_fills, 2);
  EXPECT_EQ(gather(store, ids), reference_rows(dir, ids));
  EXPECT_EQ(store.last_gather().host_cache.rows, 3);
  EXPECT_EQ(store.last_gather().storage.rows, 0);
}

TEST(FeatureStoreTest, OutOfRangeIdsAreRejectedBeforeAnyRead) {
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kNodes, 24, DType::kFloat32, 0);
  auto device = io::make_read_device(io::IoBackend::kAuto, 16);
  io::FaultInjectingDevice counting(*device, io::FaultPlan{});
  FeatureStoreOptions options;
  options.budgets.cpu_buffer = Budget::percent(30);
  options.budgets.host_cache = Budget::percent(10);
  options.read_device = &counting;
  options.io_depth = 8;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  for (const int64_t bad : {int64_t{-1}, kNodes, int64_t{1} << 40, std::numeric_limits<int64_t>::min(),
                            std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min() + kNodes}) {
    const std::vector<int64_t> ids{1, 900, bad, 5};
    std::vector<std::byte> out(ids.size() * 96, std::byte{0x5a});
    try {
      store.gather(ids, TensorView::contiguous(out.data(), DType::kFloat32, {4, 24}));
      FAIL() << "id " << bad << " was accepted";
    } catch (const OutOfRange& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
    }
    EXPECT_EQ(out, std::vector<std::byte>(ids.size() * 96, std::byte{0x5a})) << "output written";
  }
  EXPECT_EQ(counting.counts().completions, 0) << "a read was issued";
  EXPECT_EQ(store.total().rows, 0);
}

TEST(FeatureStoreTest, RejectsBadOutputsAndGpuBudgetsWithoutAGpu) {
  ThreadPool pool(1);
  const std::string& dir = test::feature_dataset(kNodes, 24, DType::kFloat32, 0);
  FeatureStoreOptions options;
  options.io_depth = 4;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  const std::vector<int64_t> ids{1, 2};
  std::vector<std::byte> out(2 * 96);
  EXPECT_THROW(store.gather(ids, TensorView::contiguous(out.data(), DType::kFloat16, {2, 24})), InvalidArgument);
  EXPECT_THROW(store.gather(ids, TensorView::contiguous(out.data(), DType::kFloat32, {2, 23})), InvalidArgument);
  EXPECT_THROW(store.gather(ids, TensorView::contiguous(out.data(), DType::kFloat32, {3, 24})), InvalidArgument);
  store.gather({}, TensorView::contiguous(nullptr, DType::kFloat32, {0, 24}));
  EXPECT_EQ(store.last_gather().rows, 0);
  if (!cuda_available()) {
    EXPECT_THROW(store.gather(ids, TensorView::contiguous(out.data(), DType::kFloat32, {2, 24}, MemoryKind::kDevice)),
                 Unsupported);
    FeatureStoreOptions gpu = options;
    gpu.budgets.gpu_hot = Budget::percent(10);
    EXPECT_THROW(FeatureStore(graph::Dataset::open(dir), gpu, pool), Unsupported);
    gpu.budgets.gpu_hot = Budget::bytes(0);
    gpu.budgets.gpu_cache = Budget::percent(10);
    EXPECT_THROW(FeatureStore(graph::Dataset::open(dir), gpu, pool), Unsupported);
  }
}

TEST(FeatureStoreTest, WindowKeepsAnnouncedRowsCachedUnderPressure) {
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kNodes, 24, DType::kFloat32, 0);
  FeatureStoreOptions options;
  options.budgets.host_cache = Budget::bytes(32 * 96);  // 32 lines
  options.io_depth = 8;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  const std::vector<int64_t> next{10, 20, 30, 40};
  for (const int delta : {0, 2, -2}) EXPECT_THROW(store.window(next, delta), InvalidArgument) << delta;
  store.window(next, FeatureStore::kAnnounce);
  store.window(next, FeatureStore::kAnnounce);
  gather(store, next);
  // Many other rows stream through the 32 lines.
  for (uint64_t b = 0; b < 10; ++b) {
    std::vector<int64_t> ids = uniform_ids(64, kNodes, 50 + b);
    for (int64_t& id : ids) id = 100 + id % (kNodes - 100);
    ASSERT_EQ(gather(store, ids), reference_rows(dir, ids));
  }
  EXPECT_EQ(gather(store, next), reference_rows(dir, next));
  EXPECT_EQ(store.last_gather().host_cache.rows, 4) << "announced rows were evicted";
  store.window(next, FeatureStore::kConsume);
  store.window(next, FeatureStore::kConsume);
  for (uint64_t b = 0; b < 10; ++b) {
    std::vector<int64_t> ids = uniform_ids(64, kNodes, 70 + b);
    for (int64_t& id : ids) id = 100 + id % (kNodes - 100);
    gather(store, ids);
  }
  EXPECT_EQ(gather(store, next), reference_rows(dir, next));
  EXPECT_EQ(store.last_gather().host_cache.rows, 0) << "consumed rows stayed pinned";
}

TEST(FeatureStoreTest, EveryLinePinnedStillServesTheMinibatch) {
  const Watchdog watchdog(30);
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kNodes, 24, DType::kFloat32, 0);
  FeatureStoreOptions options;
  options.budgets.host_cache = Budget::bytes(8 * 96);
  options.io_depth = 8;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  const std::vector<int64_t> pinned{1, 2, 3, 4, 5, 6, 7, 8};
  store.window(pinned, FeatureStore::kAnnounce);
  gather(store, pinned);
  const std::vector<int64_t> ids = uniform_ids(400, kNodes, 5);
  EXPECT_EQ(gather(store, ids), reference_rows(dir, ids));
  EXPECT_GT(store.last_gather().cache_bypasses, 0);
}

// The sampler's announce and the gather thread's consume take only the cache policy's short lock,
// never the one a gather holds through its reads (docs/architecture.md, "Feature store and
// tiers"): with a gather parked inside its storage reads, both return at once.
TEST(FeatureStoreTest, AnnounceAndConsumeDoNotWaitForAGatherInItsReads) {
  const Watchdog watchdog(60);
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kNodes, 24, DType::kFloat32, 0);
  const std::unique_ptr<io::ReadDevice> inner = io::make_read_device(io::IoBackend::kAuto, 16);
  test::GatedDevice gated(*inner);
  FeatureStoreOptions options;
  options.budgets.host_cache = Budget::percent(10);
  options.read_device = &gated;
  options.io_depth = 8;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  const std::vector<int64_t> ids = uniform_ids(200, kNodes, 3);
  std::vector<std::byte> out;
  std::thread gatherer([&] { out = gather(store, ids); });
  ASSERT_TRUE(gated.wait_entered(std::chrono::seconds(10))) << "the gather never reached its reads";
  const std::vector<int64_t> next = uniform_ids(100, kNodes, 4);
  auto window = std::async(std::launch::async, [&] {
    store.window(next, FeatureStore::kAnnounce);
    store.window(next, FeatureStore::kConsume);
    store.window(next, FeatureStore::kAnnounce);
  });
  const bool returned = window.wait_for(std::chrono::seconds(2)) == std::future_status::ready;
  gated.open();
  gatherer.join();
  window.get();
  EXPECT_TRUE(returned) << "announce/consume waited for a gather's storage reads";
  EXPECT_EQ(out, reference_rows(dir, ids));
  // The window counts taken during the gather hold: `next` stays cached under pressure.
  gather(store, next);
  for (uint64_t b = 0; b < 5; ++b) gather(store, uniform_ids(200, kNodes, 40 + b));
  const GatherStats again = store.gather(next, TensorView::contiguous(out.data(), store.layout().dtype,
                                                                       {static_cast<int64_t>(next.size()), 24}));
  EXPECT_EQ(again.host_cache.rows, static_cast<int64_t>(next.size())) << "announced rows were evicted";
}

// Gathers, announces and consumes from several threads on a tiny cache: every row exact, and the
// rows one thread keeps announced are served from the cache by every one of its gathers (a pinned
// line is never evicted, whatever the others do in between). Seeded, bounded to about 3 s.
TEST(FeatureStoreTest, ConcurrentGathersAnnouncesAndConsumesOnATinyCache) {
  const Watchdog watchdog(60);
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kNodes, 24, DType::kFloat32, 0);
  const auto table = [&] {
    const std::vector<int64_t> all = [] {
      std::vector<int64_t> v(kNodes);
      for (int64_t i = 0; i < kNodes; ++i) v[static_cast<std::size_t>(i)] = i;
      return v;
    }();
    return reference_rows(dir, all);
  }();
  constexpr std::size_t kRow = 96;
  FeatureStoreOptions options;
  options.budgets.cpu_buffer = Budget::percent(10);
  options.budgets.host_cache = Budget::bytes(32 * 96);  // 32 lines
  options.io_depth = 4;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  const int64_t cpu_end = store.tiers().ranges.cpu_end;
  // Three threads each keep at most 8 ids announced (24 lines pinned at most), so the pinned set's
  // 4 rows always find lines when they first enter.
  const std::vector<int64_t> pinned{cpu_end + 5, cpu_end + 17, cpu_end + 400, kNodes - 1};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  std::atomic<int> mismatches{0};
  std::atomic<int> evicted{0};
  std::atomic<int64_t> gathers{0};
  const auto exact = [&](std::span<const int64_t> ids, const std::vector<std::byte>& out) {
    for (std::size_t k = 0; k < ids.size(); ++k) {
      if (std::memcmp(out.data() + k * kRow, table.data() + static_cast<std::size_t>(ids[k]) * kRow, kRow) != 0) {
        return false;
      }
    }
    return true;
  };
  std::vector<std::thread> threads;
  for (uint64_t c = 0; c < 3; ++c) {
    threads.emplace_back([&, c] {
      for (uint64_t b = 0; b < 20000 && std::chrono::steady_clock::now() < deadline; ++b) {
        const auto size = static_cast<std::size_t>(1 + philox_u64(c, 9, b) % 8);
        const std::vector<int64_t> ids = uniform_ids(size, kNodes, 100000 * (c + 1) + b);
        store.window(ids, FeatureStore::kAnnounce);
        // Sometimes the announced batch is gathered later as part of a bigger request.
        std::vector<int64_t> request = ids;
        if (b % 3 == 0) {
          const std::vector<int64_t> extra = uniform_ids(40, kNodes, 900000 * (c + 1) + b);
          request.insert(request.end(), extra.begin(), extra.end());
        }
        if (!exact(request, gather(store, request))) ++mismatches;
        store.window(ids, FeatureStore::kConsume);
        ++gathers;
      }
    });
  }
  threads.emplace_back([&] {
    store.window(pinned, FeatureStore::kAnnounce);
    std::vector<std::byte> out(pinned.size() * kRow);
    const TensorView view = TensorView::contiguous(out.data(), DType::kFloat32, {4, 24});
    store.gather(pinned, view);
    while (std::chrono::steady_clock::now() < deadline) {
      const GatherStats s = store.gather(pinned, view);
      if (s.host_cache.rows != 4) ++evicted;
      if (!exact(pinned, out)) ++mismatches;
      std::this_thread::yield();
    }
    store.window(pinned, FeatureStore::kConsume);
  });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(evicted.load(), 0) << "a line with announced future use was evicted";
  EXPECT_GT(gathers.load(), 30);
}

// after_lookup runs once per gather, after the cache has looked up every part of the ids: a
// batch that gives its own announcements back there still finds the lines they pinned. A cache of
// 3000 lines holds rows 0..2999, pinned by the batch's announcement; the batch asks for 3000 new
// rows first (parts 0 and 1 of its lookup), then for those 3000. Consumed after the whole lookup,
// the new rows bypass and the old ones hit; consumed before (or after the first part), the new
// rows would evict the old ones, which would then miss.
TEST(FeatureStoreTest, AfterLookupRunsOnceWithEveryPartLookedUp) {
  const Watchdog watchdog(60);
  ThreadPool pool(2);
  constexpr int64_t kLines = 3000;
  const std::string& dir = test::feature_dataset(8000, 8, DType::kFloat32, 0);
  const auto row_bytes = static_cast<int64_t>(8 * sizeof(float));
  FeatureStoreOptions options;
  options.budgets.cpu_buffer = Budget::bytes(0);
  options.budgets.host_cache = Budget::bytes(kLines * row_bytes);
  options.io_depth = 8;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  ASSERT_EQ(store.tiers().host_cache_rows, kLines);
  std::vector<int64_t> old_rows(kLines), batch;
  for (int64_t v = 0; v < kLines; ++v) old_rows[static_cast<std::size_t>(v)] = v;
  for (int64_t v = 5000; v < 5000 + kLines; ++v) batch.push_back(v);
  batch.insert(batch.end(), old_rows.begin(), old_rows.end());
  ASSERT_EQ(gather(store, old_rows), reference_rows(dir, old_rows));  // fills every line
  store.window(batch, FeatureStore::kAnnounce);
  int calls = 0;
  std::vector<std::byte> out(batch.size() * static_cast<std::size_t>(row_bytes));
  const GatherStats s = store.gather(batch,
                                     TensorView::contiguous(out.data(), DType::kFloat32,
                                                            {static_cast<int64_t>(batch.size()), 8}),
                                     {}, nullptr, [&] {
                                       ++calls;
                                       store.window(batch, FeatureStore::kConsume);
                                     });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(out, reference_rows(dir, batch));
  EXPECT_EQ(s.host_cache.rows, kLines);
  EXPECT_EQ(s.cache_bypasses, kLines);
  EXPECT_EQ(s.cache_fills, 0);
  // Given back: the next batch's new rows may take those lines.
  const std::vector<int64_t> next(batch.begin(), batch.begin() + kLines);
  ASSERT_EQ(gather(store, next), reference_rows(dir, next));
  EXPECT_EQ(store.last_gather().cache_fills, kLines);
  // Called for a gather of no ids, not for one refused before its lookup.
  store.gather({}, TensorView::contiguous(out.data(), DType::kFloat32, {0, 8}), {}, nullptr, [&] { ++calls; });
  EXPECT_EQ(calls, 2);
  const std::vector<int64_t> bad{1, 8000};
  EXPECT_THROW(store.gather(bad, TensorView::contiguous(out.data(), DType::kFloat32, {2, 8}), {}, nullptr,
                            [&] { ++calls; }),
               OutOfRange);
  EXPECT_EQ(calls, 2);
}

class FeatureFaultTest : public ::testing::TestWithParam<io::IoBackend> {
 protected:
  void SetUp() override {
    try {
      device_ = io::make_read_device(GetParam(), 16);
    } catch (const Unsupported&) {
      GTEST_SKIP() << io::io_backend_name(GetParam()) << " is not available here";
    }
  }
  std::unique_ptr<io::ReadDevice> device_;
};

TEST_P(FeatureFaultTest, ShortReadsAndEagainStillGiveExactRows) {
  const Watchdog watchdog(30);
  ThreadPool pool(2);
  // 8 KiB strides: every row is a read of its own, so the faults have many completions to hit.
  const std::string& dir = test::feature_dataset(kNodes, 1100, DType::kFloat32, 4096);
  io::FaultPlan plan;
  plan.short_read_probability = 0.3;
  plan.eagain_probability = 0.2;
  plan.eintr_probability = 0.05;
  plan.seed = 3;
  io::FaultInjectingDevice faulty(*device_, plan);
  FeatureStoreOptions options;
  options.budgets.cpu_buffer = Budget::percent(20);
  options.budgets.host_cache = Budget::percent(10);
  options.read_device = &faulty;
  options.io_depth = 8;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  for (uint64_t b = 0; b < 4; ++b) {
    // Multiples of 3 (and repeats): no two rows share or adjoin a block, so each is one read.
    std::vector<int64_t> ids = uniform_ids(400, kNodes / 3, 30 + b);
    for (int64_t& id : ids) id *= 3;
    ASSERT_EQ(gather(store, ids), reference_rows(dir, ids)) << "batch " << b;
  }
  EXPECT_GT(faulty.counts().short_reads, 10);
  EXPECT_GT(faulty.counts().eagain, 10);
}

TEST_P(FeatureFaultTest, EioNamesTheFileAndOffsetAndLeavesNoCachedRow) {
  const Watchdog watchdog(30);
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kNodes, 1100, DType::kFloat32, 4096);  // 4400 B rows, 8 KiB stride
  constexpr int64_t kBad = 700;
  io::FaultPlan plan;
  plan.eio_at_offset = kBad * 8192 + 10;
  io::FaultInjectingDevice faulty(*device_, plan);
  FeatureStoreOptions options;
  options.budgets.cpu_buffer = Budget::percent(10);
  options.budgets.host_cache = Budget::percent(50);
  options.read_device = &faulty;
  options.io_depth = 8;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  ASSERT_EQ(store.layout().row_stride, 8192);
  const std::vector<int64_t> ids{5, 300, kBad, 900, kBad};
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<std::byte> out(ids.size() * 4400);
    try {
      store.gather(ids, TensorView::contiguous(out.data(), DType::kFloat32, {5, 1100}));
      FAIL() << "EIO was not reported (attempt " << attempt << ")";
    } catch (const IoError& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.code().value(), EIO);
      EXPECT_NE(what.find("features.bin"), std::string::npos) << what;
      EXPECT_NE(what.find("offset " + std::to_string(kBad * 8192)), std::string::npos) << what;
    }
  }
  // Rows away from the bad one still come back exact, and nothing claims row kBad.
  const std::vector<int64_t> good{5, 300, 900, 5};
  EXPECT_EQ(gather(store, good), reference_rows(dir, good));
}

TEST_P(FeatureFaultTest, AFailedReadWakesTheCopiesWaitingForLaterChunks) {
  // A gather of many read chunks (every row a fill of a cache that holds them all, copied to the
  // output from its line): its scatter tasks wait for later chunks while the reader fails in the
  // first; the failure must reach the caller, not leave the copies waiting forever.
  const Watchdog watchdog(60);
  ThreadPool pool(2);
  constexpr int64_t kMany = 6000;  // about three read chunks of 2048 rows
  const std::string& dir = test::feature_dataset(kMany, 1024, DType::kFloat32, 4096);  // a block per row
  constexpr int64_t kBad = 123;
  io::FaultPlan plan;
  plan.eio_at_offset = kBad * 4096 + 8;
  io::FaultInjectingDevice faulty(*device_, plan);
  FeatureStoreOptions options;
  options.budgets.cpu_buffer = Budget::bytes(0);
  options.budgets.host_cache = Budget::percent(100);
  options.read_device = &faulty;
  options.io_depth = 8;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  ASSERT_GE(store.tiers().host_cache_rows, kMany);
  std::vector<int64_t> ids{kBad};
  for (int64_t v = 0; v < kMany; ++v) {
    if (v != kBad) ids.push_back(v);
  }
  ASSERT_EQ(store.layout().row_stride, 4096);
  std::vector<std::byte> out(ids.size() * 4096);
  int after_lookup = 0;
  EXPECT_THROW(store.gather(ids, TensorView::contiguous(out.data(), DType::kFloat32, {kMany, 1024}), {}, nullptr,
                            [&] { ++after_lookup; }),
               IoError);
  EXPECT_EQ(after_lookup, 1) << "the lookup was done before the read failed";
  const std::vector<int64_t> good{0, kMany - 1, 4000, 17};
  EXPECT_EQ(gather(store, good), reference_rows(dir, good));
}

INSTANTIATE_TEST_SUITE_P(Backends, FeatureFaultTest, ::testing::Values(io::IoBackend::kUring, io::IoBackend::kPread),
                         [](const auto& info) { return std::string(io::io_backend_name(info.param)); });

}  // namespace
}  // namespace graphtier::feature
