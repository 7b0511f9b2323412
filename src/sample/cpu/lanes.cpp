#include "cpu/lanes.hpp"

#include "graphtier/core/rng.hpp"
#include "graphtier/sample/random.hpp"
#include "cpu/lanes_isa.hpp"
#include "neighbor_steps.hpp"

namespace graphtier::sample::cpu {
namespace {

void pair_draws_scalar(uint64_t seed, uint64_t stream, const uint64_t* index, int64_t n, uint64_t* draws) {
  for (int64_t k = 0; k < n; ++k) {
    const PhiloxBlock b = philox_block(seed, stream, index[k]);
    draws[2 * k] = pair_half(b, 0);
    draws[2 * k + 1] = pair_half(b, 1);
  }
}

uint32_t repeats_scalar(const int64_t* t, int f, int64_t /*d*/) {
  uint32_t repeated = 0;
  for (int i = 1; i < f; ++i) {
    for (int k = 0; k < i; ++k) {
      if (t[k] == t[i]) repeated |= 1u << i;
    }
  }
  return repeated;
}

void place_scalar(const int64_t* t, uint32_t collided, int f, int64_t d, int64_t begin, int64_t* out) {
  int64_t picks[nbr::kWarpFloyd];
  for (int i = 0; i < f; ++i) picks[i] = floyd_pick_of(t, collided, i, f, d);
  for (int i = 0; i < f; ++i) out[nbr::floyd_warp_rank(picks[i], f, [&](int k) { return picks[k]; })] = begin + picks[i];
}

struct Lanes {
  LaneOps ops;
  std::string_view name;
};

Lanes choose_lanes() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd")) return {lane_ops_avx512(), "avx512"};
  if (__builtin_cpu_supports("avx2")) return {lane_ops_avx2(), "avx2"};
#endif
  return {lane_ops_scalar(), "scalar"};
}

const Lanes& lanes() {
  static const Lanes chosen = choose_lanes();
  return chosen;
}

}  // namespace

LaneOps lane_ops_scalar() { return {pair_draws_scalar, repeats_scalar, place_scalar}; }

void philox_pair_draws(uint64_t seed, uint64_t stream, const uint64_t* index, int64_t n, uint64_t* draws) {
  lanes().ops.pair_draws(seed, stream, index, n, draws);
}

void floyd_small_lanes(const int64_t* t, int64_t begin, int64_t d, int f, int64_t* out) {
  const LaneOps& lanes = cpu::lanes().ops;
  const uint32_t collided =
      nbr::floyd_warp_collisions(lanes.repeats(t, f, d), f, [&](int i) { return nbr::floyd_warp_ref(t[i], i, d, f); });
  lanes.place(t, collided, f, d, begin, out);
}

std::string_view lanes_name() { return lanes().name; }

}  // namespace graphtier::sample::cpu
