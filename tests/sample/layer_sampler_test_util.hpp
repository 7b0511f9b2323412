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

/// The samplers' row sum (pairwise_sum.hpp) the slow way: x padded with zeros to a power of two,
/// then halved level by level (pairs of neighbours) down to one value.
double tree_sum(const std::vector<double>& x);

/// Every candidate (position) in the race's order (layer_sampler.hpp, layer_draws.hpp), written
/// the slow way: explicit levels of 128-bit subtree sums, every node's key computed top-down, one
/// full sort. The first s are the s draws.
std::vector<int64_t> naive_race_order(const std::vector<uint64_t>& weights, uint64_t seed, uint64_t layer_stream);

/// The MiniBatch by the definitions: std::map / std::set everywhere, the draws by naive_race_order.
MiniBatch reference_layer_sample(const OwnedGraph& g, std::span<const int64_t> seeds,
                                 const LayerSamplerOptions& options, uint64_t stream);

/// P(item j is among s successive draws without replacement, probabilities ∝ weights), by
/// enumerating every ordered sequence of draws (no Monte Carlo): n!/(n-s)! sequences.
std::vector<double> exact_inclusion(const std::vector<double>& weights, int s);

}  // namespace graphtier::sample::test
