#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "graphtier/core/dtype.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/tensor.hpp"
#include "graphtier/core/units.hpp"

namespace graphtier {
namespace {

TEST(DType, NamesRoundTrip) {
  for (DType t : {DType::kInt32, DType::kInt64, DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kUInt8}) {
    EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  }
  EXPECT_EQ(parse_dtype("bf16"), DType::kBFloat16);
  EXPECT_THROW(parse_dtype("float64"), InvalidArgument);
}

TEST(DType, HalfConversionGoldenValues) {
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(1e6f), 0x7C00);          // overflow to inf
  EXPECT_EQ(float_to_half(5.9604645e-8f), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(1.0f + 1.0f / 2048), 0x3C00);  // tie rounds to even
  EXPECT_EQ(float_to_half(1.0f + 3.0f / 2048), 0x3C02);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
  // Every finite half converts to float and back unchanged.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7C00u) == 0x7C00u) continue;
    ASSERT_EQ(float_to_half(half_to_float(static_cast<uint16_t>(h))), h) << h;
  }
}

TEST(DType, BFloat16ConversionGoldenValues) {
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3F80);
  EXPECT_EQ(bfloat16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(float_to_bfloat16(1.00390625f), 0x3F80);  // tie to even
  EXPECT_EQ(float_to_bfloat16(1.01171875f), 0x3F82);
  EXPECT_TRUE(std::isnan(bfloat16_to_float(float_to_bfloat16(NAN))));
}

TEST(Units, ParsesCountsBytesAndBudgets) {
  EXPECT_EQ(parse_count("1500"), 1500);
  EXPECT_EQ(parse_count("10M"), 10'000'000);
  EXPECT_EQ(parse_count("2.5K"), 2500);
  EXPECT_EQ(parse_bytes("4KiB"), 4096);
  EXPECT_EQ(parse_bytes("2G"), int64_t{2} << 30);
  EXPECT_EQ(parse_bytes("1GB"), 1'000'000'000);
  EXPECT_THROW(parse_bytes("12 parsecs"), InvalidArgument);
  EXPECT_THROW(parse_count("-5"), InvalidArgument);
  EXPECT_EQ(Budget::parse("25%").resolve(1000), 250);
  EXPECT_EQ(Budget::parse("4K").resolve(1000), 1000);  // never more than the table
  EXPECT_EQ(Budget::parse("0").resolve(1000), 0);
  EXPECT_THROW(Budget::parse("120%"), InvalidArgument);
}

TEST(Units, ParsesIntegerAndPercentLists) {
  EXPECT_EQ(parse_int_list("15,10,5", "--fanouts"), (std::vector<int64_t>{15, 10, 5}));
  EXPECT_EQ(parse_int_list("-1", "--fanouts"), (std::vector<int64_t>{-1}));
  for (const char* bad : {"", "1,,2", "1,", "x", "1.5", "2 "}) {
    EXPECT_THROW(parse_int_list(bad, "--fanouts"), InvalidArgument) << "'" << bad << "'";
  }
  EXPECT_EQ(parse_percent_list("1%,12.5,100%", "--budgets"), (std::vector<double>{0.01, 0.125, 1.0}));
  for (const char* bad : {"", "0%", "101%", "-5%", "5%%", "a%"}) {
    EXPECT_THROW(parse_percent_list(bad, "--budgets"), InvalidArgument) << "'" << bad << "'";
  }
}

TEST(Memory, HostBuffersAreAlignedAndPinnedNeedsCuda) {
  Buffer host(MemoryKind::kHost, 1000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(host.data()) % 64, 0u);
  Buffer moved = std::move(host);
  EXPECT_EQ(moved.size(), 1000u);
  EXPECT_EQ(host.data(), nullptr);
  if (!cuda_available()) {
#if !GRAPHTIER_WITH_CUDA
    EXPECT_THROW(Buffer(MemoryKind::kPinned, 64), Unsupported);
    EXPECT_THROW(Buffer(MemoryKind::kDevice, 64), Unsupported);
#endif
  }
}

TEST(Memory, LargeHostBuffersAreKeptForTheNextThatFits) {
  if (!keep_freed_memory()) {
    GTEST_SKIP() << "freed memory is not kept in this process (GRAPHTIER_KEEP_FREED_MEMORY=0, malloc tunables set, "
                    "a sanitizer's or fuzzing build, or not glibc)";
  }
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  void* first = nullptr;
  {
    Buffer a(MemoryKind::kHost, 40 * kMiB);  // allocated with 1/8 spare: a 46 MiB block
    first = a.data();
    std::memset(a.data(), 1, a.size());
  }
  void* second = nullptr;
  {
    Buffer b(MemoryKind::kHost, 44 * kMiB);  // fits the kept block
    EXPECT_EQ(b.data(), first);
    EXPECT_EQ(b.size(), 44 * kMiB);
    std::memset(b.data(), 2, b.size());
    Buffer c(MemoryKind::kHost, 44 * kMiB);  // the block is taken: a new one
    second = c.data();
    EXPECT_NE(second, first);
  }
  // Both blocks are kept now (46 and 50 MiB); neither is used for less than 1/1.25 of its size.
  Buffer small(MemoryKind::kHost, 33 * kMiB);
  EXPECT_NE(small.data(), first);
  EXPECT_NE(small.data(), second);
  Buffer again(MemoryKind::kHost, 45 * kMiB);  // the smallest that fits: the 46 MiB one
  EXPECT_EQ(again.data(), first);
}

TEST(Memory, PinnedAndDeviceBuffersRoundTripEveryDirection) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device (or CPU-only build): pinned and device buffers not checked";
  constexpr std::size_t n = (std::size_t{1} << 20) + 13;  // odd size: no whole-word tail
  std::vector<std::byte> expected(n);
  for (std::size_t i = 0; i < n; ++i) expected[i] = static_cast<std::byte>((i * 131) >> 3);
  Buffer pinned(MemoryKind::kPinned, n);
  Buffer device(MemoryKind::kDevice, n);
  Buffer device_copy(MemoryKind::kDevice, n);
  ASSERT_EQ(device.kind(), MemoryKind::kDevice);
  ASSERT_EQ(device.size(), n);
  copy_bytes(pinned.data(), MemoryKind::kPinned, expected.data(), MemoryKind::kHost, n);
  copy_bytes(device.data(), MemoryKind::kDevice, pinned.data(), MemoryKind::kPinned, n);
  copy_bytes(device_copy.data(), MemoryKind::kDevice, device.data(), MemoryKind::kDevice, n);
  Buffer moved = std::move(device_copy);  // the move hands over the allocation, freed once
  EXPECT_EQ(device_copy.data(), nullptr);
  std::vector<std::byte> back(n);
  copy_bytes(back.data(), MemoryKind::kHost, moved.data(), MemoryKind::kDevice, n);
  EXPECT_EQ(back, expected);
}

TEST(TensorView, ContiguousStridesAreRowMajor) {
  float data[24];
  auto v = TensorView::contiguous(data, DType::kFloat32, {2, 3, 4});
  EXPECT_EQ(v.ndim, 3);
  EXPECT_EQ(v.strides[0], 12);
  EXPECT_EQ(v.strides[1], 4);
  EXPECT_EQ(v.strides[2], 1);
  EXPECT_EQ(v.numel(), 24);
  EXPECT_TRUE(v.is_contiguous());
  v.strides[0] = 13;
  EXPECT_FALSE(v.is_contiguous());
  EXPECT_THROW(TensorView::contiguous(data, DType::kFloat32, {1, 1, 1, 1, 1}), InvalidArgument);
}

}  // namespace
}  // namespace graphtier
