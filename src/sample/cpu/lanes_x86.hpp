// cpu/lanes_isa.hpp's operations written once for the files that compile them for one instruction
// set each (cpu/lanes_avx512.cpp with -mavx512f, cpu/lanes_avx2.cpp with -mavx2): an `Isa` names
// the lanes' type and operations on 64-bit lanes. Everything here is internal to the file that
// includes it: nothing with external linkage may be compiled for wider lanes than the rest of the
// program runs, so these files take only constants from the project's other headers (their inline
// functions would be emitted there as weak symbols, which scripts/check-odr.sh refuses).
#pragma once

#include <cstdint>

#include "cpu/lanes_isa.hpp"
#include "graphtier/core/rng.hpp"
#include "neighbor_steps.hpp"

namespace graphtier::sample::cpu {
namespace {

inline constexpr int kMaxFloyd = nbr::kWarpFloyd;

// Philox4x32-10 (core/rng.hpp) with one call per 64-bit lane: word w of the calls in vector w,
// the 32-bit word in a lane's low half (the multiply reads only that half, so the high halves may
// hold anything until the draws are packed). A round is rng.hpp's: two 32x32->64 multiplies, their
// high words XORed with the other two words and the round key. `Unroll` vectors go through the
// rounds together, so that the multiplies' latency overlaps.
template <typename Isa, int Unroll>
void philox_vectors(uint64_t seed, uint64_t stream, const uint64_t* index, uint64_t* draws) {
  using V = typename Isa::V;
  constexpr int kLanes = Isa::kLanes;
  V w0[Unroll], w1[Unroll], w2[Unroll], w3[Unroll];
  const V s0 = Isa::set1(stream & 0xFFFFFFFFu), s1 = Isa::set1(stream >> 32);
  for (int u = 0; u < Unroll; ++u) {
    const V i = Isa::load(index + u * kLanes);
    w0[u] = i;
    w1[u] = Isa::shr32(i);
    w2[u] = s0;
    w3[u] = s1;
  }
  const V m0 = Isa::set1(philox::kM0), m1 = Isa::set1(philox::kM1);
  auto k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < philox::kRounds; ++round) {
    const V key0 = Isa::set1(k0), key1 = Isa::set1(k1);
    for (int u = 0; u < Unroll; ++u) {
      const V p0 = Isa::mul32(m0, w0[u]);
      const V p1 = Isa::mul32(m1, w2[u]);
      w0[u] = Isa::xor3(Isa::shr32(p1), w1[u], key0);
      w2[u] = Isa::xor3(Isa::shr32(p0), w3[u], key1);
      w1[u] = p1;
      w3[u] = p0;
    }
    k0 += philox::kW0;
    k1 += philox::kW1;
  }
  for (int u = 0; u < Unroll; ++u) {
    Isa::store_pairs(Isa::pack(w0[u], w1[u]), Isa::pack(w2[u], w3[u]), draws + 2 * u * kLanes);
  }
}

template <typename Isa>
void pair_draws(uint64_t seed, uint64_t stream, const uint64_t* index, int64_t n, uint64_t* draws) {
  constexpr int kLanes = Isa::kLanes;
  int64_t k = 0;
  for (; k + 4 * kLanes <= n; k += 4 * kLanes) philox_vectors<Isa, 4>(seed, stream, index + k, draws + 2 * k);
  for (; k + kLanes <= n; k += kLanes) philox_vectors<Isa, 1>(seed, stream, index + k, draws + 2 * k);
  if (k == n) return;
  // The last calls in one more vector, its unused lanes on counter 0.
  uint64_t tail_index[kLanes] = {};
  uint64_t tail_draws[2 * kLanes];
  for (int64_t j = k; j < n; ++j) tail_index[j - k] = index[j];
  philox_vectors<Isa, 1>(seed, stream, tail_index, tail_draws);
  for (int64_t j = 0; j < 2 * (n - k); ++j) draws[2 * k + j] = tail_draws[j];
}

/// values[0, f) in vectors, the lanes past f zero.
template <typename Isa>
int load_values(const int64_t* values, int f, typename Isa::V* v) {
  constexpr int kLanes = Isa::kLanes;
  const int vectors = (f + kLanes - 1) / kLanes;
  for (int j = 0; j < vectors; ++j) v[j] = Isa::load_first(values + j * kLanes, f - j * kLanes);
  return vectors;
}

template <typename Isa>
uint32_t repeats(const int64_t* t, int f, int64_t /*d*/) {
  constexpr int kLanes = Isa::kLanes;
  typename Isa::V tv[kMaxFloyd / kLanes];
  load_values<Isa>(t, f, tv);
  uint32_t repeated = 0;
  for (int i = 1; i < f; ++i) {
    const auto x = Isa::set1(static_cast<uint64_t>(t[i]));
    uint32_t equal = 0;
    for (int j = 0; j * kLanes < i; ++j) equal |= Isa::equal_bits(tv[j], x) << (j * kLanes);
    if ((equal & ((1u << i) - 1)) != 0) repeated |= 1u << i;
  }
  return repeated;
}

template <typename Isa>
void place(const int64_t* t, uint32_t collided, int f, int64_t d, int64_t begin, int64_t* out) {
  constexpr int kLanes = Isa::kLanes;
  int64_t picks[kMaxFloyd];
  for (int i = 0; i < f; ++i) picks[i] = floyd_pick_of(t, collided, i, f, d);
  typename Isa::V pv[kMaxFloyd / kLanes];
  const int vectors = load_values<Isa>(picks, f, pv);
  const uint64_t valid = (uint64_t{1} << f) - 1;  // the zero lanes past f count for nothing
  for (int i = 0; i < f; ++i) {
    const auto x = Isa::set1(static_cast<uint64_t>(picks[i]));
    uint64_t below = 0;
    for (int j = 0; j < vectors; ++j) below |= static_cast<uint64_t>(Isa::less_bits(pv[j], x)) << (j * kLanes);
    out[__builtin_popcountll(below & valid)] = begin + picks[i];
  }
}

}  // namespace
}  // namespace graphtier::sample::cpu
