// The loader's two stage threads and the consumer side (loader.hpp has the pipeline).
#include "graphtier/loader/loader.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <string>

#include "graphtier/core/device_memory.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/loader/bounded_queue.hpp"
#include "graphtier/sample/epoch.hpp"
#include "graphtier/sample/sample_graph.hpp"
#include "accumulator.hpp"
#include "batch_sampler.hpp"
#include "device_ops.hpp"

namespace graphtier::loader {
namespace {

constexpr int64_t kMaxEpochs = int64_t{1} << 31;  // epochs are in [0, 2^31)

struct Sampled {
  int64_t index = 0;
  SampledBatch batch;
  std::vector<int64_t> seed_positions;  // LoadedBatch::seed_positions
  /// A typed dataset: each node type's input nodes (hetero_blocks.back().src_nodes[t], in that
  /// order), local to the type: the ids its store's window and gather take.
  std::vector<std::vector<int64_t>> type_ids;
  bool announced = false;  // its input nodes are announced to the store's (each type store's) window
};

/// A gather's output memory: host, pinned (a lease of the loader's ring) or device (stream-ordered).
struct Output {
  std::shared_ptr<void> buffer;               // owns the memory, points at it
  std::shared_ptr<PinnedRing::Lease> lease;  // pinned output
};

/// `n` rounded up to a multiple of 256 bytes: where the next type's rows start in a typed gather's
/// output (cudaMalloc's alignment, enough for any dtype and vector loads).
std::size_t align_output(std::size_t n) { return (n + 255) / 256 * 256; }

/// `ids`, given in `numbering`, in the dataset's own: the ids the sampler reads
/// (Dataset::to_own_numbering). A repeat among original ids is refused as the caller gave it: the
/// sampler, which checks the mapped ids, would name the id it was mapped to.
std::vector<int64_t> in_own_numbering(const graph::Dataset& d, std::vector<int64_t> ids,
                                      std::optional<graph::Numbering> numbering) {
  if (numbering != graph::Numbering::kOriginal) {
    d.to_own_numbering(ids, numbering, "loader ids");
    return ids;
  }
  std::vector<int64_t> given = ids;
  d.to_own_numbering(ids, numbering, "loader ids");  // the range first, named in the original numbering
  try {
    sample::check_seeds(given, d.num_nodes());
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(detail::concat(e.what(), " (ids in the original numbering)"));
  }
  return ids;
}

/// The ids of `split`, which are in the dataset's own numbering whatever the options say.
std::vector<int64_t> split_ids(const graph::Dataset& d, graph::Split split, const LoaderOptions& options) {
  GRAPHTIER_EXPECTS(options.ids_numbering.value_or(graph::Numbering::kPrepared) == graph::Numbering::kPrepared,
                    InvalidArgument, "the ", graph::split_name(split),
                    " split is in the dataset's own numbering: ids_numbering 'original' applies to ids given, not "
                    "to a split");
  const std::span<const int64_t> ids = d.split(split);
  GRAPHTIER_EXPECTS(!ids.empty(), InvalidArgument, "the ", graph::split_name(split), " split of ", d.dir(),
                    " is empty: no node to iterate (graphtier info lists the splits)");
  return {ids.begin(), ids.end()};
}

}  // namespace

struct Loader::Impl {
  const graph::Dataset& dataset;
  feature::FeatureStore* store;
  const feature::TypedFeatureStore* typed_store;
  LoaderOptions options;
  BatchSampler sampler;
  std::optional<Accumulator> accumulator;             // one-table store
  std::optional<TypedAccumulator> typed_accumulator;  // typed store
  // Device output: x is allocated (stream-ordered) and freed on this stream.
  std::shared_ptr<OwnedCudaStream> output_stream;
  // Pinned output: page-locked buffers reused once their batches are dropped (no cudaHostAlloc /
  // cudaFreeHost per gather).
  std::optional<PinnedRing> pinned_output;

  // The running epoch.
  bool started = false;
  std::unique_ptr<BoundedQueue<Sampled>> window;
  std::unique_ptr<BoundedQueue<LoadedBatch>> ready;
  std::thread sample_thread;
  std::thread gather_thread;
  // A pass that sampled all its batches samples the next epoch's first ones while its consumer
  // takes the last (epoch + 1 from batch 0: the next pass unless set_epoch chose another), so the
  // next pass does not start on an empty pipeline (the odd last batch and the restart idled 4-8%
  // of two cores on a 21-batch epoch). Written by the sample thread; read by start() after joining it.
  BatchSampler::Ahead ahead;
  std::atomic<bool> cancel_ahead{false};
  int64_t pass_epoch = -1;  // the running or last pass's epoch
  std::chrono::steady_clock::time_point epoch_start;
  mutable std::mutex stats_mutex;
  EpochStats stats;

  Impl(const graph::Dataset& d, feature::FeatureStore* s, std::vector<int64_t> ids, LoaderOptions o,
       const feature::TypedFeatureStore* typed, std::vector<int64_t> input_time)
      : dataset(d),
        store(s),
        typed_store(typed),
        options(std::move(o)),
        sampler(d, in_own_numbering(d, std::move(ids), options.ids_numbering), options, s != nullptr,
                std::move(input_time)) {
    GRAPHTIER_EXPECTS(options.window >= 0 && options.prefetch >= 1 && options.max_merge >= 1, InvalidArgument,
                      "loader needs window >= 0, prefetch >= 1 and max_merge >= 1, got ", options.window, ", ",
                      options.prefetch, ", ", options.max_merge);
    GRAPHTIER_EXPECTS(store == nullptr || store->num_nodes() == dataset.num_nodes(), InvalidArgument,
                      "the feature store has ", store ? store->num_nodes() : 0, " rows, the graph ",
                      dataset.num_nodes(), " nodes");
    if (typed_store != nullptr) {
      GRAPHTIER_EXPECTS(store == nullptr, InvalidArgument,
                        "a loader reads a typed dataset's features from its TypedFeatureStore alone (store must be null)");
      const graph::HeteroSchema& schema = dataset.schema();
      GRAPHTIER_EXPECTS(!schema.empty() && typed_store->num_types() == schema.num_node_types(), InvalidArgument,
                        "the typed feature store has ", typed_store->num_types(), " node types, the dataset ",
                        schema.num_node_types());
      for (int32_t t = 0; t < schema.num_node_types(); ++t) {
        GRAPHTIER_EXPECTS(typed_store->offset(t) == schema.node_type_offset[static_cast<std::size_t>(t)],
                          InvalidArgument, "the typed feature store's node type ", t, " starts at id ",
                          typed_store->offset(t), ", the dataset's at ",
                          schema.node_type_offset[static_cast<std::size_t>(t)]);
      }
    }
    if (store != nullptr) accumulator.emplace(store->tiers().ranges.cpu_end, store->io_depth(), options.max_merge);
    if (typed_store != nullptr) {
      std::vector<std::optional<Accumulator>> types(static_cast<std::size_t>(typed_store->num_types()));
      for (int32_t t = 0; t < typed_store->num_types(); ++t) {
        if (const feature::FeatureStore* s = typed_store->store(t)) {
          types[static_cast<std::size_t>(t)].emplace(s->tiers().ranges.cpu_end, s->io_depth(), options.max_merge);
        }
      }
      typed_accumulator.emplace(std::move(types), options.max_merge);
    }
    if (store != nullptr || typed_store != nullptr) {
      if (options.output == MemoryKind::kDevice) output_stream = std::make_shared<OwnedCudaStream>(options.device);
      if (options.output == MemoryKind::kPinned) pinned_output.emplace(device::allocate_pinned, device::free_pinned);
    }
  }

  /// `early`: the epoch's first batches, sampled after the previous pass (or none).
  void run_sampler(int64_t epoch, int64_t first, BatchSampler::Ahead early);
  void run_gather(int64_t epoch);
  void gather_group(int64_t epoch, std::vector<Sampled>& group);
  /// A typed group's per-type features (LoadedBatch::type_x of `loaded`, one per batch of `group`):
  /// one gather per type for the whole group into one output.
  void gather_types(std::vector<Sampled>& group, std::vector<LoadedBatch>& loaded);
  /// `bytes` (at least 1) of options.output memory for one gather, from the kept pools.
  Output allocate(std::size_t bytes);
  /// Ties `out`'s memory to batch `l`: the output stream that frees it, the pinned fence.
  void attach(LoadedBatch& l, const Output& out) const;
  LoadedBatch make_loaded(int64_t epoch, Sampled& s) const;
  /// A typed batch's input nodes by type, local to each type (Sampled::type_ids).
  std::vector<std::vector<int64_t>> local_type_ids(const Sampled& s) const;
  void announce(Sampled& s) {
    if (options.window == 0) return;
    if (store != nullptr) {
      add_window_wait(store->window(s.batch.input_nodes(), feature::FeatureStore::kAnnounce));
      s.announced = true;
    }
    if (typed_store != nullptr) {
      window_types(s, feature::FeatureStore::kAnnounce);
      s.announced = true;
    }
  }
  /// Gives the announcement back, once.
  void consume(Sampled& s) {
    if (!s.announced) return;
    s.announced = false;
    if (store != nullptr) add_window_wait(store->window(s.batch.input_nodes(), feature::FeatureStore::kConsume));
    if (typed_store != nullptr) window_types(s, feature::FeatureStore::kConsume);
  }
  /// Each type's input nodes to its own store's window: a type's caches see only its rows.
  void window_types(const Sampled& s, int delta) {
    double waited = 0;
    for (std::size_t t = 0; t < s.type_ids.size(); ++t) {
      feature::FeatureStore* typed = typed_store->store(static_cast<int32_t>(t));
      if (typed != nullptr && !s.type_ids[t].empty()) waited += typed->window(s.type_ids[t], delta);
    }
    add_window_wait(waited);
  }
  void add_window_wait(double seconds) {
    const std::lock_guard lock(stats_mutex);
    stats.window_wait_seconds += seconds;
  }
  /// Cancels the stages and joins them; `keep_ahead` lets the next epoch's early batches finish
  /// and keeps them (for a start() of that epoch from batch 0), else they are dropped.
  void stop(bool keep_ahead = false) noexcept;
  /// The epoch's end: the devices this loader allocates on keep no unused pool memory
  /// (trim_device_pool), so that evaluation and the model get it back; the next epoch maps its
  /// working set again once.
  void trim_pools() const {
    const bool sampling = options.gpu_sampling;
    const bool output = output_stream != nullptr;
    if (sampling) trim_device_pool(options.topology.device);
    if (output && !(sampling && options.topology.device == options.device)) trim_device_pool(options.device);
  }
};

namespace {

/// What a stage throws: an OutOfMemory names the stage, its batches and the epoch, so that a
/// failed allocation mid-epoch says which budget to lower (the sampler's streams and fanouts, or
/// the gather's merged output and caches).
std::exception_ptr stage_error(Stage stage, int64_t epoch, std::span<const int64_t> batches) {
  try {
    throw;
  } catch (const OutOfMemory& e) {
    std::string which;
    for (const int64_t b : batches) which += (which.empty() ? "" : ", ") + std::to_string(b);
    return std::make_exception_ptr(OutOfMemory(detail::concat(
        "loader: the ", stage == Stage::kSample ? "sample" : "gather", " stage of epoch ", epoch, " (batch",
        batches.size() == 1 ? " " : "es ", which, ") ran out of device memory: ", e.what())));
  } catch (...) {
    return std::current_exception();
  }
}

}  // namespace

void Loader::Impl::run_sampler(int64_t epoch, int64_t first, BatchSampler::Ahead early) {
  std::vector<int64_t> batches;  // outside the try: `indices` views it when a stage fails
  std::span<const int64_t> indices;
  try {
    const bool resumed = early.epoch == epoch && first == 0;
    const std::vector<int64_t> positions = resumed ? std::move(early.positions) : sampler.epoch_positions(epoch);
    const std::vector<int64_t> order = resumed ? std::move(early.order) : sampler.epoch_order(positions);
    const std::vector<int64_t> times = resumed ? std::move(early.times) : sampler.epoch_times(positions);
    batches = resumed ? std::move(early.batches) : sampler.delivered_from(first);
    const auto total = static_cast<int64_t>(batches.size());
    // Announced before it enters the window, so the gather never sees an unannounced batch; a push
    // refused by a cancelled queue gives the announcement back at once (and stops the sampling).
    const auto deliver = [&](int64_t index, SampledBatch&& batch) {
      const std::span<const int64_t> seed_positions = sample::batch_seeds(positions, options.batch_size, index);
      Sampled s{index, std::move(batch), {seed_positions.begin(), seed_positions.end()}, {}};
      if (typed_store != nullptr) s.type_ids = local_type_ids(s);
      announce(s);
      if (window->push(std::move(s))) return true;
      consume(s);
      return false;
    };
    if (sampler.streams()) {
      int64_t failed = -1;
      double busy = 0;
      bool cancelled = false;
      const auto account = [&] {  // the stage's busy time: its thread-seconds per thread
        const std::lock_guard lock(stats_mutex);
        stats.sample_seconds += busy / sampler.pool_size();
      };
      // The batches sampled early go first; the pool samples the rest, positions k on.
      std::size_t k = 0;
      if (resumed) {
        busy += early.busy_seconds;
        for (; k < early.sampled.size() && !cancelled; ++k) cancelled = !deliver(batches[k], std::move(early.sampled[k]));
      }
      const std::span<const int64_t> rest = std::span<const int64_t>(batches).subspan(cancelled ? batches.size() : k);
      BatchSampler::Ahead then;  // the next epoch's first batches, sampled once this pass's are
      if (epoch + 1 < kMaxEpochs) then.epoch = epoch + 1;
      try {
        if (resumed && !cancelled && early.error != nullptr) {  // batches[k] failed
          failed = 0;
          std::rethrow_exception(early.error);
        }
        sampler.sample_in_order(order, epoch, rest, times, [&](int64_t i, SampledBatch&& batch) {
          cancelled = !deliver(rest[static_cast<std::size_t>(i)], std::move(batch));
          // The pass ends with its last batch, not with the next epoch's early ones.
          if (!cancelled && i + 1 == static_cast<int64_t>(rest.size())) window->close();
          return !cancelled;
        }, failed, busy, &then, &cancel_ahead);
      } catch (...) {
        account();
        if (failed >= 0) indices = std::span<const int64_t>(rest.data() + failed, 1);
        throw;
      }
      account();
      if (cancelled) return;
      window->close();  // (again, or a pass with no batch left to sample)
      ahead = std::move(then);
      return;
    }
    std::vector<SampledBatch> group;
    for (int64_t g = 0; g < total;) {
      const int64_t last = std::min(g + sampler.group_size(), total);
      indices = std::span<const int64_t>(batches.data() + g, static_cast<std::size_t>(last - g));
      const auto t0 = std::chrono::steady_clock::now();
      sampler.sample(order, epoch, indices, group, times);
      {
        const std::lock_guard lock(stats_mutex);
        stats.sample_seconds += seconds_since(t0);
        for (const SampledBatch& b : group) stats.blocks_to_host += b.copied_to_host ? 1 : 0;
      }
      for (std::size_t i = 0; i < indices.size(); ++i) {
        if (!deliver(indices[i], std::move(group[i]))) return;
      }
      g = last;
    }
    window->close();
  } catch (...) {
    window->fail(stage_error(Stage::kSample, epoch, indices));
  }
}

LoadedBatch Loader::Impl::make_loaded(int64_t epoch, Sampled& s) const {
  LoadedBatch out;
  out.epoch = epoch;
  out.index = s.index;
  out.batch = std::move(s.batch.batch);
  out.seed_positions = std::move(s.seed_positions);
  out.hetero_blocks = std::move(s.batch.hetero_blocks);
  if (s.batch.device) {
    out.device = std::move(s.batch.device);
    out.streams.push_back(std::move(s.batch.stream));
  }
  if (dataset.has_labels()) {
    const auto labels = dataset.labels();
    out.labels.reserve(out.batch.seeds.size());
    for (const int64_t v : out.batch.seeds) out.labels.push_back(labels[static_cast<std::size_t>(v)]);
  }
  return out;
}

std::vector<std::vector<int64_t>> Loader::Impl::local_type_ids(const Sampled& s) const {
  // The input nodes by type: the last block's src nodes of each type (the sampler keeps a block
  // per fanout, at least one).
  GRAPHTIER_EXPECTS(!s.batch.hetero_blocks.empty(), InvalidArgument, "loader: batch ", s.index,
                    " of a typed dataset has no blocks to take its input nodes from");
  const sample::HeteroBlock& last = s.batch.hetero_blocks.back();
  std::vector<std::vector<int64_t>> out(static_cast<std::size_t>(typed_store->num_types()));
  for (int32_t t = 0; t < typed_store->num_types(); ++t) {
    if (typed_store->store(t) == nullptr) continue;  // no table: nothing to announce or gather
    const std::vector<int64_t>& ids = last.src_nodes[static_cast<std::size_t>(t)];
    const int64_t begin = typed_store->offset(t);
    std::vector<int64_t>& local = out[static_cast<std::size_t>(t)];
    local.reserve(ids.size());
    for (const int64_t v : ids) local.push_back(v - begin);  // split_block keeps each id in its type's range
  }
  return out;
}

Output Loader::Impl::allocate(std::size_t bytes) {
  bytes = std::max<std::size_t>(1, bytes);
  Output out;
  if (output_stream) {
    // Stream-ordered from the kept pool: no cudaMalloc, and no cudaFree (which waits for the whole
    // device) when the batch dies.
    out.buffer = device::allocate_output(bytes, output_stream->get(), options.device);
  } else if (pinned_output) {
    out.lease = std::make_shared<PinnedRing::Lease>(pinned_output->acquire((bytes + 7) / 8));
    out.buffer = std::shared_ptr<void>(out.lease, out.lease->data());
  } else {
    auto host = std::make_shared<Buffer>(options.output, bytes, options.device);
    out.buffer = std::shared_ptr<void>(host, host->data());  // owns the Buffer, points at its memory
  }
  return out;
}

void Loader::Impl::attach(LoadedBatch& l, const Output& out) const {
  if (output_stream) l.streams.push_back(output_stream);
  if (out.lease) {
    // Every batch of the group fences the shared buffer behind its own consumer's copies.
    l.fence_pinned = [lease = out.lease, device = options.device](CudaStream consumer) {
      lease->fence_after(device::record_fence(consumer, device));
    };
  }
}

void Loader::Impl::gather_group(int64_t epoch, std::vector<Sampled>& group) {
  // Every hook runs before any batch is gathered, and a failure leaves the whole group for
  // run_gather to give its window announcements back (consume gives each back once).
  if (options.fault_hook) {
    for (const Sampled& s : group) options.fault_hook(Stage::kGather, s.index);
  }
  Output output;
  int64_t row_bytes = 0;
  if (store != nullptr) {
    // One gather for the whole group: the storage tier sees all of its reads at once (and reads a
    // row that several minibatches share once).
    std::vector<int64_t> ids;
    for (const Sampled& s : group) ids.insert(ids.end(), s.batch.input_nodes().begin(), s.batch.input_nodes().end());
    const graph::FeatureLayout& layout = store->layout();
    row_bytes = layout.row_bytes();
    const auto rows = static_cast<int64_t>(ids.size());
    const auto t0 = std::chrono::steady_clock::now();  // the output's allocation counts as gather time
    output = allocate(static_cast<std::size_t>(rows * row_bytes));
    // A device minibatch gathered alone: its input nodes are on the GPU already (its last block's
    // src nodes, complete since the sampler's wait), so the tiers need not upload them again.
    feature::DeviceIds device_ids;
    if (group.size() == 1 && group[0].batch.device && !group[0].batch.device->blocks.empty()) {
      device_ids = {group[0].batch.device->blocks.back().src_nodes, group[0].batch.device->device};
    }
    // A stream-ordered output is ready for the store's streams after the output stream's work.
    const CudaStream output_after = output_stream ? output_stream->get() : CudaStream{};
    // The group's announcements go back once the store has looked its ids up, while its reads are
    // in flight: given back after the gather, the policy's bookkeeping (~3 ms of a 130 ms gather)
    // left the device idle. A gather that fails first leaves them to run_gather's failure path.
    const feature::GatherStats done = store->gather(
        ids, TensorView::contiguous(output.buffer.get(), layout.dtype, {rows, layout.dim}, options.output, options.device),
        device_ids, output_stream ? &output_after : nullptr, [&] {
          for (Sampled& s : group) consume(s);
        });
    if (accumulator) accumulator->record(ids, done);
    const std::lock_guard lock(stats_mutex);
    stats.gather_seconds += seconds_since(t0);
    stats.features += done;
  }
  std::vector<LoadedBatch> loaded;
  loaded.reserve(group.size());
  int64_t offset = 0;
  for (Sampled& s : group) {
    const auto n = static_cast<int64_t>(s.batch.input_nodes().size());
    LoadedBatch& l = loaded.emplace_back(make_loaded(epoch, s));
    if (output.buffer) {
      const graph::FeatureLayout& layout = store->layout();
      attach(l, output);
      l.x_buffer = output.buffer;
      l.x = TensorView::contiguous(static_cast<std::byte*>(output.buffer.get()) + offset * row_bytes, layout.dtype,
                                   {n, layout.dim}, options.output, options.device);
      offset += n;
    }
  }
  if (typed_store != nullptr) gather_types(group, loaded);
  for (LoadedBatch& l : loaded) {
    if (!ready->push(std::move(l))) return;
  }
}

void Loader::Impl::gather_types(std::vector<Sampled>& group, std::vector<LoadedBatch>& loaded) {
  const auto types = static_cast<std::size_t>(typed_store->num_types());
  const auto t0 = std::chrono::steady_clock::now();  // the output's allocation counts as gather time
  // One output for the group: type t's rows of every batch, in group order, from begin[t] (each
  // type's rows aligned, as they differ in width).
  std::vector<std::size_t> begin(types + 1, 0);
  std::vector<int64_t> rows(types, 0);
  for (std::size_t t = 0; t < types; ++t) {
    const feature::FeatureStore* s = typed_store->store(static_cast<int32_t>(t));
    for (const Sampled& b : group) rows[t] += static_cast<int64_t>(b.type_ids[t].size());
    const int64_t bytes = s != nullptr ? rows[t] * s->layout().row_bytes() : 0;
    begin[t + 1] = align_output(begin[t] + static_cast<std::size_t>(bytes));
  }
  const Output output = allocate(begin[types]);
  auto* base = static_cast<std::byte*>(output.buffer.get());
  const CudaStream output_after = output_stream ? output_stream->get() : CudaStream{};
  feature::GatherStats done;
  std::vector<int64_t> ids;
  for (std::size_t t = 0; t < types; ++t) {
    feature::FeatureStore* s = typed_store->store(static_cast<int32_t>(t));
    if (s == nullptr || rows[t] == 0) continue;
    // One gather per type for the whole group, as the one-table path does: the type's storage reads
    // of every batch at once.
    ids.clear();
    for (const Sampled& b : group) ids.insert(ids.end(), b.type_ids[t].begin(), b.type_ids[t].end());
    const graph::FeatureLayout& layout = s->layout();
    const feature::GatherStats type_done =
        s->gather(ids, TensorView::contiguous(base + begin[t], layout.dtype, {rows[t], layout.dim}, options.output,
                                              options.device),
                  {}, output_stream ? &output_after : nullptr);
    typed_accumulator->record(static_cast<int32_t>(t), ids, type_done);
    done += type_done;
  }
  for (Sampled& s : group) consume(s);
  std::vector<int64_t> offset(types, 0);
  for (std::size_t i = 0; i < group.size(); ++i) {
    LoadedBatch& l = loaded[i];
    attach(l, output);
    l.type_x.assign(types, TensorView{});
    l.type_x_buffers.assign(types, nullptr);
    for (std::size_t t = 0; t < types; ++t) {
      const feature::FeatureStore* s = typed_store->store(static_cast<int32_t>(t));
      if (s == nullptr) continue;
      const graph::FeatureLayout& layout = s->layout();
      const auto n = static_cast<int64_t>(group[i].type_ids[t].size());
      l.type_x[t] = TensorView::contiguous(base + begin[t] + offset[t] * layout.row_bytes(), layout.dtype,
                                           {n, layout.dim}, options.output, options.device);
      l.type_x_buffers[t] = output.buffer;
      offset[t] += n;
    }
  }
  const std::lock_guard lock(stats_mutex);
  stats.gather_seconds += seconds_since(t0);
  stats.features += done;
}

void Loader::Impl::run_gather(int64_t epoch) {
  std::vector<Sampled> group;
  std::vector<int64_t> type_expected;  // a typed store's expected reads of the group, per type
  try {
    while (true) {
      group.clear();
      std::optional<Sampled> first = window->pop();
      if (!first) break;
      const std::size_t waiting = window->size();
      // The storage reads the group expects: of the one table, or per type of a typed store.
      int64_t expected = 0;
      type_expected.assign(typed_store != nullptr ? static_cast<std::size_t>(typed_store->num_types()) : 0, 0);
      const auto add_expected = [&](const Sampled& s) {
        if (accumulator) expected += accumulator->expected_reads(s.batch.input_nodes());
        if (typed_accumulator) expected += typed_accumulator->add_expected(s.type_ids, type_expected);
      };
      const auto wants_more = [&] {
        const auto merged = static_cast<int>(group.size());
        return options.accumulate && ((accumulator && accumulator->wants_more(expected, merged)) ||
                                      (typed_accumulator && typed_accumulator->wants_more(type_expected, merged)));
      };
      add_expected(*first);
      group.push_back(std::move(*first));
      while (wants_more()) {
        std::optional<Sampled> more = window->try_pop();
        if (!more) break;
        add_expected(*more);
        group.push_back(std::move(*more));
      }
      {
        const std::lock_guard lock(stats_mutex);
        stats.gathers += 1;
        stats.window_fill += static_cast<int64_t>(waiting) + 1;
        stats.expected_storage_reads += expected;
      }
      gather_group(epoch, group);
    }
    trim_pools();
    ready->close();
  } catch (...) {
    std::vector<int64_t> indices;
    for (const Sampled& s : group) indices.push_back(s.index);
    // Batches taken from the window but not gathered give their announcements back.
    for (Sampled& s : group) consume(s);
    ready->fail(stage_error(Stage::kGather, epoch, indices));
    window->cancel();
  }
}

void Loader::Impl::stop(bool keep_ahead) noexcept {
  if (!started) return;
  cancel_ahead = !keep_ahead;
  window->cancel();
  ready->cancel();
  if (sample_thread.joinable()) sample_thread.join();
  if (gather_thread.joinable()) gather_thread.join();
  // Sampled minibatches nobody will gather release their window pins; gathered ones were consumed.
  for (Sampled& s : window->take_all()) consume(s);
  if (!keep_ahead) ahead = {};
  started = false;
}

Loader::Loader(const graph::Dataset& dataset, feature::FeatureStore* store, std::vector<int64_t> ids,
               LoaderOptions options, const feature::TypedFeatureStore* typed_store, std::vector<int64_t> input_time)
    : impl_(std::make_unique<Impl>(dataset, store, std::move(ids), std::move(options), typed_store,
                                   std::move(input_time))) {}

std::unique_ptr<Loader> Loader::over_split(const graph::Dataset& dataset, feature::FeatureStore* store,
                                           graph::Split split, LoaderOptions options,
                                           const feature::TypedFeatureStore* typed_store) {
  std::vector<int64_t> ids = split_ids(dataset, split, options);
  options.ids_numbering = graph::Numbering::kPrepared;  // a split's ids are the dataset's own
  return std::make_unique<Loader>(dataset, store, std::move(ids), std::move(options), typed_store);
}

Loader::~Loader() { stop(); }

int64_t Loader::num_batches() const noexcept { return impl_->sampler.num_batches(); }
int64_t Loader::num_delivered() const noexcept { return impl_->sampler.num_delivered(); }
const LoaderOptions& Loader::options() const noexcept { return impl_->options; }

void Loader::start(int64_t epoch, int64_t first_batch) {
  Impl& s = *impl_;
  GRAPHTIER_EXPECTS(epoch >= 0 && epoch < kMaxEpochs, InvalidArgument, "epoch must be in [0, 2^31), got ",
                    epoch);
  GRAPHTIER_EXPECTS(first_batch >= 0 && first_batch <= num_batches(), OutOfRange, "first batch ", first_batch,
                    " is outside [0, ", num_batches(), "]");
  s.stop(/*keep_ahead=*/first_batch == 0 && epoch == s.pass_epoch + 1);
  BatchSampler::Ahead early = std::move(s.ahead);
  s.ahead = {};
  s.cancel_ahead = false;
  s.pass_epoch = epoch;
  s.window = std::make_unique<BoundedQueue<Sampled>>(static_cast<std::size_t>(std::max(s.options.window, s.options.prefetch)));
  s.ready = std::make_unique<BoundedQueue<LoadedBatch>>(static_cast<std::size_t>(s.options.prefetch));
  {
    const std::lock_guard lock(s.stats_mutex);
    s.stats = EpochStats{};
    s.stats.epoch = epoch;
  }
  s.epoch_start = std::chrono::steady_clock::now();
  s.started = true;
  s.sample_thread = std::thread(
      [&s, epoch, first_batch, early = std::move(early)]() mutable { s.run_sampler(epoch, first_batch, std::move(early)); });
  s.gather_thread = std::thread([&s, epoch] { s.run_gather(epoch); });
}

std::optional<LoadedBatch> Loader::next() {
  Impl& s = *impl_;
  GRAPHTIER_EXPECTS(s.started, InvalidArgument, "Loader::next() before start()");
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t waiting = s.ready->size();
  std::optional<LoadedBatch> out = s.ready->pop();
  const std::lock_guard lock(s.stats_mutex);
  s.stats.wait_seconds += seconds_since(t0);
  if (out) {
    s.stats.batches += 1;
    s.stats.ready_fill += static_cast<int64_t>(waiting);
  }
  s.stats.seconds = seconds_since(s.epoch_start);
  return out;
}

void Loader::stop() noexcept { impl_->stop(); }

void LoadedBatch::release_after(CudaStream consumer) const {
  if (fence_pinned) fence_pinned(consumer);
  if (streams.empty()) return;
  std::vector<CudaStream> waiters;
  for (const auto& s : streams) waiters.push_back(s->get());
  device::order_after(consumer, waiters, streams.front()->device());
}

EpochStats Loader::stats() const {
  const std::lock_guard lock(impl_->stats_mutex);
  return impl_->stats;
}

}  // namespace graphtier::loader
