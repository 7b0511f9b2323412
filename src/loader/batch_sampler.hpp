// The sampling side of the loader: the epoch's seed order and the sampler that turns a batch of
// seeds into a MiniBatch, whichever backend the options ask for.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/loader/loader.hpp"
#include "graphtier/sample/device_topology.hpp"
#include "graphtier/sample/sampler.hpp"
#include "pinned_ring.hpp"

namespace graphtier::loader {

/// A sampled minibatch: the host form, or with a device form its seeds only beside the device
/// blocks and (when the host needs them) the input node ids in a pinned ring slot.
struct SampledBatch {
  std::shared_ptr<const OwnedCudaStream> stream;  // the stream that frees `device` (destroyed after it)
  sample::MiniBatch batch;
  std::shared_ptr<const sample::DeviceMiniBatch> device;
  PinnedRing::Lease input;                        // device form: the input node ids on the host
  std::vector<sample::HeteroBlock> hetero_blocks;  // a typed graph's blocks by type (LoadedBatch)
  bool copied_to_host = false;                    // GPU-sampled blocks copied to the host

  /// The ids the feature gather and the window need: the input nodes, on the host. Empty for a
  /// device form whose ids were not asked for (a loader without features).
  std::span<const int64_t> input_nodes() const noexcept { return device ? input.ids() : batch.input_nodes(); }
};

class BatchSampler {
 public:
  /// Checks the options and ids (InvalidArgument/OutOfRange) and builds the sampler.
  /// `input_ids_to_host`: a device form copies its input node ids to the host (a loader with a
  /// feature store needs them).
  /// `input_time`: the ids' times for temporal sampling (LoaderOptions::time_attr), or empty.
  BatchSampler(const graph::Dataset& dataset, std::vector<int64_t> ids, const LoaderOptions& options,
               bool input_ids_to_host = true, std::vector<int64_t> input_time = {});
  ~BatchSampler();

  int64_t num_batches() const noexcept { return num_batches_; }
  /// Batches an epoch delivers with the options' striding.
  int64_t num_delivered() const noexcept;
  /// The delivered batch indices >= `first`, in order.
  std::vector<int64_t> delivered_from(int64_t first) const;
  /// The epoch's order as positions in the ids: shuffled_ids(0 .. n-1, seed, epoch), or 0 .. n-1
  /// without shuffling (the shuffle moves positions whatever they hold, so ids[positions[i]] is
  /// shuffled_ids(ids, seed, epoch)[i]: presampling's and the distributed sampler's order).
  std::vector<int64_t> epoch_positions(int64_t epoch) const;
  /// The seeds in that order: ids[positions[i]].
  std::vector<int64_t> epoch_order(std::span<const int64_t> positions) const;
  /// Their times in that order (temporal sampling), else empty.
  std::vector<int64_t> epoch_times(std::span<const int64_t> positions) const;
  /// Samples the batches `batches` (global indices) of `order` in `epoch` into out[0 .. size), in
  /// parallel on the pool (one batch per task; on the GPU, batches[i] on stream i). `times`:
  /// epoch_times (temporal sampling), else empty.
  void sample(const std::vector<int64_t>& order, int64_t epoch, std::span<const int64_t> batches,
              std::vector<SampledBatch>& out, std::span<const int64_t> times = {});
  /// Whether sample_in_order serves these options: host sampling one batch at a time (bulk calls
  /// and GPU streams go in groups through sample()).
  bool streams() const noexcept;
  int pool_size() const noexcept { return pool_.size(); }
  /// An epoch's first delivered batches, sampled before its pass starts (sample_in_order's `then`).
  struct Ahead {
    int64_t epoch = -1;  // -1: none
    // The epoch's epoch_positions, epoch_order, epoch_times and delivered_from(0).
    std::vector<int64_t> positions, order, times, batches;
    std::vector<SampledBatch> sampled;  // sampled[i] is batches[i]
    std::exception_ptr error;           // batches[sampled.size()] failed with it (or null)
    double busy_seconds = 0;            // the pool's sampling seconds, all threads
  };
  /// Receives the batch at position i of sample_in_order's `batches`; false stops the call.
  using Deliver = std::function<bool(int64_t i, SampledBatch&& batch)>;
  /// Samples `batches` on the pool with no barrier between them: each thread takes the next batch
  /// when it finishes one, and finished batches go to `deliver` in order, from one thread at a
  /// time, while the others sample on (at most 2 x the pool's threads ahead of the last delivered).
  /// A group's barrier idled every thread but the slowest batch's: 1.44x from 1 to 2 threads on a
  /// 37K-node graph. A failing batch (or deliver) stops the call once the batches before it are
  /// delivered: the first failure's exception is rethrown and `failed` names its position. Adds
  /// each thread's sampling seconds to `busy_seconds`.
  /// `then` (its epoch set): a thread with no batch left samples the first 2 x pool threads
  /// batches of epoch `then->epoch` into it (as a pass of that epoch would, from batch 0), unless
  /// the call failed, was stopped or `cancel` is set; the call returns once they are done. A
  /// failing one ends then->sampled with its error, which that pass rethrows in its place.
  void sample_in_order(const std::vector<int64_t>& order, int64_t epoch, std::span<const int64_t> batches,
                       std::span<const int64_t> times, const Deliver& deliver, int64_t& failed,
                       double& busy_seconds, Ahead* then = nullptr, const std::atomic<bool>* cancel = nullptr);
  /// Whether batches come in the device form (options.device_batches with a GPU sampler).
  bool device_batches() const noexcept { return device_batches_; }
  /// Batches worth sampling at once: enough to keep the pool busy (with bulk, one bulk call).
  int64_t group_size() const noexcept;

 private:
  /// `slot`: the batch's place in its group, which picks its CUDA stream.
  SampledBatch sample_one(std::span<const int64_t> seeds, uint64_t stream, int64_t slot,
                          std::span<const int64_t> seed_times);
  /// Batch b of `epoch` with that epoch's `order` and `times` (epoch_order, epoch_times), after
  /// the fault hook: sample_one on its seeds and stream.
  SampledBatch sample_batch(const std::vector<int64_t>& order, int64_t epoch, int64_t b, int64_t slot,
                            std::span<const int64_t> times);
  /// Temporal sampling's time order and the ids' times, from the options and `input_time`.
  void setup_temporal(const graph::Dataset& dataset, std::vector<int64_t> input_time);
  SampledBatch sample_device(std::span<const int64_t> seeds, uint64_t stream, int64_t slot);
  /// One bulk call in the device form (Sampler::sample_bulk_device): batch i into out[i].
  void sample_bulk_device(std::span<const std::span<const int64_t>> seeds, std::span<const uint64_t> streams,
                          std::vector<SampledBatch>& out);
  /// A device batch the sampler returned, into `out`: its input ids trimmed to the real count (or,
  /// with no layers, the seeds), on the stream that frees it.
  void finish_device(SampledBatch& out, sample::DeviceMiniBatch&& sampled,
                     const std::shared_ptr<OwnedCudaStream>& stream);

  LoaderOptions options_;
  std::vector<int64_t> ids_;
  int64_t num_batches_ = 0;
  sample::SampleGraph graph_;
  // Temporal sampling: the columns' time order (graph_.temporal points here) and each id's time.
  std::unique_ptr<sample::TemporalIndex> temporal_;
  std::vector<int64_t> times_;
  ThreadPool pool_;
  std::unique_ptr<sample::DeviceTopology> topology_;  // the graph on the GPU, for the GPU samplers that read it
  std::unique_ptr<sample::Sampler> sampler_;          // make_sampler's choice for the options
  // One per pool thread; shared with the device batches they free.
  std::vector<std::shared_ptr<OwnedCudaStream>> cuda_streams_;
  bool device_batches_ = false;
  bool input_ids_to_host_ = true;
  std::optional<PinnedRing> ring_;  // device form: the input ids' page-locked slots
};

}  // namespace graphtier::loader
