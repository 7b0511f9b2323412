// Pre-sampling hotness (GNNLab's PreSC#K, survey paper 003): run K epochs of the sampler the
// training will use and count how often each node's features are read (its appearances among a
// minibatch's input nodes). `graphtier prepare --hotness presample` orders nodes by these counts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"

namespace graphtier::sample {

struct PresampleOptions {
  int epochs = 1;           // K
  int64_t batch_size = 1024;
  /// Fanouts, replacement and seed of the sampler to imitate.
  NeighborSamplerOptions sampler;
};

/// Calls visit(input_nodes) for every minibatch of `epochs` passes over `train_ids`, in order
/// (epoch by epoch, batch by batch): the feature reads of a training run with these options.
/// Each pass is shuffled by the epoch's seed and cut into batches; batch b of epoch e is sampled
/// with stream e << 32 | b, as the loader does. The pool samples a few batches ahead in parallel;
/// `visit` runs on the calling thread. Throws InvalidArgument for empty `train_ids`, epochs < 1 or
/// batch_size < 1, OutOfRange for an id outside the graph.
void for_each_minibatch_input(const SampleGraph& graph, std::span<const int64_t> train_ids,
                              const PresampleOptions& options, ThreadPool& pool,
                              const std::function<void(std::span<const int64_t>)>& visit);

/// Visits per node (float64 [num_nodes]) over `epochs` passes over `train_ids`, each pass shuffled
/// by the epoch's seed and cut into batches; batch b of epoch e is sampled with stream
/// e << 32 | b (for_each_minibatch_input). The counts do not depend on the pool size.
std::vector<double> presample_hotness(const SampleGraph& graph, std::span<const int64_t> train_ids,
                                      const PresampleOptions& options, ThreadPool& pool);

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
