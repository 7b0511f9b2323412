#include <cuda_runtime.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "cuda_check.cuh"
#include "current_device.cuh"
#include "cuda_stream.cuh"
#include "cuda/copy_rows.cuh"
#include "cuda/gather_route.cuh"
#include "cuda/gpu_cache.cuh"
#include "cuda/gpu_tiers.hpp"
#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/core/device_memory.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/feature/pinned_split.hpp"

namespace graphtier::feature::cuda {

namespace {

enum Event { kStart, kServeDone, kStagedDone, kUpdateDone, kNumEvents };

// Rows sampled to measure the two pinned-tier paths at start-up, at each span.
constexpr int64_t kCalibrationRows = 16384;
// The narrow span the zero-copy path is also measured at (docs/architecture.md, Performance floor:
// within it the GPU's translation of host mappings reaches every row).
constexpr int64_t kNearSpanBytes = int64_t{256} << 20;

void ensure(Buffer& buffer, MemoryKind kind, std::size_t bytes, int device) {
  if (buffer.size() >= bytes) return;
  buffer = Buffer(kind, std::max(bytes, buffer.size() * 2), device);
}


}  // namespace

// A stream of the lowest priority the device has: the tiers' copies and kernels yield to work on
// streams of higher priority (a training step's), block by block.
class LowPriorityStream {
 public:
  LowPriorityStream() {
    int least = 0;
    int greatest = 0;
    GRAPHTIER_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    GRAPHTIER_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, least));
  }
  ~LowPriorityStream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  LowPriorityStream(const LowPriorityStream&) = delete;
  LowPriorityStream& operator=(const LowPriorityStream&) = delete;
  cudaStream_t get() const noexcept { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Synchronisation budget of one gather (docs/architecture.md, "GPU budgets"): one stream
// synchronisation at the end (the output is complete when gather returns); one event wait for the
// staged positions only when the store can stage rows (a pinned tier whose split table leaves rows
// to the CPU, or storage rows without a GPU cache); one for the missed positions only when a GPU
// cache exists and the store has storage rows. The host checks no id: the device routes them
// (gather_route.cuh), checking each, and hands down only the positions the host must stage. No
// allocation in steady state: every buffer below grows geometrically and is kept, device scratch
// comes from the stream-ordered pool.
struct GpuTiers {
  explicit GpuTiers(int device) : device(device), stream(main_stream.get()), copy_stream(copy.get()) {}

  int device = 0;
  int64_t gpu_end = 0;
  int64_t row_bytes = 0;
  // Declared before the buffers: destroyed after they are freed. `stream` runs the routing, the
  // serve kernel and the cache update; `copy_stream` the staged rows' upload and scatter, so that
  // they need not queue behind the serve kernel.
  LowPriorityStream main_stream;
  LowPriorityStream copy;
  cudaStream_t stream = nullptr;
  cudaStream_t copy_stream = nullptr;
  cudaEvent_t events[kNumEvents] = {};
  cudaEvent_t staged_listed = nullptr;  // the staged positions are in `staged`
  cudaEvent_t missed_listed = nullptr;  // the missed storage positions are in `missed`
  cudaEvent_t copied = nullptr;         // the staged rows are scattered into the output
  cudaEvent_t output_ready = nullptr;   // the caller's output stream reached the gather
  // announce/consume alternate between two pinned buffers: the upload from one has usually left
  // it long before it is rewritten, so the wait on its event is rarely a wait.
  cudaEvent_t window_done[2] = {};  // the upload from window_host[i] has left it
  int window_next = 0;
  Buffer hot;                         // device, [gpu_end, row_bytes]
  DeviceCache cache;                  // the GPU software cache (0 lines: none)
  std::unique_ptr<DeviceRouter> router;
  const std::byte* host_tier_device = nullptr;  // the pinned host tier as the GPU addresses it
  Buffer index_host;    // pinned: the ids of one gather, uploaded when the caller has none on the device
  Buffer index_dev;
  Buffer route_dev;     // [n] the routes (gather_route.hpp), written by the device
  PositionList staged{stream};  // positions the host stages before the serve kernel is done (CPU half, no-cache storage)
  PositionList missed{stream};  // storage positions the cache missed
  Buffer hit_dev;       // the serve kernel's hit flags
  Buffer staging_host;  // pinned: rows of `staged` gathered by the CPU
  Buffer staging_dev;
  Buffer missed_host;   // pinned: rows of `missed` gathered by the CPU
  Buffer missed_dev;
  Buffer bounce;        // device output for a gather into host memory
  Buffer counters_dev;  // CacheCounters
  Buffer counters_host; // pinned: CacheCounters, read after the final synchronisation
  Buffer window_host[2];  // pinned: the ids of one announce/consume
  Buffer window_dev;
  PinnedPaths paths;
  PinnedPath forced_path = PinnedPath::kMeasured;
  uint32_t stamp = 0;       // gathers so far: the use stamp of this one's lines
  int64_t tombstones = 0;   // the table's, as of the last gather
  // Host-side list of one gather: the ids of the rows the CPU stages.
  std::vector<int64_t> cpu_ids;

  ~GpuTiers() {
    cudaStreamSynchronize(copy_stream);
    cudaStreamSynchronize(stream);
    for (cudaEvent_t e : events) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    for (cudaEvent_t e : {staged_listed, missed_listed, copied, output_ready}) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    for (cudaEvent_t e : window_done) {
      if (e != nullptr) cudaEventDestroy(e);
    }
  }
};

void GpuTiersDeleter::operator()(GpuTiers* tiers) const noexcept { delete tiers; }

namespace {

// Rows [0, rows) of features.bin into `dst` (device) packed at row_bytes, through a pinned chunk.
void load_hot_rows(GpuTiers& t, const std::string& path, const graph::FeatureLayout& layout, int64_t rows) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) GRAPHTIER_THROW_ERRNO(path, ": cannot open for the GPU hot tier");
  try {
    const int64_t chunk_rows = std::max<int64_t>(1, (int64_t{64} << 20) / layout.row_stride);
    Buffer chunk(MemoryKind::kPinned, static_cast<std::size_t>(chunk_rows * layout.row_stride), t.device);
    for (int64_t begin = 0; begin < rows; begin += chunk_rows) {
      const int64_t n = std::min(chunk_rows, rows - begin);
      // The table's last row may end the file without its padding.
      const auto bytes = static_cast<std::size_t>((n - 1) * layout.row_stride + layout.row_bytes());
      pread_exact(fd, chunk.data(), bytes, static_cast<uint64_t>(begin * layout.row_stride), path);
      GRAPHTIER_CUDA_CHECK(cudaMemcpy2DAsync(
          static_cast<std::byte*>(t.hot.data()) + begin * layout.row_bytes(), static_cast<std::size_t>(layout.row_bytes()),
          chunk.data(), static_cast<std::size_t>(layout.row_stride), static_cast<std::size_t>(layout.row_bytes()),
          static_cast<std::size_t>(n), cudaMemcpyHostToDevice, t.stream));
      GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(t.stream));
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

// Zero-copy rows/s over `ids` (rows of the pinned tier, relative to its first id), timed with
// events after a warm-up.
double time_zero_copy(GpuTiers& t, const HostTiers& host, const std::vector<int64_t>& ids) {
  const auto n = static_cast<int64_t>(ids.size());
  ensure(t.index_host, MemoryKind::kPinned, ids.size() * sizeof(int64_t), t.device);
  ensure(t.index_dev, MemoryKind::kDevice, ids.size() * sizeof(int64_t), t.device);
  ensure(t.staging_dev, MemoryKind::kDevice, static_cast<std::size_t>(n * t.row_bytes), t.device);
  std::copy(ids.begin(), ids.end(), static_cast<int64_t*>(t.index_host.data()));
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(t.index_dev.data(), t.index_host.data(), ids.size() * sizeof(int64_t),
                                       cudaMemcpyHostToDevice, t.stream));
  RowCopy zc;
  zc.src = t.host_tier_device;
  zc.src_pitch = host.rows().row_stride();
  zc.src_rows = static_cast<const int64_t*>(t.index_dev.data());
  zc.dst = static_cast<std::byte*>(t.staging_dev.data());
  zc.dst_pitch = t.row_bytes;
  zc.row_bytes = t.row_bytes;
  zc.count = n;
  launch_copy_rows(zc, t.stream);  // warm-up: first touch of the mappings
  GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kStart], t.stream));
  launch_copy_rows(zc, t.stream);
  GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kServeDone], t.stream));
  GRAPHTIER_CUDA_CHECK(cudaEventSynchronize(t.events[kServeDone]));
  float ms = 0;
  GRAPHTIER_CUDA_CHECK(cudaEventElapsedTime(&ms, t.events[kStart], t.events[kServeDone]));
  return static_cast<double>(n) / std::max(1e-9, ms * 1e-3);
}

// Times zero-copy over random rows of the whole tier and within its first kNearSpanBytes, and the
// CPU gather + copy over the whole tier's rows (its rate hardly depends on the span), into t.paths
// (pinned_split.hpp).
void measure_pinned_paths(GpuTiers& t, const HostTiers& host) {
  const HostTier& pinned = host.rows();
  const int64_t begin = pinned.begin();
  const int64_t rows = pinned.end() - begin;
  if (rows == 0) return;
  const int64_t stride = pinned.row_stride();
  const int64_t n = std::min(rows, kCalibrationRows);
  const auto random_rows = [&](int64_t within, uint64_t stream) {
    std::vector<int64_t> ids(static_cast<std::size_t>(n));
    for (int64_t k = 0; k < n; ++k) ids[k] = static_cast<int64_t>(bounded_u64(philox_u64(0x9e37, stream, k), within));
    return ids;
  };
  PinnedPaths p;
  p.tier_bytes = static_cast<double>(rows * stride);
  const std::vector<int64_t> ids = random_rows(rows, 0);
  p.zero_copy_rows_per_second = time_zero_copy(t, host, ids);
  const int64_t near_rows = kNearSpanBytes / stride;
  if (near_rows > 0 && near_rows * 2 <= rows) {
    p.near_span_bytes = static_cast<double>(near_rows * stride);
    p.near_zero_copy_rows_per_second = time_zero_copy(t, host, random_rows(near_rows, 1));
  }

  const auto bytes = static_cast<std::size_t>(n * t.row_bytes);
  ensure(t.staging_host, MemoryKind::kPinned, bytes, t.device);
  const auto cpu_copy = [&] {
    auto* staged = static_cast<std::byte*>(t.staging_host.data());
    host.pool().parallel_for(0, n, 256, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        std::memcpy(staged + k * t.row_bytes, pinned.row(begin + ids[k]), static_cast<std::size_t>(t.row_bytes));
      }
    });
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(t.staging_dev.data(), staged, bytes, cudaMemcpyHostToDevice, t.stream));
    GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(t.stream));
  };
  cpu_copy();  // warm-up
  const auto start = std::chrono::steady_clock::now();
  cpu_copy();
  p.cpu_copy_rows_per_second = static_cast<double>(n) / std::max(1e-9, seconds_since(start));
  // The link alone: the same copy, staged rows already in place, timed on the device.
  GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kStart], t.stream));
  GRAPHTIER_CUDA_CHECK(
      cudaMemcpyAsync(t.staging_dev.data(), t.staging_host.data(), bytes, cudaMemcpyHostToDevice, t.stream));
  GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kServeDone], t.stream));
  GRAPHTIER_CUDA_CHECK(cudaEventSynchronize(t.events[kServeDone]));
  float link_ms = 0;
  GRAPHTIER_CUDA_CHECK(cudaEventElapsedTime(&link_ms, t.events[kStart], t.events[kServeDone]));
  p.link_rows_per_second = static_cast<double>(n) / std::max(1e-9, link_ms * 1e-3);
  p.zero_copy_fraction = zero_copy_fraction(p, p.tier_bytes);
  t.paths = p;
  log_info("pinned tier: zero-copy ", format_count(p.zero_copy_rows_per_second), " rows/s over ",
           format_count(p.tier_bytes), " B", p.near_span_bytes > 0 ? ", " : "",
           p.near_span_bytes > 0 ? format_count(p.near_zero_copy_rows_per_second) : std::string(),
           p.near_span_bytes > 0 ? " rows/s within 256 MiB" : "", "; CPU gather + copy ",
           format_count(p.cpu_copy_rows_per_second), " rows/s at ", t.row_bytes, " B rows; link ",
           format_count(p.link_rows_per_second), " rows/s; zero-copy share ",
           p.zero_copy_fraction, " over the whole tier");
}

}  // namespace

std::unique_ptr<GpuTiers, GpuTiersDeleter> make_gpu_tiers(const HostTiers& host, const TierLayout& tiers,
                                                          const FeatureStoreOptions& options) {
  const ::graphtier::cuda::CurrentDevice on_device(options.device);  // before `t`: a throw frees it on its device
  std::unique_ptr<GpuTiers, GpuTiersDeleter> t(new GpuTiers(options.device));
  t->gpu_end = tiers.ranges.gpu_end;
  t->row_bytes = host.layout().row_bytes();
  t->forced_path = options.pinned_path;
  for (cudaEvent_t& e : t->events) GRAPHTIER_CUDA_CHECK(cudaEventCreate(&e));
  for (cudaEvent_t& e : t->window_done) GRAPHTIER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  for (cudaEvent_t* e : {&t->staged_listed, &t->missed_listed, &t->copied, &t->output_ready}) {
    GRAPHTIER_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
  }
  // Checked against what is free before the tiers allocate: the hot rows, and the cache's lines
  // with their bookkeeping (at most 77 bytes per line, 4 per id of its range: architecture.md).
  const int64_t cache_rows = tiers.gpu_cache_rows;
  require_device_memory("the feature store's GPU tiers (hot rows and software cache)",
                        t->gpu_end * t->row_bytes +
                            (cache_rows > 0 ? cache_rows * (t->row_bytes + 77) + (host.num_nodes() - t->gpu_end) * 4 : 0),
                        t->device);
  if (t->gpu_end > 0) {
    t->hot = Buffer(MemoryKind::kDevice, static_cast<std::size_t>(t->gpu_end * t->row_bytes), t->device);
    load_hot_rows(*t, host.features_path(), host.layout(), t->gpu_end);
  }
  t->cache = DeviceCache(cache_rows, t->row_bytes, t->gpu_end, host.num_nodes(), t->device, t->stream);
  if (cache_rows > 0 && options.eviction != cache::Eviction::kClock) {
    log_info("GPU cache: eviction is CLOCK on the device; '", cache::eviction_name(options.eviction),
             "' applies to the host cache only");
  }
  t->counters_dev = Buffer(MemoryKind::kDevice, sizeof(CacheCounters), t->device);
  t->counters_host = Buffer(MemoryKind::kPinned, sizeof(CacheCounters), t->device);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(t->counters_dev.data(), 0, sizeof(CacheCounters), t->stream));
  if (host.rows().end() > host.rows().begin()) {
    void* mapped = nullptr;
    GRAPHTIER_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, const_cast<void*>(host.rows().buffer().data()), 0));
    t->host_tier_device = static_cast<const std::byte*>(mapped);
    measure_pinned_paths(*t, host);
  }
  // The pinned rows' split as a table of their span, evaluated on the device per request.
  const SplitTable table = t->forced_path == PinnedPath::kZeroCopy  ? uniform_split_table(kShareOne)
                           : t->forced_path == PinnedPath::kCpuCopy ? uniform_split_table(0)
                                                                    : split_table(t->paths);
  t->router = std::make_unique<DeviceRouter>(table, t->device, t->stream);
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(t->stream));
  return t;
}

// Announce (+1) or consume (-1): the ids cross once, through pinned memory, and the counts change
// on the device in stream order with the gathers' probes and updates. Returns the seconds the host
// waited for the device (the window's accounting, EpochStats::window_wait_seconds): for the upload
// from the same pinned buffer two calls ago, and, when the device buffer grows, for the stream.
double window(GpuTiers& t, std::span<const int64_t> ids, int32_t delta) {
  if (t.cache.lines() == 0 || ids.empty()) return 0;
  // The caller's thread (a loader's sampler) may drive another device.
  const ::graphtier::cuda::CurrentDevice on_device(t.device);
  const int i = t.window_next;
  t.window_next ^= 1;
  const auto start = std::chrono::steady_clock::now();
  // The upload from this buffer two calls ago must have left it before it is rewritten.
  GRAPHTIER_CUDA_CHECK(cudaEventSynchronize(t.window_done[i]));
  const std::size_t bytes = ids.size() * sizeof(int64_t);
  ensure(t.window_host[i], MemoryKind::kPinned, bytes, t.device);
  // The previous call's upload and kernels may still use window_dev, and cudaFree does not
  // promise to wait for queued work: drain the stream before it is replaced (growth only).
  if (t.window_dev.size() < bytes) GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(t.stream));
  const double waited = seconds_since(start);
  ensure(t.window_dev, MemoryKind::kDevice, bytes, t.device);
  std::copy(ids.begin(), ids.end(), static_cast<int64_t*>(t.window_host[i].data()));
  GRAPHTIER_CUDA_CHECK(
      cudaMemcpyAsync(t.window_dev.data(), t.window_host[i].data(), bytes, cudaMemcpyHostToDevice, t.stream));
  GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.window_done[i], t.stream));
  t.cache.window(static_cast<const int64_t*>(t.window_dev.data()), static_cast<int64_t>(ids.size()), delta, t.stream);
  return waited;
}

namespace {

// Rows of `list` (count then positions, mapped) gathered by the CPU into `host` (pinned), their
// ids collected from the caller's ids; then uploaded and scattered into `dst` on the copy stream.
// Returns the rows staged.
int64_t stage_rows(HostTiers& host_tiers, GpuTiers& t, std::span<const int64_t> ids, const PositionList& list,
                   Buffer& host, Buffer& device, std::byte* dst, GatherStats& stats) {
  const auto* listed = static_cast<const int64_t*>(list.host.data());
  const int64_t m = listed[0];
  GRAPHTIER_EXPECTS(m >= 0 && m <= static_cast<int64_t>(ids.size()), DeviceError, "the device listed ", m,
                    " positions to stage out of ", ids.size());
  if (m == 0) return 0;
  const int64_t rb = t.row_bytes;
  t.cpu_ids.resize(static_cast<std::size_t>(m));
  for (int64_t j = 0; j < m; ++j) t.cpu_ids[static_cast<std::size_t>(j)] = ids[static_cast<std::size_t>(listed[1 + j])];
  const auto bytes = static_cast<std::size_t>(m * rb);
  ensure(host, MemoryKind::kPinned, bytes, t.device);
  ensure(device, MemoryKind::kDevice, bytes, t.device);
  host_tiers.gather(t.cpu_ids, static_cast<std::byte*>(host.data()), stats);
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(device.data(), host.data(), bytes, cudaMemcpyHostToDevice, t.copy_stream));
  RowCopy c;
  c.src = static_cast<const std::byte*>(device.data());
  c.src_pitch = rb;
  c.dst = dst;
  c.dst_pitch = rb;
  c.dst_rows = list.device.get();  // the same positions, never overwritten before the gather ends
  c.row_bytes = rb;
  c.count = m;
  launch_copy_rows(c, t.copy_stream);
  return m;
}

// What the device did for one gather, from its counters and events, into `stats`: the serve
// kernel's time (with the routing before it) shared by the rows it served, in proportion; the
// cache update's added to the cache's.
void add_device_stats(GpuTiers& t, const CacheCounters& c, bool cached, GatherStats& stats) {
  const auto elapsed = [&](Event a, Event b) {
    float ms = 0;
    GRAPHTIER_CUDA_CHECK(cudaEventElapsedTime(&ms, t.events[a], t.events[b]));
    return static_cast<double>(ms) * 1e-3;
  };
  const double serve = elapsed(kStart, kServeDone);
  const auto served = static_cast<double>(std::max<int64_t>(1, c.hot_rows + c.hits + c.zero_copy_rows));
  const auto tier = [&](int64_t rows_served, double seconds) {
    return TierStats{rows_served, rows_served * t.row_bytes, seconds};
  };
  stats.gpu_hot += tier(c.hot_rows, serve * static_cast<double>(c.hot_rows) / served);
  stats.gpu_cache +=
      tier(c.hits, serve * static_cast<double>(c.hits) / served + (cached ? elapsed(kStagedDone, kUpdateDone) : 0.0));
  stats.host += tier(c.zero_copy_rows, serve * static_cast<double>(c.zero_copy_rows) / served);
  if (cached) {
    stats.cache_fills += c.fills;
    stats.cache_bypasses += c.bypasses;
    stats.gpu_cache_evictions += c.evictions;
  }
}

}  // namespace

const PinnedPaths& pinned_paths(const GpuTiers& t) { return t.paths; }

void gather(GpuTiers& t, HostTiers& host_tiers, std::span<const int64_t> ids, TensorView out, GatherStats& stats,
            const DeviceIds& device_ids, const CudaStream* output_after) {
  const int64_t n = static_cast<int64_t>(ids.size());
  const int64_t rb = t.row_bytes;
  const int64_t cpu_end = host_tiers.rows().end();
  const bool cached = t.cache.lines() > 0;
  // The kernels run on t.device: another GPU's memory is not theirs to write (no peer access).
  GRAPHTIER_EXPECTS(out.memory != MemoryKind::kDevice || out.device == t.device, InvalidArgument,
                    "gather output is on CUDA device ", out.device, ", the feature store's GPU tiers on device ",
                    t.device);
  const ::graphtier::cuda::CurrentDevice on_device(t.device);

  std::byte* dst = static_cast<std::byte*>(out.data);
  if (out.memory != MemoryKind::kDevice) {
    ensure(t.bounce, MemoryKind::kDevice, static_cast<std::size_t>(n * rb), t.device);
    dst = static_cast<std::byte*>(t.bounce.data());
  }
  // What the host must wait for is known from the store alone, before any id is looked at: the
  // staged positions when some rows can be staged (a pinned tier whose split can leave rows to the
  // CPU, storage rows without a cache), the missed positions when storage rows can miss the cache.
  const RouteBounds bounds{t.gpu_end, cpu_end, cached, host_tiers.num_nodes()};
  const bool pinned_tier = cpu_end > t.gpu_end;
  const bool storage_tier = cpu_end < host_tiers.num_nodes();
  const bool may_stage = (pinned_tier && t.router->splits_to_cpu()) || (storage_tier && !cached);
  const bool may_miss = cached && storage_tier;
  ensure(t.route_dev, MemoryKind::kDevice, static_cast<std::size_t>(n), t.device);
  auto* route = static_cast<uint8_t*>(t.route_dev.data());

  // Queued now: the ids up (unless the caller has them on the device), the routing, the staged
  // positions down, the serve kernel (hot rows, cache hits, zero-copy rows), the missed positions
  // down.
  if (output_after != nullptr && out.memory == MemoryKind::kDevice) {
    // The output is stream-ordered memory of `output_after`: both streams write it.
    GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.output_ready, ::graphtier::cuda::native(*output_after)));
    GRAPHTIER_CUDA_CHECK(cudaStreamWaitEvent(t.stream, t.output_ready, 0));
    GRAPHTIER_CUDA_CHECK(cudaStreamWaitEvent(t.copy_stream, t.output_ready, 0));
  }
  auto* counters = static_cast<CacheCounters*>(t.counters_dev.data());
  if (cached) {
    ensure(t.hit_dev, MemoryKind::kDevice, static_cast<std::size_t>(n), t.device);
    t.cache.rebuild_if_needed(t.tombstones, counters, t.stream);
  }
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(counters, 0, offsetof(CacheCounters, tombstones), t.stream));
  GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kStart], t.stream));
  const bool ids_on_device = device_ids.data != nullptr && device_ids.device == t.device;
  const int64_t* ids_dev = device_ids.data;
  if (!ids_on_device) {
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(int64_t);
    ensure(t.index_host, MemoryKind::kPinned, bytes, t.device);
    ensure(t.index_dev, MemoryKind::kDevice, bytes, t.device);
    std::copy(ids.begin(), ids.end(), static_cast<int64_t*>(t.index_host.data()));
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(t.index_dev.data(), t.index_host.data(), bytes, cudaMemcpyHostToDevice, t.stream));
    ids_dev = static_cast<const int64_t*>(t.index_dev.data());
  }
  // A store that stages nothing routes in the serve kernel (route_alone): no census, quota or
  // route pass before it.
  const bool route_here = !may_stage;
  if (!route_here) t.router->route(ids_dev, n, bounds, host_tiers.rows().row_stride(), route, t.stream);
  if (may_stage) {
    t.router->select_staged(route, n, t.staged, t.stream);
    GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.staged_listed, t.stream));
  }
  ServeRows rows;
  rows.ids = ids_dev;
  rows.route = route;
  rows.route_here = route_here;
  rows.bounds = bounds;
  rows.n = n;
  rows.hot = static_cast<const std::byte*>(t.hot.data());
  rows.pinned = t.host_tier_device;
  rows.pinned_begin = host_tiers.rows().begin();
  rows.pinned_pitch = host_tiers.rows().row_stride();
  rows.out = dst;
  rows.row_bytes = rb;
  rows.hit = cached ? static_cast<uint8_t*>(t.hit_dev.data()) : nullptr;
  ++t.stamp;
  t.cache.serve(rows, t.stamp, counters, t.stream);
  GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kServeDone], t.stream));
  if (may_miss) {
    t.router->select_missed(route, rows.hit, n, t.missed, t.stream);
    GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.missed_listed, t.stream));
  }

  try {
    // While the serve kernel runs: the CPU half of the pinned rows (and storage rows when there is
    // no GPU cache) into pinned staging, up and scattered on the copy stream. The serve kernel
    // writes no staged position, so the two streams never write the same output row.
    int64_t staged_rows = 0;
    if (may_stage) {
      GRAPHTIER_CUDA_CHECK(cudaEventSynchronize(t.staged_listed));
      staged_rows += stage_rows(host_tiers, t, ids, t.staged, t.staging_host, t.staging_dev, dst, stats);
    }
    // Storage rows with a GPU cache: the host reads only those the cache missed (the gather's
    // mid-way wait).
    int64_t missed_rows = 0;
    if (may_miss) {
      GRAPHTIER_CUDA_CHECK(cudaEventSynchronize(t.missed_listed));
      missed_rows = stage_rows(host_tiers, t, ids, t.missed, t.missed_host, t.missed_dev, dst, stats);
      staged_rows += missed_rows;
    }
    if (staged_rows > 0) {
      GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.copied, t.copy_stream));
      GRAPHTIER_CUDA_CHECK(cudaStreamWaitEvent(t.stream, t.copied, 0));
    }
    // Every output row has landed: the batched cache update (misses -> lines) reads them. Without
    // a pinned tier only storage positions can miss, and the host knows there were none. (Its two
    // events only with a cache: each call is a few microseconds of a gather's fixed cost.)
    if (cached) {
      GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kStagedDone], t.stream));
      if (!(may_miss && !pinned_tier && missed_rows == 0)) t.cache.update(rows, t.stamp, counters, t.stream);
      GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kUpdateDone], t.stream));
    }
    if (out.memory != MemoryKind::kDevice) {
      GRAPHTIER_CUDA_CHECK(
          cudaMemcpyAsync(out.data, dst, static_cast<std::size_t>(n * rb), cudaMemcpyDeviceToHost, t.stream));
    }
    GRAPHTIER_CUDA_CHECK(
        cudaMemcpyAsync(t.counters_host.data(), counters, sizeof(CacheCounters), cudaMemcpyDeviceToHost, t.stream));
    GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(t.stream));
  } catch (...) {
    // Nothing to undo: the update, the only step that gives lines to keys, runs after every row
    // has landed, so a gather that throws before it leaves no line claiming a row.
    cudaStreamSynchronize(t.copy_stream);
    cudaStreamSynchronize(t.stream);
    throw;
  }

  CacheCounters c;
  std::memcpy(&c, t.counters_host.data(), sizeof(c));
  t.tombstones = c.tombstones;
  if (c.invalid_ids > 0) {
    // Ids checked on the device (none on the host before): the host copy names the first bad one.
    check_ids(ids, host_tiers.num_nodes());
    throw DeviceError(detail::concat("the device found ", c.invalid_ids, " ids outside [0, ", host_tiers.num_nodes(),
                                     ") that the host copy of the ids does not hold: the two copies differ"));
  }
  add_device_stats(t, c, cached, stats);
}

}  // namespace graphtier::feature::cuda
