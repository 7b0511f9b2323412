// Floyd's draws of the host's sampler on the CPU's vector lanes (AVX-512 or AVX2, chosen once when
// the program runs, else one value at a time): the Philox calls of a group of nodes in one sweep,
// and the comparisons of nbr::floyd_small. Bit-identical to the functions the device and every
// other host path compute (core/rng.hpp's philox_block, neighbor_steps.hpp's floyd_small); the
// tests compare them on every path.
#pragma once

#include <cstdint>
#include <string_view>

namespace graphtier::sample::cpu {

/// For k in [0, n): draws[2k] and draws[2k + 1] are pair_half(philox_block(seed, stream,
/// index[k]), 0) and (..., 1), i.e. words 0-1 and 2-3 of the block as 64-bit draws.
void philox_pair_draws(uint64_t seed, uint64_t stream, const uint64_t* index, int64_t n, uint64_t* draws);

/// nbr::floyd_small(t, begin, d, f, picks, out) for f <= nbr::kWarpFloyd: the collisions by the
/// warp's rule (nbr::floyd_warp_collisions) and each pick's rank counted on vector lanes.
void floyd_small_lanes(const int64_t* t, int64_t begin, int64_t d, int f, int64_t* out);

/// The lanes this CPU runs them on: "avx512", "avx2" or "scalar".
std::string_view lanes_name();

}  // namespace graphtier::sample::cpu
