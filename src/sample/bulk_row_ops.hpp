// The per-row steps of bulk sampling (bulk_sampler.hpp, steps 2 and 3), written once for the
// host and the device so that the CPU and CUDA backends agree to the bit: both call these same
// functions on the same exact double values (multiples of kBulkProbabilityUnit), and every
// floating-point operation here is a single IEEE-rounded add, multiply or divide
// (core/portable_math.hpp).
//
// Plain C++ under g++, host/device code under nvcc (like core/rng.hpp).
#pragma once

#include <cstdint>

#include "graphtier/core/portable_math.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/sample/random.hpp"
#include "pairwise_sum.hpp"
#include "segments.hpp"

namespace graphtier::sample::bulk {

using ::graphtier::add_rn;
using ::graphtier::div_rn;
using ::graphtier::mul_rn;

GRAPHTIER_HD uint64_t round_stream_of(uint64_t layer_stream, int64_t round) {
  return round == 0 ? layer_stream : mix64(layer_stream + 0xD1B54A32D192ED03ull * static_cast<uint64_t>(round));
}

/// Entries a row of `n` entries emits for a budget (-1 = all) under the step-2 rules.
GRAPHTIER_HD int64_t sampled_count(int64_t n, int64_t budget, bool replace) {
  if (n == 0 || budget == 0) return 0;
  if (budget < 0) return n;
  if (replace) return budget;
  return budget < n ? budget : n;
}

/// First k in [0, n) with prefix[k] > target, or n.
GRAPHTIER_HD int64_t upper_bound_index(const double* prefix, int64_t n, double target) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (prefix[mid] > target) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

/// Position of `key` in the sorted cols[0, n), or -1.
template <typename Index>
GRAPHTIER_HD int64_t find_sorted(const Index* cols, int64_t n, int64_t key) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (static_cast<int64_t>(cols[mid]) < key) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < n && static_cast<int64_t>(cols[lo]) == key ? lo : -1;
}

/// Whether a row of `n` entries really draws under a budget (and so needs the scratch of its
/// prefix sums): it emits something, but not simply every entry.
GRAPHTIER_HD bool row_draws(int64_t n, int64_t budget, bool replace) {
  return sampled_count(n, budget, replace) > 0 && budget >= 0 && (replace || budget < n);
}

/// Draw j of a round: u * total, u the draw's unit double.
GRAPHTIER_HD double draw_target(uint64_t seed, uint64_t round_stream, int64_t key, int64_t j, double total) {
  return mul_rn(u64_to_unit_double(node_bits(seed, round_stream, key, j)), total);
}

/// With replacement: the entry of the inclusive prefix sums `prefix` (all weights positive) a
/// target lands on; the last entry if rounding put the target at the total.
GRAPHTIER_HD int64_t pick_with_replacement(const double* prefix, int64_t n, double target) {
  const int64_t k = upper_bound_index(prefix, n, target);
  return k < n ? k : n - 1;
}

/// Without replacement: the same over the prefix sums of the weights left (chosen entries zeroed),
/// falling back on the last positive entry.
GRAPHTIER_HD int64_t pick_distinct(const double* prefix, int64_t n, double target, int64_t last_positive) {
  const int64_t k = upper_bound_index(prefix, n, target);
  return k < n ? k : last_positive;
}

/// Step 2 for one row of `n` positive weights `w`: writes the chosen entry offsets (in [0, n)) to
/// `out` (room for sampled_count(n, budget, replace)) and returns how many. `work` and `prefix`
/// are scratch of n doubles each.
///
/// Every prefix sum here is exact (the weights are on the kBulkProbabilityUnit grid and a row's
/// total stays below 2^53 units), so a backend may add in any order, e.g. a block-wide scan
/// (bulk_rows_cuda.cuh), and the draws of one round may land in any order: a round's outcome is
/// the set of entries its draws hit.
GRAPHTIER_HD int64_t sample_row(const double* w, int64_t n, int64_t budget, bool replace, uint64_t seed,
                                uint64_t layer_stream, int64_t key, double* work, double* prefix, int64_t* out) {
  const int64_t count = sampled_count(n, budget, replace);
  if (count == 0) return 0;
  if (!row_draws(n, budget, replace)) {
    for (int64_t k = 0; k < n; ++k) out[k] = k;
    return n;
  }
  if (replace) {
    double total = 0;
    for (int64_t k = 0; k < n; ++k) prefix[k] = total = add_rn(total, w[k]);
    for (int64_t j = 0; j < budget; ++j) {
      out[j] = pick_with_replacement(prefix, n, draw_target(seed, layer_stream, key, j, total));
    }
    return budget;
  }
  for (int64_t k = 0; k < n; ++k) work[k] = w[k];
  int64_t chosen = 0;
  for (int64_t round = 0; chosen < budget; ++round) {
    double total = 0;
    int64_t last_positive = -1;
    for (int64_t k = 0; k < n; ++k) {
      prefix[k] = total = add_rn(total, work[k]);
      if (work[k] > 0) last_positive = k;
    }
    const uint64_t rs = round_stream_of(layer_stream, round);
    const int64_t need = budget - chosen;
    for (int64_t j = 0; j < need; ++j) {
      const int64_t k = pick_distinct(prefix, n, draw_target(seed, rs, key, j, total), last_positive);
      // A zero here is an entry chosen earlier in this round (the prefix sums skip earlier rounds').
      if (work[k] > 0) {
        work[k] = 0;
        ++chosen;
      }
    }
  }
  int64_t emitted = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (work[k] == 0) out[emitted++] = k;
  }
  return emitted;
}

using ::graphtier::sample::segment_of;  // the batch (or row) owning a position of consecutive ranges

/// LADIES' 1/p-corrected term of a kept entry of multiplicity m and P value p.
GRAPHTIER_HD double ladies_term(double m, double p) { return div_rn(m, p); }

// Row sums: pairwise_sum.hpp's tree (a warp whose lanes each sum an aligned chunk and then add the
// lanes' sums in adjacent pairs, bulk_sampler_cuda.cu, gets the same bits).
using ::graphtier::sample::pairwise_sum;
using ::graphtier::sample::pairwise_sum_of;

/// Step 3 of LADIES for one dst row: the LADIES weight of entry k of the kept entries, given the
/// kept entries' multiplicities `m` and their P values `p` (both [n]): (m_k / p_k) / sum_i (m_i / p_i),
/// the sum in pairwise_sum's order (so that a GPU warp adds a hub row's terms in parallel).
GRAPHTIER_HD double ladies_row_sum(const double* m, const double* p, int64_t n) {
  return pairwise_sum_of(n, [m, p](int64_t i) { return ladies_term(m[i], p[i]); });
}

GRAPHTIER_HD float ladies_weight_of_term(double term, double row_sum) {
  return static_cast<float>(div_rn(term, row_sum));
}

GRAPHTIER_HD float ladies_weight(double m, double p, double row_sum) {
  return ladies_weight_of_term(ladies_term(m, p), row_sum);
}

}  // namespace graphtier::sample::bulk
