// cpu/lanes_isa.hpp's operations on AVX-512 lanes: this file alone is compiled with -mavx512f
// -mavx512cd (CMakeLists.txt), on x86-64 only.
#if defined(__x86_64__)
// GCC 12's avx512fintrin.h seeds its intrinsics with `__m512i __Y = __Y;`, which
// -Wmaybe-uninitialized reports wherever they are inlined (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstdint>

#include "cpu/lanes_isa.hpp"
#include "cpu/lanes_x86.hpp"

namespace graphtier::sample::cpu {
namespace {

struct Avx512 {
  using V = __m512i;
  static constexpr int kLanes = 8;
  static V load(const uint64_t* p) { return _mm512_loadu_si512(p); }
  /// The first `count` lanes from p (none when count <= 0), the others zero; reads no more.
  static V load_first(const int64_t* p, int count) {
    const __mmask8 lanes = count <= 0 ? 0 : count >= kLanes ? 0xFF : static_cast<__mmask8>((1u << count) - 1);
    return _mm512_maskz_loadu_epi64(lanes, p);
  }
  static V set1(uint64_t x) { return _mm512_set1_epi64(static_cast<long long>(x)); }
  static V shr32(V a) { return _mm512_srli_epi64(a, 32); }
  static V mul32(V a, V b) { return _mm512_mul_epu32(a, b); }
  static V xor3(V a, V b, V c) { return _mm512_ternarylogic_epi64(a, b, c, 0x96); }
  /// The 64-bit draw of words (lo, hi): hi << 32 | lo's low half.
  static V pack(V lo, V hi) { return _mm512_or_si512(_mm512_and_si512(lo, set1(0xFFFFFFFFu)), _mm512_slli_epi64(hi, 32)); }
  /// Lane j's even and odd draws to out[2j] and out[2j + 1].
  static void store_pairs(V even, V odd, uint64_t* out) {
    const V lo = _mm512_unpacklo_epi64(even, odd);  // e0 o0 e2 o2 e4 o4 e6 o6
    const V hi = _mm512_unpackhi_epi64(even, odd);  // e1 o1 e3 o3 e5 o5 e7 o7
    _mm512_storeu_si512(out, _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), hi));
    _mm512_storeu_si512(out + 8, _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15), hi));
  }
  static uint32_t equal_bits(V a, V b) { return _mm512_cmpeq_epi64_mask(a, b); }
  static uint32_t less_bits(V a, V b) { return _mm512_cmplt_epi64_mask(a, b); }
};

/// Above every pick that fits in 32-bit lanes: what the lanes past f hold when ranks are counted.
constexpr int32_t kAbovePicks = 0x7FFFFFFF;

// Up to 16 values below 2^31 (a fanout of at most 16 on a column of fewer than 2^31 edges: the
// usual case) go in one vector of 32-bit lanes, the lanes past f set to `pad`.
bool fits_32_bit_lanes(int f, int64_t d) { return f <= 16 && d <= kAbovePicks; }

__m512i lanes_32(const int64_t* values, int f, int32_t pad) {
  const __m256i low = _mm512_cvtepi64_epi32(Avx512::load_first(values, f));
  const __m256i high = _mm512_cvtepi64_epi32(Avx512::load_first(values + 8, f - 8));
  const __m512i all = _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
  return _mm512_mask_mov_epi32(_mm512_set1_epi32(pad), static_cast<__mmask16>((1u << f) - 1), all);
}

// Conflict detection gives each lane the earlier lanes that equal it, in one instruction.
uint32_t repeats_avx512(const int64_t* t, int f, int64_t d) {
  if (!fits_32_bit_lanes(f, d)) return repeats<Avx512>(t, f, d);
  const __m512i conflicts = _mm512_conflict_epi32(lanes_32(t, f, 0));  // lanes past f are later: no effect
  return _mm512_test_epi32_mask(conflicts, conflicts) & ((1u << f) - 1);
}

void place_avx512(const int64_t* t, uint32_t collided, int f, int64_t d, int64_t begin, int64_t* out) {
  if (!fits_32_bit_lanes(f, d)) return place<Avx512>(t, collided, f, d, begin, out);
  // The picks in lanes: t, or d - f + i where draw i collided; the lanes past f are below no pick.
  const __m512i j = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int32_t>(d - f)),
                                     _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  const __m512i picks = _mm512_mask_mov_epi32(lanes_32(t, f, kAbovePicks),
                                              static_cast<__mmask16>(collided), j);
  for (int i = 0; i < f; ++i) {
    const __m512i pick = _mm512_permutexvar_epi32(_mm512_set1_epi32(i), picks);
    out[__builtin_popcount(_mm512_cmplt_epi32_mask(picks, pick))] = begin + floyd_pick_of(t, collided, i, f, d);
  }
}

}  // namespace

LaneOps lane_ops_avx512() { return {pair_draws<Avx512>, repeats_avx512, place_avx512}; }

}  // namespace graphtier::sample::cpu
#endif  // __x86_64__
