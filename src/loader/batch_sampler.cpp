#include "batch_sampler.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>

#include "graphtier/core/device_memory.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/sample/epoch.hpp"
#include "device_ops.hpp"

namespace graphtier::loader {
namespace {

constexpr int kGpuSamplingStreams = 4;

/// options.relation_fanouts (by relation name) as SamplerSpec::relation_fanouts (by relation id,
/// empty lists for the relations that take `fanouts`); the sampler checks the values.
std::vector<std::vector<int64_t>> relation_fanouts_by_id(const graph::Dataset& dataset, const LoaderOptions& options) {
  if (options.relation_fanouts.empty()) return {};
  const graph::HeteroSchema& schema = dataset.schema();
  GRAPHTIER_EXPECTS(!schema.empty(), InvalidArgument, "relation_fanouts: ", dataset.dir(),
                    " is a homogeneous dataset (no relations); use fanouts");
  std::vector<std::vector<int64_t>> out(static_cast<std::size_t>(schema.num_relations()));
  for (const auto& [name, fanouts] : options.relation_fanouts) {
    const int32_t r = schema.find_relation(name);
    if (r < 0) {
      std::string known;
      for (int32_t k = 0; k < schema.num_relations(); ++k) known += (k ? ", " : "") + schema.relation_name(k);
      throw InvalidArgument(detail::concat("relation_fanouts: unknown relation '", name, "' (the dataset's relations: ",
                                           known, ")"));
    }
    GRAPHTIER_EXPECTS(fanouts.size() == options.fanouts.size(), InvalidArgument, "relation_fanouts['", name, "'] has ",
                      fanouts.size(), " hops, fanouts has ", options.fanouts.size(), " (one fanout per block)");
    out[static_cast<std::size_t>(r)] = fanouts;
  }
  return out;
}

}  // namespace

void BatchSampler::setup_temporal(const graph::Dataset& dataset, std::vector<int64_t> input_time) {
  const std::string& attr = options_.time_attr;
  if (attr.empty()) {
    GRAPHTIER_EXPECTS(input_time.empty(), InvalidArgument,
                      "input_time needs time_attr (\"node_time\" or \"edge_time\": the times temporal sampling compares)");
    return;
  }
  sample::time_source(dataset, attr);  // checks the name and that the dataset has those times
  if (input_time.empty()) {
    GRAPHTIER_EXPECTS(dataset.has_node_time(), InvalidArgument, "time_attr '", attr, "': give input_time (one per id): ",
                      "dataset ", dataset.dir(), " has no node times to take the seeds' times from");
    const auto node_time = dataset.node_time();
    times_.reserve(ids_.size());
    for (const int64_t v : ids_) times_.push_back(node_time[static_cast<std::size_t>(v)]);
  } else {
    GRAPHTIER_EXPECTS(input_time.size() == ids_.size(), InvalidArgument, "input_time has ", input_time.size(),
                      " values for ", ids_.size(), " ids (one time per id)");
    times_ = std::move(input_time);
  }
  temporal_ = std::make_unique<sample::TemporalIndex>(sample::temporal_index(dataset, attr, &pool_));
  graph_.temporal = temporal_.get();
}

BatchSampler::BatchSampler(const graph::Dataset& dataset, std::vector<int64_t> ids, const LoaderOptions& options,
                           bool input_ids_to_host, std::vector<int64_t> input_time)
    : options_(options), ids_(std::move(ids)), graph_{graph::CscView::of(dataset), {}, dataset.hetero()},
      pool_(options.gpu_sampling && options.sample_threads <= 0 ? kGpuSamplingStreams : options.sample_threads) {
  // Said here, in the option's name, before a GPU sampler's own parts (its topology, streams) would.
  GRAPHTIER_EXPECTS(!options.gpu_sampling || cuda_available(), Unsupported,
                    "gpu_sampling (--gpu-sampling) needs graphtier built with CUDA (the 'cuda' preset) and a visible "
                    "GPU; without them, leave it off to sample on the CPU");
  GRAPHTIER_EXPECTS(options.batch_size >= 1, InvalidArgument, "batch size must be >= 1, got ", options.batch_size);
  GRAPHTIER_EXPECTS(options.batch_offset >= 0, InvalidArgument, "batch_offset must be >= 0, got ",
                    options.batch_offset);
  GRAPHTIER_EXPECTS(options.batch_stride >= 1, InvalidArgument, "batch_stride must be >= 1, got ",
                    options.batch_stride);
  GRAPHTIER_EXPECTS(!ids_.empty(), InvalidArgument, "the loader needs at least one node id to iterate");
  sample::check_seeds(ids_, dataset.num_nodes());
  const auto n = static_cast<int64_t>(ids_.size());
  num_batches_ = options.drop_last ? n / options.batch_size : (n + options.batch_size - 1) / options.batch_size;
  GRAPHTIER_EXPECTS(num_batches_ > 0, InvalidArgument, "drop_last with ", n, " ids and batch size ", options.batch_size,
                    " leaves no batch");
  GRAPHTIER_EXPECTS(options.bulk >= 0, InvalidArgument, "bulk must be >= 0 (0: one minibatch at a time), got ",
                    options.bulk);
  sample::SamplerSpec spec;
  spec.kind = options.sampler;
  spec.fanouts = options.fanouts;
  spec.relation_fanouts = relation_fanouts_by_id(dataset, options);
  spec.replace = options.replace;
  spec.seed = options.seed;
  spec.bulk = options.bulk > 0;
  spec.temporal_strategy = options.temporal_strategy;
  setup_temporal(dataset, std::move(input_time));
  sample::SamplerResources resources{.pool = &pool_};
  if (options.gpu_sampling) {
    resources.device = options.topology.device;
    if (sample::uses_device_topology(spec)) {
      topology_ = std::make_unique<sample::DeviceTopology>(graph_, options.topology);
      resources.topology = topology_.get();
    }
  }
  sampler_ = sample::make_sampler(spec, graph_, resources);
  if (options.gpu_sampling) {
    // Every pool thread samples a batch on its own stream at once (a bulk call: one stream): their
    // bound (unknown with a fanout -1 layer or a sampler that cannot tell ahead) must fit in what
    // the topology left free.
    const int streams = spec.bulk ? 1 : pool_.size();
    const int64_t per_call = sampler_->device_bytes_bound(options.batch_size);
    if (per_call > 0) {
      require_device_memory(detail::concat("GPU sampling (", streams, " streams, each up to ", per_call,
                                           " bytes for a batch of ", options.batch_size, " seeds)"),
                            per_call * streams, sampler_->device());
    }
    for (int t = 0; t < streams; ++t) cuda_streams_.push_back(std::make_shared<OwnedCudaStream>(sampler_->device()));
  }
  // Every GPU sampler has a device form. A typed graph's blocks come to the host all the same: they
  // are split by type there (split_block, in sample_one); so do temporal batches (sample_temporal).
  if (options.gpu_sampling && options.device_batches && graph_.hetero.empty() && temporal_ == nullptr) {
    device_batches_ = true;
    input_ids_to_host_ = input_ids_to_host;
    ring_.emplace(device::allocate_pinned, device::free_pinned);
  }
}

BatchSampler::~BatchSampler() = default;

std::vector<int64_t> BatchSampler::epoch_positions(int64_t epoch) const {
  std::vector<int64_t> positions(ids_.size());
  std::iota(positions.begin(), positions.end(), int64_t{0});
  return options_.shuffle ? sample::shuffled_ids(positions, options_.seed, static_cast<uint64_t>(epoch)) : positions;
}

std::vector<int64_t> BatchSampler::epoch_order(std::span<const int64_t> positions) const {
  std::vector<int64_t> order(positions.size());
  for (std::size_t i = 0; i < positions.size(); ++i) order[i] = ids_[static_cast<std::size_t>(positions[i])];
  return order;
}

std::vector<int64_t> BatchSampler::epoch_times(std::span<const int64_t> positions) const {
  if (times_.empty()) return {};
  std::vector<int64_t> times(positions.size());
  for (std::size_t i = 0; i < positions.size(); ++i) times[i] = times_[static_cast<std::size_t>(positions[i])];
  return times;
}

bool BatchSampler::streams() const noexcept { return !sampler_->bulk() && sampler_->device() < 0; }

void BatchSampler::sample_in_order(const std::vector<int64_t>& order, int64_t epoch, std::span<const int64_t> batches,
                                   std::span<const int64_t> times, const Deliver& deliver, int64_t& failed,
                                   double& busy_seconds, Ahead* then, const std::atomic<bool>* cancel) {
  const int64_t ahead = 2 * static_cast<int64_t>(pool_.size());
  const auto n = static_cast<int64_t>(batches.size());
  std::mutex mutex;
  std::condition_variable room;  // a slot freed, or the limit lowered
  std::vector<std::optional<SampledBatch>> done(static_cast<std::size_t>(ahead));  // position i in i % ahead
  int64_t next = 0;                                       // the next position to deliver
  int64_t limit = n;                                      // positions from here on are not delivered
  bool delivering = false;
  // A failure at i still delivers the positions before it (the threads finish those); the first
  // failure's position is the one its rethrown exception belongs to.
  const auto fail_at = [&](int64_t i) {
    const std::lock_guard lock(mutex);
    if (failed < 0) failed = i;
    limit = std::min(limit, i);
    room.notify_all();
  };
  // The next epoch's first batches, positions n .. n + extra - 1 of the loop (no delivery, no
  // room to wait for): epoch `then->epoch`'s order is made by the first thread that gets there.
  const int64_t extra = then != nullptr && then->epoch >= 0 ? ahead : 0;
  std::once_flag prepared;
  bool planned = false;  // set by the call_once that made then's order
  std::vector<std::optional<SampledBatch>> early(static_cast<std::size_t>(extra));
  std::vector<std::exception_ptr> early_errors(static_cast<std::size_t>(extra));
  const auto one_early = [&](int64_t j) {
    {
      const std::lock_guard lock(mutex);
      if (limit < n || (cancel != nullptr && cancel->load())) return;
    }
    try {
      std::call_once(prepared, [&] {
        then->positions = epoch_positions(then->epoch);
        then->order = epoch_order(then->positions);
        then->times = epoch_times(then->positions);
        then->batches = delivered_from(0);
        planned = true;
      });
    } catch (...) {
      return;  // then->batches stays short: nothing sampled early
    }
    if (j >= static_cast<int64_t>(then->batches.size())) return;
    const int64_t b = then->batches[static_cast<std::size_t>(j)];
    const auto t0 = std::chrono::steady_clock::now();
    try {
      early[static_cast<std::size_t>(j)] = sample_batch(then->order, then->epoch, b, 0, then->times);
    } catch (...) {
      early_errors[static_cast<std::size_t>(j)] = std::current_exception();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::lock_guard lock(mutex);
    then->busy_seconds += seconds;
  };
  // Positions are claimed in increasing order (parallel_for's chunks), so position `next` is
  // always being sampled by a thread that does not wait for room: no deadlock.
  const auto one = [&](int64_t i) {
    if (i >= n) {
      one_early(i - n);
      return;
    }
    {
      std::unique_lock lock(mutex);
      room.wait(lock, [&] { return i >= limit || i < next + ahead; });
      if (i >= limit) return;
    }
    SampledBatch batch;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      batch = sample_batch(order, epoch, batches[static_cast<std::size_t>(i)], 0, times);
    } catch (...) {
      fail_at(i);
      throw;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::unique_lock lock(mutex);
    busy_seconds += seconds;
    done[static_cast<std::size_t>(i % ahead)] = std::move(batch);
    if (delivering) return;  // the thread delivering takes it in turn
    delivering = true;
    while (next < limit && done[static_cast<std::size_t>(next % ahead)]) {
      std::optional<SampledBatch>& slot = done[static_cast<std::size_t>(next % ahead)];
      SampledBatch ready = std::move(*slot);
      slot.reset();
      const int64_t k = next;
      lock.unlock();
      bool more = false;
      try {
        more = deliver(k, std::move(ready));
      } catch (...) {
        fail_at(k);  // `delivering` stays set: nothing after k is delivered
        throw;
      }
      lock.lock();
      ++next;
      if (!more) limit = next;
      room.notify_all();
    }
    delivering = false;
  };
  pool_.parallel_for(0, n + extra, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) one(i);
  });
  if (then != nullptr && !planned) {
    *then = Ahead{};  // no order was made (stopped, or it failed): nothing for the next pass
    return;
  }
  // The early batches' prefix: up to the first one missing (not begun) or failed.
  for (std::size_t j = 0; j < early.size(); ++j) {
    if (!early[j]) {
      then->error = early_errors[j];  // null when it was not sampled
      break;
    }
    then->sampled.push_back(std::move(*early[j]));
  }
}

int64_t BatchSampler::group_size() const noexcept { return options_.bulk > 0 ? options_.bulk : pool_.size(); }

int64_t BatchSampler::num_delivered() const noexcept {
  if (options_.batch_offset >= num_batches_) return 0;
  return (num_batches_ - options_.batch_offset + options_.batch_stride - 1) / options_.batch_stride;
}

std::vector<int64_t> BatchSampler::delivered_from(int64_t first) const {
  const int64_t offset = options_.batch_offset, stride = options_.batch_stride;
  // The first b >= first with b = offset (mod stride), b >= offset.
  int64_t b = offset;
  if (first > offset) b = offset + (first - offset + stride - 1) / stride * stride;
  std::vector<int64_t> out;
  for (; b < num_batches_; b += stride) out.push_back(b);
  return out;
}

SampledBatch BatchSampler::sample_device(std::span<const int64_t> seeds, uint64_t stream, int64_t slot) {
  const std::shared_ptr<OwnedCudaStream>& s = cuda_streams_[static_cast<std::size_t>(slot)];
  SampledBatch out;
  // The sampler's one host wait completes every block and, with the sink, the input ids' copy into
  // a pinned ring slot (sized by the sampler's bound, then trimmed to the real count).
  sample::InputNodesSink sink;
  if (input_ids_to_host_) {
    sink = [&](int64_t bound) {
      out.input = ring_->acquire(static_cast<std::size_t>(bound));
      return out.input.data();
    };
  }
  finish_device(out, sampler_->sample_device(seeds, stream, s->get(), sink), s);
  return out;
}

void BatchSampler::finish_device(SampledBatch& out, sample::DeviceMiniBatch&& sampled,
                                 const std::shared_ptr<OwnedCudaStream>& stream) {
  auto d = std::make_shared<sample::DeviceMiniBatch>(std::move(sampled));
  if (input_ids_to_host_) {
    if (d->blocks.empty()) {  // no layers: the input nodes are the seeds
      out.input = ring_->acquire(d->seeds.size());
      std::copy(d->seeds.begin(), d->seeds.end(), out.input.data());
    } else {
      out.input.shrink(static_cast<std::size_t>(d->blocks.back().num_src));
    }
  }
  out.batch.seeds = d->seeds;
  out.device = std::move(d);
  out.stream = stream;
}

void BatchSampler::sample_bulk_device(std::span<const std::span<const int64_t>> seeds,
                                      std::span<const uint64_t> streams, std::vector<SampledBatch>& out) {
  const std::shared_ptr<OwnedCudaStream>& s = cuda_streams_[0];
  out.clear();
  out.resize(seeds.size());
  // The bulk call's last wait completes every block and, with the sink, each batch's input ids'
  // copy into its pinned ring slot (sized by the sampler's bound, then trimmed to the real count).
  sample::BulkInputNodesSink sink;
  if (input_ids_to_host_) {
    sink = [&](int64_t b, int64_t bound) {
      SampledBatch& o = out[static_cast<std::size_t>(b)];
      o.input = ring_->acquire(static_cast<std::size_t>(bound));
      return o.input.data();
    };
  }
  std::vector<sample::DeviceMiniBatch> sampled = sampler_->sample_bulk_device(seeds, streams, s->get(), sink);
  for (std::size_t i = 0; i < sampled.size(); ++i) finish_device(out[i], std::move(sampled[i]), s);
}

SampledBatch BatchSampler::sample_batch(const std::vector<int64_t>& order, int64_t epoch, int64_t b, int64_t slot,
                                        std::span<const int64_t> times) {
  if (options_.fault_hook) options_.fault_hook(Stage::kSample, b);
  return sample_one(sample::batch_seeds(order, options_.batch_size, b), sample::minibatch_stream(epoch, b), slot,
                    times.empty() ? times : sample::batch_seeds(times, options_.batch_size, b));
}

SampledBatch BatchSampler::sample_one(std::span<const int64_t> seeds, uint64_t stream, int64_t slot,
                                      std::span<const int64_t> seed_times) {
  if (device_batches_) return sample_device(seeds, stream, slot);
  SampledBatch out;
  if (temporal_) {
    // A GPU sampler's temporal batch comes to the host (the Sampler has no device form of it).
    out.batch = sampler_->device() >= 0
                    ? sampler_->sample_temporal(seeds, seed_times, stream,
                                                cuda_streams_[static_cast<std::size_t>(slot)]->get())
                    : sampler_->sample_temporal(seeds, seed_times, stream);
    out.copied_to_host = sampler_->device() >= 0;
  } else if (sampler_->device() >= 0) {
    out.batch = sampler_->sample(seeds, stream, cuda_streams_[static_cast<std::size_t>(slot)]->get());
    out.copied_to_host = true;
  } else {
    out.batch = sampler_->sample(seeds, stream);
  }
  // Split here, on the sampling pool, so that neither the gather thread nor Python re-derives the
  // types of a batch's nodes and edges (a typed graph's GPU batches come to the host for it).
  if (!graph_.hetero.empty()) {
    for (const sample::Block& block : out.batch.blocks) out.hetero_blocks.push_back(sample::split_block(block, graph_.hetero));
  }
  return out;
}

void BatchSampler::sample(const std::vector<int64_t>& order, int64_t epoch, std::span<const int64_t> batches,
                          std::vector<SampledBatch>& out, std::span<const int64_t> times) {
  const auto n = static_cast<int64_t>(batches.size());
  if (sampler_->bulk()) {
    // One bulk call for the whole group; each batch keeps its own stream (the group's batches need
    // not be consecutive when striding).
    std::vector<std::span<const int64_t>> seeds;
    std::vector<uint64_t> streams;
    for (const int64_t b : batches) {
      if (options_.fault_hook) options_.fault_hook(Stage::kSample, b);
      seeds.push_back(sample::batch_seeds(order, options_.batch_size, b));
      streams.push_back(sample::minibatch_stream(epoch, b));
    }
    if (device_batches_) {
      sample_bulk_device(seeds, streams, out);
      return;
    }
    const bool gpu = sampler_->device() >= 0;
    std::vector<sample::MiniBatch> sampled =
        sampler_->sample_bulk(seeds, streams, gpu ? cuda_streams_[0]->get() : CudaStream{}, &pool_);
    out.clear();
    out.resize(sampled.size());
    for (std::size_t i = 0; i < sampled.size(); ++i) {
      out[i].batch = std::move(sampled[i]);
      out[i].copied_to_host = gpu;
    }
    return;
  }
  out.clear();
  out.resize(static_cast<std::size_t>(n));
  const auto run = [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      out[static_cast<std::size_t>(i)] = sample_batch(order, epoch, batches[static_cast<std::size_t>(i)], i, times);
    }
  };
  if (n == 1) {
    run(0, n);
  } else {
    pool_.parallel_for(0, n, 1, run);
  }
}

}  // namespace graphtier::loader
