// The GPU tiers (CUDA builds on a GPU machine): the same byte-exactness as the CPU tiers, for
// device and host outputs, each pinned-tier path, GPU cache hits, fills and window pinning.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "feature/feature_test_util.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/feature/feature_store.hpp"
#include "io/io_test_util.hpp"

namespace graphtier::feature {
namespace {

constexpr int64_t kNodes = 1200;

std::vector<std::byte> gather_device(FeatureStore& store, std::span<const int64_t> ids) {
  const auto bytes = ids.size() * static_cast<std::size_t>(store.layout().row_bytes());
  Buffer out(MemoryKind::kDevice, std::max<std::size_t>(bytes, 1));
  store.gather(ids, TensorView::contiguous(out.data(), store.layout().dtype,
                                           {static_cast<int64_t>(ids.size()), store.layout().dim}, MemoryKind::kDevice));
  std::vector<std::byte> host(bytes);
  copy_bytes(host.data(), MemoryKind::kHost, out.data(), MemoryKind::kDevice, bytes);
  return host;
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
    const std::string& dir = test::feature_dataset(kNodes, c.dim, c.dtype, c.alignment);
    for (const PinnedPath path : {PinnedPath::kMeasured, PinnedPath::kZeroCopy, PinnedPath::kCpuCopy}) {
      SCOPED_TRACE("dim " + std::to_string(c.dim) + " path " + std::to_string(static_cast<int>(path)));
      FeatureStoreOptions options;
      options.budgets.gpu_hot = Budget::percent(20);
      options.budgets.gpu_cache = Budget::percent(10);
      options.budgets.cpu = Budget::percent(30);
      options.budgets.host_cache = Budget::percent(5);
      options.pinned_path = path;
      options.io_depth = 8;
      FeatureStore store(graph::Dataset::open(dir), options, pool);
      for (uint64_t b = 0; b < 4; ++b) {
        const std::vector<int64_t> ids = test::uniform_ids(3000, kNodes, 60 + b);
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

TEST(FeatureStoreGpuTest, WindowPinsGpuCacheLines) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU cache window not checked";
  ThreadPool pool(2);
  const std::string& dir = test::feature_dataset(kNodes, 24, DType::kFloat32, 0);
  FeatureStoreOptions options;
  options.budgets.gpu_cache = Budget::bytes(32 * 96);
  options.io_depth = 8;
  FeatureStore store(graph::Dataset::open(dir), options, pool);
  const std::vector<int64_t> next{10, 20, 30, 40};
  store.announce(next);
  gather_device(store, next);
  for (uint64_t b = 0; b < 10; ++b) {
    std::vector<int64_t> ids = test::uniform_ids(64, kNodes, 80 + b);
    for (int64_t& id : ids) id = 100 + id % (kNodes - 100);
    gather_device(store, ids);
  }
  EXPECT_EQ(gather_device(store, next), test::reference_rows(dir, next));
  EXPECT_EQ(store.last_gather().gpu_cache.rows, 4);
  store.consume(next);
}

}  // namespace
}  // namespace graphtier::feature
