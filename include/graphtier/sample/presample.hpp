// Pre-sampling hotness (GNNLab's PreSC#K; docs/references.md, Mini-batch training survey): run K
// epochs of the sampler the training will use and count how often each node's features are read
// (its appearances among a minibatch's input nodes). `graphtier prepare --hotness presample` orders
// nodes by these counts.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/sample/epoch.hpp"
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

}  // namespace graphtier::sample
