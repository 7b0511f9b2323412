// The epoch/batch contract: which seeds make batch b of epoch e and which sampler stream draws its
// neighbourhoods. Every consumer of a minibatch (the loader, presampling, and any rank of a
// distributed run) derives it from these three definitions, so all of them see the same batch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace graphtier::sample {

/// The sampler stream of batch `b` of epoch `epoch`: every consumer of that minibatch (the loader,
/// presampling) samples it with this stream, so they all see the same neighbourhoods.
constexpr uint64_t minibatch_stream(int64_t epoch, int64_t b) noexcept {
  return (static_cast<uint64_t>(epoch) << 32) | static_cast<uint64_t>(b);
}

/// The seeds of batch `b` of an epoch's `order`: [b * batch_size, (b + 1) * batch_size), the last
/// batch possibly shorter. With minibatch_stream, what makes the loader's batches and
/// presampling's the same.
inline std::span<const int64_t> batch_seeds(std::span<const int64_t> order, int64_t batch_size, int64_t b) {
  const int64_t begin = b * batch_size;
  const int64_t end = std::min<int64_t>(begin + batch_size, static_cast<int64_t>(order.size()));
  return order.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
}

/// The order of `ids` in epoch `epoch` for a given seed: a Fisher-Yates shuffle driven by the
/// counter-based generator, identical for every caller (presampling, the loader).
std::vector<int64_t> shuffled_ids(std::span<const int64_t> ids, uint64_t seed, uint64_t epoch);

}  // namespace graphtier::sample
