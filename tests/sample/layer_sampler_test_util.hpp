// A naive reference of layer-wise sampling (layer_sampler.hpp's definitions written the slow,
// obvious way) and exact inclusion probabilities of successive sampling, for the tests.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "graphtier/sample/layer_sampler.hpp"
#include "sample_test_util.hpp"

namespace graphtier::sample::test {

/// Column weights in double, straight from the definition: Σ over the nonzeros (i, u) of the rows
/// used (`rows`) of 1 / (d_i + 1)^2. Keys are the candidates.
std::map<int64_t, double> exact_column_norms(const OwnedGraph& g, std::span<const int64_t> rows);

/// The draw weights w_u with 128-bit integer arithmetic (a direct (d + 1)^2 division, std::map).
std::map<int64_t, uint64_t> reference_draw_weights(const OwnedGraph& g, std::span<const int64_t> rows);

/// The MiniBatch by the definitions: std::map / std::set everywhere, successive draws by erasing
/// from a list and scanning it linearly.
MiniBatch reference_layer_sample(const OwnedGraph& g, std::span<const int64_t> seeds,
                                 const LayerSamplerOptions& options, uint64_t stream);

/// P(item j is among s successive draws without replacement, probabilities ∝ weights), by
/// enumerating every ordered sequence of draws (no Monte Carlo): n!/(n-s)! sequences.
std::vector<double> exact_inclusion(const std::vector<double>& weights, int s);

}  // namespace graphtier::sample::test
