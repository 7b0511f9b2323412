// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11), identical on host and device.
//
// A draw is a pure function of (key, counter): no state is carried between draws, so any thread,
// on the CPU or the GPU, that computes the same counter gets the same bits. Callers build the
// counter from what identifies the draw (seed, epoch, batch, node, draw; docs/architecture.md,
// Randomness): the 64-bit seed is the key, and the 128-bit counter is split into a 64-bit
// `stream` (e.g. epoch and batch) and a 64-bit `index` (e.g. node and draw). One Philox call
// yields four 32-bit words.
//
// This header is plain C++ under g++ and host/device code under nvcc.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GRAPHTIER_HD __host__ __device__ __forceinline__
#else
#define GRAPHTIER_HD inline
#endif

namespace graphtier {

struct PhiloxBlock {
  uint32_t v[4];
};

namespace detail {
GRAPHTIER_HD uint32_t mulhilo32(uint32_t a, uint32_t b, uint32_t* hi) {
  const uint64_t product = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(product >> 32);
  return static_cast<uint32_t>(product);
}
}  // namespace detail

/// Philox4x32-10's constants: the round multipliers, the key's increments per round (also the
/// host's vector lanes', src/sample/cpu/lanes_x86.hpp).
namespace philox {
inline constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
inline constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
inline constexpr int kRounds = 10;
}  // namespace philox

/// Philox4x32 with 10 rounds on counter (c0..c3) and key (k0, k1).
GRAPHTIER_HD PhiloxBlock philox4x32_10(PhiloxBlock ctr, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < philox::kRounds; ++round) {
    uint32_t hi0, hi1;
    const uint32_t lo0 = detail::mulhilo32(philox::kM0, ctr.v[0], &hi0);
    const uint32_t lo1 = detail::mulhilo32(philox::kM1, ctr.v[2], &hi1);
    ctr = PhiloxBlock{{hi1 ^ ctr.v[1] ^ k0, lo1, hi0 ^ ctr.v[3] ^ k1, lo0}};
    k0 += philox::kW0;
    k1 += philox::kW1;
  }
  return ctr;
}

/// The four 32-bit words for (seed, stream, index).
GRAPHTIER_HD PhiloxBlock philox_block(uint64_t seed, uint64_t stream, uint64_t index) {
  return philox4x32_10(PhiloxBlock{{static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32),
                                    static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)}},
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

/// 64 random bits for (seed, stream, index): words 0 and 1 of the block.
GRAPHTIER_HD uint64_t philox_u64(uint64_t seed, uint64_t stream, uint64_t index) {
  const PhiloxBlock b = philox_block(seed, stream, index);
  return (static_cast<uint64_t>(b.v[1]) << 32) | b.v[0];
}

/// Uniform float in [0, 1) from the top 24 bits of a word (exactly representable).
GRAPHTIER_HD float u32_to_unit_float(uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }

/// Uniform double in [0, 1) from the top 53 bits.
GRAPHTIER_HD double u64_to_unit_double(uint64_t x) {
  return static_cast<double>(x >> 11) * (1.0 / 9007199254740992.0);
}

/// Integer in [0, n) by multiply-shift of 64 random bits (Lemire); the bias is below n / 2^64,
/// and no rejection loop keeps host and device draw counts identical.
GRAPHTIER_HD uint64_t bounded_u64(uint64_t bits, uint64_t n) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(bits, n);
#else
  __extension__ using u128 = unsigned __int128;  // a GCC/Clang extension, hence -Wpedantic's note
  return static_cast<uint64_t>((static_cast<u128>(bits) * n) >> 64);
#endif
}

/// SplitMix64 finalizer: a cheap bijective mix of 64 bits, for hashing ids.
GRAPHTIER_HD uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace graphtier
