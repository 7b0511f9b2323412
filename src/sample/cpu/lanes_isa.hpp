// What each instruction set's file provides to cpu/lanes.cpp: the operations of cpu/lanes.hpp
// that run on vector lanes.
#pragma once

#include <cstdint>

namespace graphtier::sample::cpu {

struct LaneOps {
  /// philox_pair_draws.
  void (*pair_draws)(uint64_t seed, uint64_t stream, const uint64_t* index, int64_t n, uint64_t* draws);
  /// Bit i (0 < i < f <= 32) set iff t[i] equals an earlier t[k]; every t in [0, d).
  uint32_t (*repeats)(const int64_t* t, int f, int64_t d);
  /// Floyd's set from its values t and the draws that collided (bit i: draw i keeps d - f + i, not
  /// t[i]): out[rank of pick i among the f picks] = begin + pick i.
  void (*place)(const int64_t* t, uint32_t collided, int f, int64_t d, int64_t begin, int64_t* out);
};

namespace {
/// Floyd's pick i from its value and the collided draws (LaneOps::place). Internal to each file
/// that includes it: one of them is compiled for wider lanes than the rest of the program.
inline int64_t floyd_pick_of(const int64_t* t, uint32_t collided, int i, int f, int64_t d) {
  return ((collided >> i) & 1u) != 0 ? d - f + i : t[i];
}
}  // namespace

/// One value at a time (cpu/lanes.cpp): what runs on a CPU without the lanes below.
LaneOps lane_ops_scalar();

#if defined(__x86_64__)
// Each in its own file, compiled for its instruction set alone (CMakeLists.txt); called only on a
// CPU that has it (AVX-512: its foundation and conflict detection, F and CD).
LaneOps lane_ops_avx512();
LaneOps lane_ops_avx2();
#endif

}  // namespace graphtier::sample::cpu
