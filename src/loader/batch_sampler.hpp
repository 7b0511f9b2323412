// The sampling side of the loader: the epoch's seed order and the sampler that turns a batch of
// seeds into a MiniBatch, whichever backend the options ask for.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/loader/loader.hpp"
#include "graphtier/sample/bulk_sampler.hpp"
#include "graphtier/sample/layer_sampler.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"

namespace graphtier::loader {

class BatchSampler {
 public:
  /// Checks the options and ids (InvalidArgument/OutOfRange) and builds the sampler.
  BatchSampler(const graph::Dataset& dataset, std::vector<int64_t> ids, const LoaderOptions& options);
  ~BatchSampler();

  int64_t num_batches() const noexcept { return num_batches_; }
  /// Batches an epoch delivers with the options' striding.
  int64_t num_delivered() const noexcept;
  /// The delivered batch indices >= `first`, in order.
  std::vector<int64_t> delivered_from(int64_t first) const;
  /// Seed order of `epoch`: shuffled_ids(ids, seed, epoch), or the ids as given without shuffling.
  std::vector<int64_t> epoch_order(int64_t epoch) const;
  /// Samples the batches `batches` (global indices) of `order` in `epoch` into out[0 .. size), in
  /// parallel on the pool (one batch per task; on the GPU, batches[i] on stream i).
  void sample(const std::vector<int64_t>& order, int64_t epoch, std::span<const int64_t> batches,
              std::vector<sample::MiniBatch>& out);
  /// Batches worth sampling at once: enough to keep the pool busy (with bulk, one bulk call).
  int64_t group_size() const noexcept;

 private:
  /// `slot`: the batch's place in its group, which picks its CUDA stream.
  sample::MiniBatch sample_one(std::span<const int64_t> seeds, uint64_t stream, int64_t slot) const;

  LoaderOptions options_;
  std::vector<int64_t> ids_;
  int64_t num_batches_ = 0;
  sample::SampleGraph graph_;
  ThreadPool pool_;
  std::unique_ptr<sample::NeighborSampler> neighbor_;
  std::unique_ptr<sample::LayerSampler> layer_;
  std::unique_ptr<sample::CudaLayerSampler> cuda_layer_;
  std::unique_ptr<sample::DeviceTopology> topology_;
  std::unique_ptr<sample::CudaNeighborSampler> cuda_neighbor_;
  std::unique_ptr<sample::BulkSampler> bulk_;
  std::unique_ptr<sample::CudaBulkSampler> cuda_bulk_;
  std::vector<std::unique_ptr<OwnedCudaStream>> cuda_streams_;  // one per pool thread
};

}  // namespace graphtier::loader
