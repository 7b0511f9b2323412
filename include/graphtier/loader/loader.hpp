// The pipelined minibatch loader (docs/architecture.md, Data flow of one iteration): seed
// batching -> sampling -> look-ahead window -> feature gather -> ready queue, each stage on its own
// thread with a bounded queue between stages, so that sampling and I/O for later minibatches
// overlap training on the current one.
//
//   sampler thread   batch b of epoch e = shuffled_ids(ids, seed, e)[b * B, (b + 1) * B), sampled
//                    with stream e << 32 | b (a group of batches at once on the sampling pool, or
//                    `bulk` batches per call of a bulk matrix sampler);
//                    with a window, announce(input_nodes) to the feature store's caches
//   window           sampled-but-not-gathered minibatches, a queue of capacity max(W, prefetch):
//                    with W > 0 each is announced as it enters; W = 0 announces nothing, and the
//                    sampler still runs `prefetch` minibatches ahead
//   gather thread    the dynamic storage-access accumulator (GIDS §3.2): takes the next minibatch,
//                    then merges the ones already waiting in the window while the storage reads
//                    expected of the merged set stay below the store's queue depth; one gather
//                    serves them all; consume(input_nodes) of each; labels of the seeds
//   ready queue      `prefetch` loaded minibatches for the consumer
//
// Device-resident minibatches (LoaderOptions::device_batches with GPU neighbour, layer-wise or bulk
// sampling): the blocks stay in the sampler's device memory (LoadedBatch::device) and only the
// input node ids cross to the host, once, into a page-locked buffer reused from minibatch to minibatch, for the
// window and the feature gather. Synchronisation budget per minibatch: the sampler's, one host
// wait for the neighbour sampler (cuda_neighbor_sampler.hpp), one per layer for the layer-wise one
// (layer_sampler.hpp); the device writes the input ids into that buffer before the last, which
// completes every block, so a consumer needs no event to read them. Device output x: stream-
// ordered memory from the device's kept pool on the loader's output stream (no cudaMalloc/cudaFree
// per batch), allocated by the gather thread with one host wait on that stream per gather; the
// gather completes x before the batch is delivered. Pinned output x: page-locked buffers reused
// once their batches are dropped and the copies their consumers queued have completed. Device
// memory is freed in order on the stream that made it, after the consumer's work, and pinned x is
// reused after it: LoadedBatch::release_after. At the end of each epoch the gather thread hands the
// unused memory of the device's stream-ordered pool back to the driver (trim_device_pool). A
// failure to allocate device memory in a stage reaches next() as OutOfMemory naming the stage and
// the batch.
//
// Every minibatch is a pure function of (ids, seed, epoch, batch index): the output does not depend
// on stage timing, merging, the window or which tiers served the features, and an epoch can start
// at any batch (resume). An exception in any stage reaches the consumer's next(); stop() and the
// destructor cancel every queue and join the threads, so an early exit never hangs.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/tensor.hpp"
#include "graphtier/feature/feature_store.hpp"
#include "graphtier/feature/typed_feature_store.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/sample/device_topology.hpp"
#include "graphtier/sample/hetero_block.hpp"
#include "graphtier/sample/minibatch.hpp"
#include "graphtier/sample/sampler.hpp"

namespace graphtier::loader {

/// The pipeline stages, for statistics and the fault hook.
enum class Stage : uint8_t { kSample, kGather };

struct LoaderOptions {
  /// The method (sample/sampler.hpp; sampler_method() parses its name).
  sample::SamplerKind sampler = sample::SamplerKind::kNeighbor;
  /// Neighbour fanouts (kNeighbor) or nodes drawn per layer (layer-wise), blocks[0] first.
  std::vector<int64_t> fanouts{15, 10, 5};
  /// A typed dataset (docs/format.md, Heterogeneous datasets) is sampled per relation: relation
  /// "src:rel:dst" takes relation_fanouts[name] (one per block, as `fanouts`; -1 all, 0 none), the
  /// relations not named take `fanouts`. Names are the dataset's (Dataset::schema): an unknown
  /// one, a list of another length than `fanouts`, or any entry on a homogeneous dataset is
  /// InvalidArgument.
  std::map<std::string, std::vector<int64_t>> relation_fanouts{};
  bool replace = false;  // kNeighbor only
  /// Temporal sampling (sample/temporal.hpp; PyG's time_attr): "" off, or the dataset's times the
  /// neighbours are filtered by: "node_time" (each neighbour's node time) or "edge_time" (each
  /// edge's). Each seed's time is its input time (Loader's input_time) or its node time; every node
  /// of its tree inherits it. The CPU neighbour sampler, bulk 0, of a homogeneous dataset only.
  std::string time_attr{};
  /// With time_attr: which eligible neighbours are taken, kUniform ("uniform") or the most recent
  /// (kLast, "last"; no replace).
  sample::TemporalStrategy temporal_strategy = sample::TemporalStrategy::kUniform;
  int64_t batch_size = 1024;
  bool shuffle = true;     // false: ids in the given order every epoch
  bool drop_last = false;  // drop the last batch when it is smaller than batch_size
  /// Batch striding: an epoch delivers only batches b = batch_offset, batch_offset + batch_stride,
  /// ... < num_batches (rank K of P takes offset K, stride P). A batch is the same with or without
  /// striding (its seeds and stream follow its global index b, sample/epoch.hpp).
  int64_t batch_offset = 0;  // >= 0
  int64_t batch_stride = 1;  // >= 1
  uint64_t seed = 0;
  /// Look-ahead window W: sampled minibatches whose input nodes are announced to the caches
  /// (window buffering); 0 turns announcing off (the sampler still runs `prefetch` ahead).
  int window = 4;
  /// Merge the gathers of waiting minibatches until the expected storage reads reach the store's
  /// queue depth (at most `max_merge` minibatches per gather). Off: one gather per minibatch.
  bool accumulate = true;
  int max_merge = 8;
  int prefetch = 2;        // ready minibatches queued for the consumer
  /// Threads of the sampling pool; <= 0: hardware threads, or 4 with gpu_sampling, where each
  /// thread samples on a CUDA stream of its own (the GPU sampler waits on the host a few times per
  /// layer; concurrent streams keep the GPU busy meanwhile).
  int sample_threads = 0;
  /// Where the features are gathered to: host, pinned or device memory (device/pinned need CUDA).
  MemoryKind output = MemoryKind::kHost;
  int device = 0;
  /// Bulk sampling: 0 samples one minibatch at a time (NeighborSampler / LayerSampler); k >= 1
  /// samples k minibatches per call with the bulk matrix samplers (sample/bulk_sampler.hpp:
  /// kNeighbor -> bulk GraphSAGE, kLadies -> bulk LADIES; kFastGcn has none). Batch b still draws
  /// from its own stream, so it does not depend on k, but bulk blocks differ from one-at-a-time
  /// ones (docs/architecture.md, MiniBatch).
  int bulk = 0;
  /// Sample on the GPU of topology.device: CudaNeighborSampler or, for LADIES and FastGCN,
  /// CudaLayerSampler (both read one DeviceTopology placed as `topology` says), or CudaBulkSampler
  /// with bulk (its own matrices); the same minibatches as on the CPU. Needs CUDA.
  bool gpu_sampling = false;
  /// With gpu_sampling (neighbour, layer-wise or bulk sampler): deliver the blocks in device memory
  /// (LoadedBatch::device) instead of copying them to the host. A typed dataset's blocks are copied
  /// to the host all the same, to be split by type (LoadedBatch::hetero_blocks).
  bool device_batches = false;
  sample::TopologyOptions topology;
  /// The numbering the loader's `ids` are given in (graph/dataset.hpp): kOriginal maps them to the
  /// dataset's own ids first (Dataset::from_original). A batch's seeds, input nodes and blocks are
  /// in the dataset's own numbering either way. Unset (the default) reads them as kPrepared where
  /// the dataset was never renumbered, where both numberings are one; ids given to a renumbered
  /// dataset (it has permutation.bin) need it set: ids of a raw input (a PyG mask) and ids of the
  /// dataset (its splits) look alike, and reading one as the other trains on the wrong nodes.
  std::optional<graph::Numbering> ids_numbering;
  /// Test seam: called by a stage before it works on minibatch `batch`; what it throws travels
  /// down the pipeline as any stage failure does.
  std::function<void(Stage stage, int64_t batch)> fault_hook;
};

/// One minibatch, ready for training. Owns its memory; `x` may share a buffer with the other
/// minibatches of the same merged gather.
struct LoadedBatch {
  int64_t epoch = 0;
  int64_t index = 0;  // batch position within the epoch (the global index b, also when striding)
  /// The host form. With a device form (`device` set) it holds the seeds only, no blocks: the
  /// input nodes are then device->blocks.back().src_nodes.
  sample::MiniBatch batch;
  /// [num_seeds] each seed's position in the ids the loader iterates (PyG's `input_id`).
  std::vector<int64_t> seed_positions;
  std::vector<int64_t> labels;  // [num_seeds] labels of the seeds (-1 unlabeled); empty without labels
  /// A typed dataset's minibatch: batch.blocks[l] split by node type and relation (split_block),
  /// every type and relation present; empty for a homogeneous dataset.
  std::vector<sample::HeteroBlock> hetero_blocks;
  /// With a TypedFeatureStore: [T] the features of each type's input nodes
  /// (hetero_blocks.back().src_nodes[t], in that order), [rows, dim of the type] of its table's
  /// dtype in options.output memory (host, pinned or device, as x), an empty view for a type
  /// without features; type_x_buffers[t] owns type_x[t]'s memory, which every type and the other
  /// minibatches of the same merged gather may share. Empty without a typed store.
  std::vector<TensorView> type_x;
  std::vector<std::shared_ptr<void>> type_x_buffers;
  /// The streams that free the device memory below (the sampler's, the loader's output stream),
  /// kept alive while it lives. Declared first: destroyed last.
  std::vector<std::shared_ptr<const OwnedCudaStream>> streams;
  std::shared_ptr<void> x_buffer;  // owns x's memory (host, pinned or device)
  TensorView x;  // [input_nodes, dim] of the table's dtype, in options.output memory; empty view without features
  /// The blocks in device memory (LoaderOptions::device_batches), complete when delivered; null
  /// otherwise.
  std::shared_ptr<const sample::DeviceMiniBatch> device;

  /// Pinned x (LoaderOptions::output kPinned): fences x's page-locked buffer behind the work queued
  /// on a consumer's stream so far (release_after calls it); empty otherwise.
  std::function<void(CudaStream consumer)> fence_pinned;

  /// Device memory is freed in order on the stream that made it when the batch dies, and a pinned
  /// x's buffer is reused for a later gather. Work that reads either on a stream (`consumer`: a
  /// kernel, a non_blocking copy of a pinned x) must be ordered before that: call this after
  /// queuing the last such work and before dropping the batch (an event, no host wait; the pinned
  /// buffer is reused only once the event has completed). Nothing to do for host batches, or for a
  /// pinned x read by the host alone.
  void release_after(CudaStream consumer) const;
};

/// What one epoch's pipeline did. Busy seconds are the stages' working time; the consumer's wait is
/// the time next() blocked (the trainer's idle time, when it calls next() right after a step).
struct EpochStats {
  int64_t epoch = 0;
  int64_t batches = 0;       // delivered to the consumer
  double seconds = 0;        // start() to the last next()
  double sample_seconds = 0;
  double gather_seconds = 0;
  double wait_seconds = 0;
  /// Time the store's announce (sampler thread) and consume (gather thread) waited for the caches'
  /// policy lock, which other announce/consume calls and the short policy steps of gathers (of
  /// this loader or another sharing the store) hold; a gather's I/O never holds it.
  double window_wait_seconds = 0;
  int64_t gathers = 0;       // gather calls (merged minibatches count once)
  int64_t window_fill = 0;   // sum over gathers of minibatches waiting in the window
  int64_t ready_fill = 0;    // sum over next() of minibatches waiting in the ready queue
  int64_t expected_storage_reads = 0;  // the accumulator's estimate, summed over gathers
  /// Minibatches sampled on the GPU whose blocks were copied to the host (GPU sampling without
  /// device_batches, or a sampler without a device form); 0 when every batch stayed on the device.
  int64_t blocks_to_host = 0;
  feature::GatherStats features;       // the store's per-tier work during the epoch
};

/// Thread-safety: one consumer thread calls start/next/stop; the store may be shared with other
/// loaders (its gathers are serialised; its announce/consume do not wait for them).
class Loader {
 public:
  /// Borrows `dataset` and `store` (either may be shared; both must outlive the loader). `store`
  /// may be null for a dataset without features (x stays empty). `ids`: the nodes to iterate
  /// (e.g. the train split), in options.ids_numbering (InvalidArgument when it is unset and the
  /// dataset renumbered), checked against the graph. A typed dataset
  /// is sampled per relation (the CPU neighbour sampler; make_sampler refuses the others) and its
  /// batches carry hetero_blocks; its per-type tables come from `typed_store` (borrowed, of the
  /// same dataset, or null: no type_x), and `store` must then be null. The typed path is the
  /// one-table path per type: each type's input nodes are announced to and consumed from that
  /// type's store's window, a merged gather reads each type once for all its minibatches (the
  /// accumulator per type: TypedAccumulator), and the output is options.output memory from the
  /// same kept pools. Throws InvalidArgument/OutOfRange for bad options or ids, Unsupported for
  /// GPU options without a GPU or GPU sampling of a typed dataset.
  /// `input_time` (options.time_attr only): the time of each of `ids` (PyG's input_time), or empty
  /// for their node times; InvalidArgument for another length, without time_attr, or when the
  /// dataset lacks the times asked for.
  Loader(const graph::Dataset& dataset, feature::FeatureStore* store, std::vector<int64_t> ids,
         LoaderOptions options, const feature::TypedFeatureStore* typed_store = nullptr,
         std::vector<int64_t> input_time = {});
  /// A loader over the dataset's `split`, whose ids are in its own numbering: InvalidArgument when
  /// options.ids_numbering names another, or when the split is empty (naming it and the dataset).
  static std::unique_ptr<Loader> over_split(const graph::Dataset& dataset, feature::FeatureStore* store,
                                            graph::Split split, LoaderOptions options,
                                            const feature::TypedFeatureStore* typed_store = nullptr);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  /// Batches of an epoch before striding (the range of batch indices).
  int64_t num_batches() const noexcept;
  /// Batches an epoch delivers: those of num_batches() that batch_offset/batch_stride select.
  int64_t num_delivered() const noexcept;
  const LoaderOptions& options() const noexcept;

  /// Starts the pipeline for `epoch` at batch `first_batch` (0 .. num_batches, a global batch
  /// index: with striding, the first delivered batch >= first_batch), stopping a running one first.
  /// After a pass that sampled all its batches, (that epoch + 1, 0) starts on the batches its
  /// threads sampled early (docs/architecture.md, Sampler thread); no need to stop() in between.
  void start(int64_t epoch, int64_t first_batch = 0);
  /// The next minibatch of the running epoch in order; nullopt after its last. Rethrows the first
  /// failure of any stage. Throws InvalidArgument when no epoch was started.
  std::optional<LoadedBatch> next();
  /// Cancels the running epoch and joins its threads (dropping any batches sampled early); does
  /// nothing when none runs.
  void stop() noexcept;
  /// Statistics of the running or last epoch.
  EpochStats stats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphtier::loader
