#include "graphtier/sample/presample.hpp"

#include <algorithm>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"

namespace graphtier::sample {

void for_each_minibatch_input(const SampleGraph& graph, std::span<const int64_t> train_ids,
                              const PresampleOptions& options, ThreadPool& pool,
                              const std::function<void(std::span<const int64_t>)>& visit) {
  GRAPHTIER_EXPECTS(!train_ids.empty(), InvalidArgument, "presampling needs train ids to sample from");
  GRAPHTIER_EXPECTS(options.epochs >= 1, InvalidArgument, "presampling epochs must be >= 1, got ", options.epochs);
  GRAPHTIER_EXPECTS(options.batch_size >= 1, InvalidArgument, "presampling batch size must be >= 1, got ",
                    options.batch_size);
  const NeighborSampler sampler(graph, options.sampler);
  const auto batches = static_cast<int64_t>((train_ids.size() + options.batch_size - 1) / options.batch_size);
  // A group of batches is sampled in parallel (one batch per task: the per-batch sampler is
  // sequential, the batches independent), then visited in order.
  const int64_t group = 2 * static_cast<int64_t>(pool.size());
  std::vector<MiniBatch> sampled(static_cast<std::size_t>(group));
  Progress progress("presample", batches * options.epochs, "batches");
  for (int epoch = 0; epoch < options.epochs; ++epoch) {
    const std::vector<int64_t> order = shuffled_ids(train_ids, options.sampler.seed, static_cast<uint64_t>(epoch));
    for (int64_t first = 0; first < batches; first += group) {
      const int64_t last = std::min(first + group, batches);
      pool.parallel_for(first, last, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t b = lo; b < hi; ++b) {
          sampled[b - first] = sampler.sample(batch_seeds(order, options.batch_size, b), minibatch_stream(epoch, b));
        }
      });
      for (int64_t b = first; b < last; ++b) visit(sampled[b - first].input_nodes());
      progress.add(last - first);
    }
  }
  progress.finish();
}

std::vector<double> presample_hotness(const SampleGraph& graph, std::span<const int64_t> train_ids,
                                      const PresampleOptions& options, ThreadPool& pool) {
  std::vector<double> visits(static_cast<std::size_t>(graph.csc.num_nodes()), 0.0);
  for_each_minibatch_input(graph, train_ids, options, pool, [&](std::span<const int64_t> input) {
    for (int64_t v : input) visits[v] += 1;
  });
  return visits;
}

}  // namespace graphtier::sample
