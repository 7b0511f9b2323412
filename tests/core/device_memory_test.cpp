// Device memory governance (graphtier/core/device_memory.hpp): the pool's release threshold rule
// and the budget check run here on plain numbers; the device queries, the trimmed pool, the
// OutOfMemory at creation and the restored current device run where a GPU is present.
#include "graphtier/core/device_memory.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#if GRAPHTIER_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace graphtier {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

TEST(PoolReleaseThreshold, DefaultsToAQuarterOfTheDevice) {
  EXPECT_EQ(pool_release_threshold(80 * kGiB, ""), 20 * kGiB);
  EXPECT_EQ(pool_release_threshold(141 * kGiB, ""), 141 * kGiB / 4);
  EXPECT_EQ(pool_release_threshold(0, ""), 0);
}

TEST(PoolReleaseThreshold, TheSettingGivesBytesOrAPercent) {
  EXPECT_EQ(pool_release_threshold(80 * kGiB, "123456"), 123456);
  EXPECT_EQ(pool_release_threshold(80 * kGiB, "0"), 0);
  EXPECT_EQ(pool_release_threshold(80 * kGiB, "512K"), 512 * 1024);
  EXPECT_EQ(pool_release_threshold(80 * kGiB, "512M"), 512 * int64_t{1} << 20);
  EXPECT_EQ(pool_release_threshold(80 * kGiB, "8G"), 8 * kGiB);
  EXPECT_EQ(pool_release_threshold(80 * kGiB, "8g"), 8 * kGiB);
  EXPECT_EQ(pool_release_threshold(80 * kGiB, "25%"), 20 * kGiB);
  EXPECT_EQ(pool_release_threshold(80 * kGiB, "100%"), 80 * kGiB);
  EXPECT_EQ(pool_release_threshold(80 * kGiB, "0%"), 0);
  // A percent of a total that is no multiple of 100 rounds down, without overflow near INT64_MAX.
  EXPECT_EQ(pool_release_threshold(199, "50%"), 99);
  EXPECT_EQ(pool_release_threshold(INT64_MAX, "100%"), INT64_MAX);
}

TEST(PoolReleaseThreshold, ABadSettingNamesTheVariable) {
  for (const std::string bad : {"x", "-1", "8T", "8GB", "101%", "%", " 8G", "8G ", "99999999999999999999",
                                "9000000000G"}) {
    try {
      pool_release_threshold(80 * kGiB, bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(kPoolKeepVariable), std::string::npos) << e.what();
    }
  }
}

TEST(CheckDeviceBudget, PassesWithinWhatIsFreeAndNamesTheBudgetOtherwise) {
  const DeviceMemory memory{4 * kGiB, 80 * kGiB};
  EXPECT_NO_THROW(check_device_budget("x", 0, memory, 0));
  EXPECT_NO_THROW(check_device_budget("x", 4 * kGiB, memory, 0));
  try {
    check_device_budget("the topology", 4 * kGiB + 1, memory, 3);
    ADD_FAILURE() << "a budget above the free bytes passed";
  } catch (const OutOfMemory& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("the topology"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(4 * kGiB + 1)), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(4 * kGiB)), std::string::npos) << m;
    EXPECT_NE(m.find("device 3"), std::string::npos) << m;
  }
}

TEST(DeviceMemory, IsUnsupportedWithoutCudaAndTrimIsANoOp) {
  if (cuda_available()) GTEST_SKIP() << "CUDA device present: the answers without one are not exercised";
#if !GRAPHTIER_WITH_CUDA
  EXPECT_THROW(device_memory(0), Unsupported);
  EXPECT_NO_THROW(trim_device_pool(0));
#endif
}

TEST(DeviceMemory, AskingForMoreThanIsFreeThrowsOutOfMemory) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the budget check against cudaMemGetInfo not checked";
  const DeviceMemory m = device_memory(0);
  EXPECT_GT(m.total_bytes, 0);
  EXPECT_LE(m.free_bytes, m.total_bytes);
  EXPECT_NO_THROW(require_device_memory("a small budget", 1 << 20, 0));
  EXPECT_THROW(require_device_memory("more than the device has", m.total_bytes + 1, 0), OutOfMemory);
}

#if GRAPHTIER_WITH_CUDA
/// Bytes the default pool of device 0 holds from the driver (cudaMemPoolAttrReservedMemCurrent).
uint64_t pool_reserved() {
  cudaMemPool_t pool = nullptr;
  EXPECT_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
  uint64_t bytes = 0;
  EXPECT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &bytes), cudaSuccess);
  return bytes;
}
#endif

TEST(DeviceMemory, TheTrimHandsThePoolsUnusedMemoryBack) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the trimmed pool not checked";
#if GRAPHTIER_WITH_CUDA
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  cudaMemPool_t pool = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
  // Keep everything for this test's allocation, so that only the trim can hand it back.
  uint64_t keep = UINT64_MAX, before_threshold = 0;
  ASSERT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &before_threshold), cudaSuccess);
  ASSERT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), cudaSuccess);
  const std::size_t bytes = std::size_t{256} << 20;
  void* p = nullptr;
  ASSERT_EQ(cudaMallocAsync(&p, bytes, nullptr), cudaSuccess);
  ASSERT_EQ(cudaFreeAsync(p, nullptr), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  EXPECT_GE(pool_reserved(), bytes) << "the pool kept nothing to trim";
  trim_device_pool(0);
  EXPECT_LT(pool_reserved(), bytes);
  ASSERT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &before_threshold), cudaSuccess);
#endif
}

TEST(CurrentDevice, EveryCallThatSetsADeviceRestoresTheCallers) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the caller's current device not checked";
#if GRAPHTIER_WITH_CUDA
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  if (devices < 2) GTEST_SKIP() << "needs two GPUs (the calls on one, the caller on the other); has " << devices;
  const auto current = [] {
    int d = -1;
    EXPECT_EQ(cudaGetDevice(&d), cudaSuccess);
    return d;
  };
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  {
    Buffer b(MemoryKind::kDevice, 1 << 20, 1);  // allocate_device
    EXPECT_EQ(current(), 0) << "after allocate_device";
    device_synchronize(1);
    EXPECT_EQ(current(), 0) << "after synchronize";
    OwnedCudaStream s(1);  // create_stream
    EXPECT_EQ(current(), 0) << "after create_stream";
    EXPECT_GT(device_memory(1).total_bytes, 0);
    EXPECT_EQ(current(), 0) << "after device_memory";
  }  // destroy_stream, free_device
  EXPECT_EQ(current(), 0) << "after destroy_stream and free_device";
#endif
}

}  // namespace
}  // namespace graphtier
