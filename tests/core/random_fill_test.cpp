// philox_fill checked against answers it did not compute: the published Philox4x32-10 known-answer
// vectors, placed through the (seed, stream, index) -> (key, counter) mapping rng.hpp documents,
// plus properties of the stream (bit balance, moments, no repeats, independence of chunking).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <thread>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/random_fill.hpp"
#include "graphtier/core/rng.hpp"

namespace graphtier {
namespace {

/// One known answer of Philox4x32 with 10 rounds: counter words c0..c3 and key words k0, k1 give
/// output words r0..r3.
struct PhiloxKat {
  std::array<uint32_t, 4> counter;
  std::array<uint32_t, 2> key;
  std::array<uint32_t, 4> output;

  // rng.hpp: the index fills c0 (low half) and c1, the stream c2 and c3, the seed k0 and k1, and
  // philox_u64 returns r1:r0.
  uint64_t index() const { return (uint64_t{counter[1]} << 32) | counter[0]; }
  uint64_t stream() const { return (uint64_t{counter[3]} << 32) | counter[2]; }
  uint64_t seed() const { return (uint64_t{key[1]} << 32) | key[0]; }
  uint64_t u64() const { return (uint64_t{output[1]} << 32) | output[0]; }
};

// The three "philox4x32 10" lines of tests/kat_vectors in Random123 (D. E. Shaw Research), the
// reference implementation of Philox (Salmon et al., SC'11).
constexpr PhiloxKat kKats[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000}, {0x00000000, 0x00000000},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

std::vector<uint64_t> fill_host(uint64_t seed, uint64_t stream, uint64_t first, int64_t n) {
  std::vector<uint64_t> out(static_cast<std::size_t>(n));
  philox_fill(seed, stream, first, TensorView::contiguous(out.data(), DType::kInt64, {n}));
  return out;
}

TEST(RandomFill, PhiloxBlockMatchesThePublishedKnownAnswers) {
  for (const PhiloxKat& k : kKats) {
    const PhiloxBlock b = philox_block(k.seed(), k.stream(), k.index());
    EXPECT_EQ((std::array<uint32_t, 4>{b.v[0], b.v[1], b.v[2], b.v[3]}), k.output) << std::hex << k.seed();
  }
}

TEST(RandomFill, EveryPositionHoldsTheKnownAnswerForItsIndex) {
  // Each known answer lands at position `at` of a fill that starts `at` indices earlier (the
  // first index wraps around 2^64 for the all-zero counter, as the counter does).
  constexpr int64_t kLength = 8;
  for (const PhiloxKat& k : kKats) {
    for (int64_t at = 0; at < kLength; ++at) {
      const std::vector<uint64_t> out = fill_host(k.seed(), k.stream(), k.index() - static_cast<uint64_t>(at), kLength);
      EXPECT_EQ(out[static_cast<std::size_t>(at)], k.u64()) << "seed " << std::hex << k.seed() << ", position " << at;
      for (int64_t i = 0; i < kLength; ++i) {
        if (i != at) {
          EXPECT_NE(out[static_cast<std::size_t>(i)], k.u64()) << "position " << i;
        }
      }
    }
  }
}

TEST(RandomFill, BitsAreBalancedAndUnitDoublesHaveUniformMoments) {
  constexpr int64_t n = 1 << 16;
  const std::vector<uint64_t> out = fill_host(2026, 7, 0, n);
  // Each bit is set with probability 1/2: standard deviation of its frequency 0.5 / sqrt(n) ~ 0.002;
  // 0.01 is five of them.
  std::array<int64_t, 64> ones{};
  for (const uint64_t x : out) {
    for (int bit = 0; bit < 64; ++bit) ones[bit] += static_cast<int64_t>((x >> bit) & 1);
  }
  for (int bit = 0; bit < 64; ++bit) EXPECT_NEAR(static_cast<double>(ones[bit]) / n, 0.5, 0.01) << "bit " << bit;
  // Uniform [0, 1): mean 1/2 (sd of the sample mean 0.0011), variance 1/12 (sd ~0.0003 for n).
  double sum = 0, sum_sq = 0;
  for (const uint64_t x : out) {
    const double u = u64_to_unit_double(x);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum_sq += u * u;
  }
  const double mean = sum / n;
  EXPECT_NEAR(mean, 0.5, 0.006);
  EXPECT_NEAR(sum_sq / n - mean * mean, 1.0 / 12.0, 0.002);
  // 2^16 draws of 64 bits repeat with probability ~1e-10: a repeat means a broken counter.
  std::vector<uint64_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "a value repeats";
}

TEST(RandomFill, SeedsAndStreamsGiveUnrelatedSequences) {
  constexpr int64_t n = 4096;
  const std::vector<uint64_t> base = fill_host(5, 9, 100, n);
  for (const auto& other : {fill_host(6, 9, 100, n), fill_host(5, 10, 100, n), fill_host(5, 9, 101, n)}) {
    int64_t equal = 0;
    int64_t differing_bits = 0;
    for (int64_t i = 0; i < n; ++i) {
      equal += base[static_cast<std::size_t>(i)] == other[static_cast<std::size_t>(i)];
      differing_bits += std::popcount(base[static_cast<std::size_t>(i)] ^ other[static_cast<std::size_t>(i)]);
    }
    EXPECT_EQ(equal, 0);
    // Unrelated words differ in 32 of 64 bits on average (sd of the mean over n words ~0.06).
    EXPECT_NEAR(static_cast<double>(differing_bits) / n, 32.0, 0.5);
  }
}

TEST(RandomFill, ChunksFilledByAnyThreadsInAnyOrderMakeTheSameStream) {
  constexpr int64_t n = 100000;
  const std::vector<uint64_t> whole = fill_host(11, 3, 1000, n);
  // Uneven chunks, filled concurrently and from the last to the first: each value depends on its
  // index alone.
  const std::vector<int64_t> bounds{0, 1, 7, 4096, 4097, 50000, 99999, n};
  std::vector<uint64_t> chunked(n, 0);
  std::vector<std::thread> threads;
  for (std::size_t c = bounds.size() - 1; c-- > 0;) {
    threads.emplace_back([&, c] {
      const int64_t lo = bounds[c], hi = bounds[c + 1];
      philox_fill(11, 3, 1000 + static_cast<uint64_t>(lo),
                  TensorView::contiguous(chunked.data() + lo, DType::kInt64, {hi - lo}));
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(chunked, whole);
  EXPECT_EQ(fill_host(11, 3, 1000, n), whole) << "a second fill differs";
}

TEST(RandomFill, RejectsOtherDtypesAndStridedViews) {
  std::vector<int64_t> out(8, 0);
  EXPECT_THROW(philox_fill(1, 1, 0, TensorView::contiguous(out.data(), DType::kInt32, {8})), InvalidArgument);
  TensorView strided = TensorView::contiguous(out.data(), DType::kInt64, {4});
  strided.strides[0] = 2;
  EXPECT_THROW(philox_fill(1, 1, 0, strided), InvalidArgument);
  EXPECT_EQ(out, std::vector<int64_t>(8, 0)) << "a rejected fill wrote";
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
  // And the device's own draws match the known answers (not only the host's).
  for (const PhiloxKat& k : kKats) {
    uint64_t value = 0;
    philox_fill(k.seed(), k.stream(), k.index(), TensorView::contiguous(device.data(), DType::kInt64, {1}, MemoryKind::kDevice));
    copy_bytes(&value, MemoryKind::kHost, device.data(), MemoryKind::kDevice, sizeof(value));
    EXPECT_EQ(value, k.u64());
  }
}

}  // namespace
}  // namespace graphtier
