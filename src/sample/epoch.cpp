#include "graphtier/sample/epoch.hpp"

#include <utility>

#include "graphtier/core/rng.hpp"

namespace graphtier::sample {

std::vector<int64_t> shuffled_ids(std::span<const int64_t> ids, uint64_t seed, uint64_t epoch) {
  std::vector<int64_t> order(ids.begin(), ids.end());
  // Stream tag keeps the shuffle's draws apart from the samplers' (random.hpp streams are mixed).
  constexpr uint64_t kShuffleStream = 0x53485546464C45ull;  // "SHUFFLE"
  for (std::size_t i = order.size(); i > 1; --i) {
    const auto j = bounded_u64(philox_u64(seed, kShuffleStream ^ (epoch << 8), i), i);
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

}  // namespace graphtier::sample
