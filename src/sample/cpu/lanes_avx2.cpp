// cpu/lanes_isa.hpp's operations on AVX2 lanes: this file alone is compiled with -mavx2
// (CMakeLists.txt), on x86-64 only.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "cpu/lanes_isa.hpp"
#include "cpu/lanes_x86.hpp"

namespace graphtier::sample::cpu {
namespace {

struct Avx2 {
  using V = __m256i;
  static constexpr int kLanes = 4;
  static V load(const uint64_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  /// The first `count` lanes from p (none when count <= 0), the others zero; reads no more.
  static V load_first(const int64_t* p, int count) {
    const V lane = _mm256_setr_epi64x(0, 1, 2, 3);
    const V mask = _mm256_cmpgt_epi64(_mm256_set1_epi64x(count), lane);  // lanes below count
    return _mm256_maskload_epi64(reinterpret_cast<const long long*>(p), mask);
  }
  static V set1(uint64_t x) { return _mm256_set1_epi64x(static_cast<long long>(x)); }
  static V shr32(V a) { return _mm256_srli_epi64(a, 32); }
  static V mul32(V a, V b) { return _mm256_mul_epu32(a, b); }
  static V xor3(V a, V b, V c) { return _mm256_xor_si256(_mm256_xor_si256(a, b), c); }
  static V pack(V lo, V hi) { return _mm256_or_si256(_mm256_and_si256(lo, set1(0xFFFFFFFFu)), _mm256_slli_epi64(hi, 32)); }
  static void store_pairs(V even, V odd, uint64_t* out) {
    const V lo = _mm256_unpacklo_epi64(even, odd);  // e0 o0 e2 o2
    const V hi = _mm256_unpackhi_epi64(even, odd);  // e1 o1 e3 o3
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 4), _mm256_permute2x128_si256(lo, hi, 0x31));
  }
  static uint32_t bits(V mask) { return static_cast<uint32_t>(_mm256_movemask_pd(_mm256_castsi256_pd(mask))); }
  static uint32_t equal_bits(V a, V b) { return bits(_mm256_cmpeq_epi64(a, b)); }
  static uint32_t less_bits(V a, V b) { return bits(_mm256_cmpgt_epi64(b, a)); }
};

}  // namespace

LaneOps lane_ops_avx2() { return {pair_draws<Avx2>, repeats<Avx2>, place<Avx2>}; }

}  // namespace graphtier::sample::cpu
#endif  // __x86_64__
