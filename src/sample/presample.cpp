#include "graphtier/sample/presample.hpp"

#include <atomic>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
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

std::vector<double> presample_hotness(const SampleGraph& graph, std::span<const int64_t> train_ids,
                                      const PresampleOptions& options, ThreadPool& pool) {
  GRAPHTIER_EXPECTS(!train_ids.empty(), InvalidArgument, "presampling needs train ids to sample from");
  GRAPHTIER_EXPECTS(options.epochs >= 1, InvalidArgument, "presampling epochs must be >= 1, got ", options.epochs);
  GRAPHTIER_EXPECTS(options.batch_size >= 1, InvalidArgument, "presampling batch size must be >= 1, got ",
                    options.batch_size);
  const NeighborSampler sampler(graph, options.sampler);
  const int64_t n = graph.csc.num_nodes();
  std::vector<int64_t> visits(static_cast<std::size_t>(n), 0);
  const auto batches = static_cast<int64_t>((train_ids.size() + options.batch_size - 1) / options.batch_size);
  Progress progress("presample", batches * options.epochs, "batches");
  for (int epoch = 0; epoch < options.epochs; ++epoch) {
    const std::vector<int64_t> order = shuffled_ids(train_ids, options.sampler.seed, static_cast<uint64_t>(epoch));
    // One batch per task: the per-batch sampler is sequential, the batches are independent.
    pool.parallel_for(0, batches, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b) {
        const int64_t begin = b * options.batch_size;
        const int64_t end = std::min<int64_t>(begin + options.batch_size, static_cast<int64_t>(order.size()));
        const std::span<const int64_t> seeds(order.data() + begin, static_cast<std::size_t>(end - begin));
        const MiniBatch batch = sampler.sample(seeds, (static_cast<uint64_t>(epoch) << 32) | static_cast<uint64_t>(b));
        for (int64_t v : batch.input_nodes()) std::atomic_ref<int64_t>(visits[v]).fetch_add(1, std::memory_order_relaxed);
        progress.add(1);
      }
    });
  }
  progress.finish();
  return std::vector<double>(visits.begin(), visits.end());
}

}  // namespace graphtier::sample
