#include <gtest/gtest.h>

#include <vector>

#include "graphtier/core/memory.hpp"
#include "graphtier/core/random_fill.hpp"
#include "graphtier/core/rng.hpp"

namespace graphtier {
namespace {

TEST(RandomFill, HostMatchesScalarDraws) {
  std::vector<int64_t> out(1000);
  philox_fill(9, 4, 100, TensorView::contiguous(out.data(), DType::kInt64, {1000}));
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(static_cast<uint64_t>(out[i]), philox_u64(9, 4, 100 + i));
}

TEST(RandomFill, DeviceStreamIsBitIdenticalToHost) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device (or CPU-only build): device RNG not checked";
  constexpr int64_t n = 1 << 20;
  std::vector<int64_t> host(n), from_device(n);
  philox_fill(2026, 11, 5, TensorView::contiguous(host.data(), DType::kInt64, {n}));
  Buffer device(MemoryKind::kDevice, n * sizeof(int64_t));
  philox_fill(2026, 11, 5, TensorView::contiguous(device.data(), DType::kInt64, {n}, MemoryKind::kDevice));
  copy_bytes(from_device.data(), MemoryKind::kHost, device.data(), MemoryKind::kDevice, n * sizeof(int64_t));
  EXPECT_EQ(host, from_device);
}

}  // namespace
}  // namespace graphtier
