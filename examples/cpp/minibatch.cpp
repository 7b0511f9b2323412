// Opens a dataset, samples one minibatch of training seeds with the neighbour sampler and gathers
// the features of its input nodes through a FeatureStore; prints the shapes.
//   minibatch DATASET [BATCH_SIZE] [FANOUTS...]      e.g. minibatch data/cora-wrpr 64 25 10
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "graphtier/core/tensor.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/feature/feature_store.hpp"
#include "graphtier/graph/csc_view.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"

int main(int argc, char** argv) try {
  using namespace graphtier;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATASET [BATCH_SIZE] [FANOUTS...]\n", argv[0]);
    return 2;
  }
  const graph::Dataset dataset = graph::Dataset::open(argv[1]);
  const std::size_t batch_size = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 64;
  sample::NeighborSamplerOptions sampler_options;
  for (int i = 3; i < argc; ++i) sampler_options.fanouts.push_back(std::strtoll(argv[i], nullptr, 10));
  if (sampler_options.fanouts.empty()) sampler_options.fanouts = {10, 5};

  // The first batch_size training nodes are the seeds of minibatch 0.
  const auto train = dataset.split(graph::Split::kTrain);
  const std::vector<int64_t> seeds(train.begin(), train.begin() + std::min(batch_size, train.size()));
  ThreadPool pool(2);
  const sample::NeighborSampler sampler({graph::CscView::of(dataset), {}}, sampler_options);
  const sample::MiniBatch batch = sampler.sample(seeds, /*stream=*/0, &pool);
  std::printf("seeds %zu\n", batch.seeds.size());
  for (std::size_t l = 0; l < batch.blocks.size(); ++l) {
    const auto& block = batch.blocks[l];
    std::printf("block %zu: %lld dst <- %zu src, %zu edges\n", l, static_cast<long long>(block.num_dst),
                block.src_nodes.size(), block.indices.size());
  }

  // Every row from the storage tier (zero budgets for the memory tiers), read with io_uring.
  feature::FeatureStore store(dataset, feature::FeatureStoreOptions{}, pool);
  const auto ids = batch.input_nodes();
  const int64_t rows = static_cast<int64_t>(ids.size());
  std::vector<std::byte> out(static_cast<std::size_t>(rows * store.layout().row_bytes()));
  const TensorView view = TensorView::contiguous(out.data(), store.layout().dtype, {rows, store.layout().dim});
  const feature::GatherStats stats = store.gather(ids, view);
  std::printf("features [%lld, %lld] %s, %lld rows gathered\n", static_cast<long long>(view.shape[0]),
              static_cast<long long>(view.shape[1]), std::string(dtype_name(view.dtype)).c_str(),
              static_cast<long long>(stats.rows));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "minibatch: %s\n", e.what());
  return 1;
}
