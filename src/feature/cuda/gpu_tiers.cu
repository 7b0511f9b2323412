#include <cuda_runtime.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <limits>
#include <mutex>
#include <vector>

#include "cuda_check.cuh"
#include "current_device.cuh"
#include "cuda_stream.cuh"
#include "cpu/gather_cpu.hpp"
#include "cuda/copy_rows.cuh"
#include "cuda/gpu_cache.cuh"
#include "cuda/gpu_tiers.hpp"
#include "graphtier/core/cuda_stream.hpp"
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

// Synchronisation budget of one gather (docs/architecture.md, "GPU software cache"): one
// stream synchronisation at the end (the output is complete when gather returns), plus one in the
// middle only when a GPU cache exists and the request holds storage-tier rows (the host must learn
// which of them missed before it reads them). No allocation in steady state: every buffer below
// grows geometrically and is kept, device scratch comes from the stream-ordered pool.
struct GpuTiers {
  explicit GpuTiers(int device)
      : device(device), owned_stream(device), stream(::graphtier::cuda::native(owned_stream.get())) {}

  int device = 0;
  int64_t gpu_end = 0;
  int64_t row_bytes = 0;
  OwnedCudaStream owned_stream;  // declared before the buffers: destroyed after they are freed
  cudaStream_t stream = nullptr;
  cudaEvent_t events[kNumEvents] = {};
  // announce/consume alternate between two pinned buffers: the upload from one has usually left
  // it long before it is rewritten, so the wait on its event is rarely a wait.
  cudaEvent_t window_done[2] = {};  // the upload from window_host[i] has left it
  int window_next = 0;
  Buffer hot;                         // device, [gpu_end, row_bytes]
  DeviceCache cache;                  // the GPU software cache (0 lines: none)
  const std::byte* host_tier_device = nullptr;  // the pinned host tier as the GPU addresses it
  Buffer index_host;    // pinned: ids [n] then routes [n] of one gather, one transfer
  Buffer index_dev;
  Buffer staged_host;   // pinned: output positions of the staged rows
  Buffer staged_dev;
  Buffer hit_host;      // pinned: the serve kernel's hit flags, when the host needs them
  Buffer hit_dev;
  Buffer staging_host;  // pinned: rows gathered by the CPU
  Buffer staging_dev;
  Buffer bounce;        // device output for a gather into host memory
  Buffer counters_dev;  // CacheCounters
  Buffer counters_host; // pinned copy, read after the final synchronisation
  Buffer window_host[2];  // pinned: the ids of one announce/consume
  Buffer window_dev;
  PinnedPaths paths;
  PinnedPath forced_path = PinnedPath::kMeasured;
  uint32_t stamp = 0;       // gathers so far: the use stamp of this one's lines
  int64_t tombstones = 0;   // the table's, as of the last gather
  // Host-side lists of one gather: rows the CPU stages, and their output positions.
  std::vector<int64_t> cpu_ids, cpu_pos;

  ~GpuTiers() {
    cudaStreamSynchronize(stream);
    for (cudaEvent_t e : events) {
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
double time_zero_copy(GpuTiers& t, FeatureStore::Impl& store, const std::vector<int64_t>& ids) {
  const auto n = static_cast<int64_t>(ids.size());
  ensure(t.index_host, MemoryKind::kPinned, ids.size() * sizeof(int64_t), t.device);
  ensure(t.index_dev, MemoryKind::kDevice, ids.size() * sizeof(int64_t), t.device);
  ensure(t.staging_dev, MemoryKind::kDevice, static_cast<std::size_t>(n * t.row_bytes), t.device);
  std::copy(ids.begin(), ids.end(), static_cast<int64_t*>(t.index_host.data()));
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(t.index_dev.data(), t.index_host.data(), ids.size() * sizeof(int64_t),
                                       cudaMemcpyHostToDevice, t.stream));
  RowCopy zc;
  zc.src = t.host_tier_device;
  zc.src_pitch = store.host.row_stride();
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
// CPU gather + copy over the whole tier's rows (its rate hardly depends on the span), and fills
// store.tiers.pinned_paths (pinned_split.hpp).
void measure_pinned_paths(GpuTiers& t, FeatureStore::Impl& store) {
  const int64_t begin = store.host.begin();
  const int64_t rows = store.host.end() - begin;
  if (rows == 0) return;
  const int64_t stride = store.host.row_stride();
  const int64_t n = std::min(rows, kCalibrationRows);
  const auto random_rows = [&](int64_t within, uint64_t stream) {
    std::vector<int64_t> ids(static_cast<std::size_t>(n));
    for (int64_t k = 0; k < n; ++k) ids[k] = static_cast<int64_t>(bounded_u64(philox_u64(0x9e37, stream, k), within));
    return ids;
  };
  PinnedPaths& p = store.tiers.pinned_paths;
  p.tier_bytes = static_cast<double>(rows * stride);
  const std::vector<int64_t> ids = random_rows(rows, 0);
  p.zero_copy_rows_per_second = time_zero_copy(t, store, ids);
  const int64_t near_rows = kNearSpanBytes / stride;
  if (near_rows > 0 && near_rows * 2 <= rows) {
    p.near_span_bytes = static_cast<double>(near_rows * stride);
    p.near_zero_copy_rows_per_second = time_zero_copy(t, store, random_rows(near_rows, 1));
  }

  const auto bytes = static_cast<std::size_t>(n * t.row_bytes);
  ensure(t.staging_host, MemoryKind::kPinned, bytes, t.device);
  const auto cpu_copy = [&] {
    auto* staged = static_cast<std::byte*>(t.staging_host.data());
    store.pool.parallel_for(0, n, 256, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        std::memcpy(staged + k * t.row_bytes, store.host.row(begin + ids[k]), static_cast<std::size_t>(t.row_bytes));
      }
    });
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(t.staging_dev.data(), staged, bytes, cudaMemcpyHostToDevice, t.stream));
    GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(t.stream));
  };
  cpu_copy();  // warm-up
  const auto start = std::chrono::steady_clock::now();
  cpu_copy();
  p.cpu_copy_rows_per_second = static_cast<double>(n) / std::max(1e-9, seconds_since(start));
  p.zero_copy_fraction = zero_copy_fraction(p, p.tier_bytes);
  t.paths = p;
  log_info("pinned tier: zero-copy ", format_count(p.zero_copy_rows_per_second), " rows/s over ",
           format_count(p.tier_bytes), " B", p.near_span_bytes > 0 ? ", " : "",
           p.near_span_bytes > 0 ? format_count(p.near_zero_copy_rows_per_second) : std::string(),
           p.near_span_bytes > 0 ? " rows/s within 256 MiB" : "", "; CPU gather + copy ",
           format_count(p.cpu_copy_rows_per_second), " rows/s at ", t.row_bytes, " B rows; zero-copy share ",
           p.zero_copy_fraction, " over the whole tier");
}

}  // namespace

std::unique_ptr<GpuTiers, GpuTiersDeleter> make_gpu_tiers(FeatureStore::Impl& store, const FeatureStoreOptions& options) {
  const ::graphtier::cuda::CurrentDevice on_device(options.device);  // before `t`: a throw frees it on its device
  std::unique_ptr<GpuTiers, GpuTiersDeleter> t(new GpuTiers(options.device));
  t->gpu_end = store.tiers.ranges.gpu_end;
  t->row_bytes = store.layout.row_bytes();
  t->forced_path = options.pinned_path;
  for (cudaEvent_t& e : t->events) GRAPHTIER_CUDA_CHECK(cudaEventCreate(&e));
  for (cudaEvent_t& e : t->window_done) GRAPHTIER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  if (t->gpu_end > 0) {
    t->hot = Buffer(MemoryKind::kDevice, static_cast<std::size_t>(t->gpu_end * t->row_bytes), t->device);
    load_hot_rows(*t, store.features_path, store.layout, t->gpu_end);
  }
  t->cache = DeviceCache(store.tiers.gpu_cache_rows, t->row_bytes, t->gpu_end, store.num_nodes, t->device, t->stream);
  if (store.tiers.gpu_cache_rows > 0 && options.eviction != cache::Eviction::kClock) {
    log_info("GPU cache: eviction is CLOCK on the device; '", cache::eviction_name(options.eviction),
             "' applies to the host cache only");
  }
  t->counters_dev = Buffer(MemoryKind::kDevice, sizeof(CacheCounters), t->device);
  t->counters_host = Buffer(MemoryKind::kPinned, sizeof(CacheCounters), t->device);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(t->counters_dev.data(), 0, sizeof(CacheCounters), t->stream));
  if (store.host.end() > store.host.begin()) {
    void* mapped = nullptr;
    GRAPHTIER_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, const_cast<void*>(store.host.buffer().data()), 0));
    t->host_tier_device = static_cast<const std::byte*>(mapped);
    measure_pinned_paths(*t, store);
  }
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(t->stream));
  return t;
}

namespace {

// Announce (+1) or consume (-1): the ids cross once, through pinned memory, and the counts change
// on the device in stream order with the gathers' probes and updates.
void window(GpuTiers& t, std::span<const int64_t> ids, int32_t delta) {
  if (t.cache.lines() == 0 || ids.empty()) return;
  // The caller's thread (a loader's sampler) may drive another device.
  const ::graphtier::cuda::CurrentDevice on_device(t.device);
  const int i = t.window_next;
  t.window_next ^= 1;
  // The upload from this buffer two calls ago must have left it before it is rewritten.
  GRAPHTIER_CUDA_CHECK(cudaEventSynchronize(t.window_done[i]));
  const std::size_t bytes = ids.size() * sizeof(int64_t);
  ensure(t.window_host[i], MemoryKind::kPinned, bytes, t.device);
  // The previous call's upload and kernels may still use window_dev, and cudaFree does not
  // promise to wait for queued work: drain the stream before it is replaced (growth only).
  if (t.window_dev.size() < bytes) GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(t.stream));
  ensure(t.window_dev, MemoryKind::kDevice, bytes, t.device);
  std::copy(ids.begin(), ids.end(), static_cast<int64_t*>(t.window_host[i].data()));
  GRAPHTIER_CUDA_CHECK(
      cudaMemcpyAsync(t.window_dev.data(), t.window_host[i].data(), bytes, cudaMemcpyHostToDevice, t.stream));
  GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.window_done[i], t.stream));
  t.cache.window(static_cast<const int64_t*>(t.window_dev.data()), static_cast<int64_t>(ids.size()), delta, t.stream);
}

}  // namespace

void announce(GpuTiers& t, std::span<const int64_t> ids) { window(t, ids, +1); }
void consume(GpuTiers& t, std::span<const int64_t> ids) { window(t, ids, -1); }

void gather(FeatureStore::Impl& store, std::span<const int64_t> ids, TensorView out, GatherStats& stats,
            const DeviceIds& device_ids) {
  GpuTiers& t = *store.gpu;
  const int64_t n = static_cast<int64_t>(ids.size());
  const int64_t rb = t.row_bytes;
  const int64_t cpu_end = store.tiers.ranges.cpu_end;
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

  // Route every position by the static comparisons alone; the pinned rows' span decides their
  // split between zero-copy and the CPU (pinned_split.hpp).
  const std::size_t route_offset = static_cast<std::size_t>(n) * sizeof(int64_t);
  const std::size_t index_bytes = route_offset + static_cast<std::size_t>(n);
  ensure(t.index_host, MemoryKind::kPinned, index_bytes, t.device);
  ensure(t.index_dev, MemoryKind::kDevice, index_bytes, t.device);
  auto* ids_h = static_cast<int64_t*>(t.index_host.data());
  auto* route_h = static_cast<uint8_t*>(t.index_host.data()) + route_offset;
  int64_t hot_rows = 0;
  int64_t pinned_rows = 0;
  int64_t probe_rows = 0;
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = -1;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t id = ids[k];
    ids_h[k] = id;
    if (id < t.gpu_end) {
      ++hot_rows;
    } else if (id < cpu_end) {
      ++pinned_rows;
      lo = std::min(lo, id);
      hi = std::max(hi, id);
    }
  }
  const double span = pinned_rows > 0 ? static_cast<double>((hi - lo + 1) * store.host.row_stride()) : 0.0;
  const double fraction = t.forced_path == PinnedPath::kZeroCopy  ? 1.0
                          : t.forced_path == PinnedPath::kCpuCopy ? 0.0
                                                                  : zero_copy_fraction(t.paths, span);
  const auto zero_copy_quota = static_cast<int64_t>(fraction * static_cast<double>(pinned_rows) + 0.5);
  t.cpu_ids.clear();
  t.cpu_pos.clear();
  int64_t pinned_seen = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t id = ids[k];
    uint8_t route = kRouteStaged;
    if (id < t.gpu_end) {
      route = kRouteHot;
    } else if (id < cpu_end) {
      if (pinned_seen++ < zero_copy_quota) {
        route = kRouteZeroCopy;
      } else if (cached) {
        route = kRouteStagedProbe;
      }
    } else if (cached) {
      route = kRouteProbe;
      ++probe_rows;
    }
    route_h[k] = route;
    if (route == kRouteStaged || route == kRouteStagedProbe) {
      t.cpu_ids.push_back(id);
      t.cpu_pos.push_back(k);
    }
  }

  // Queued now: one upload, the serve kernel (hot rows, cache hits, zero-copy rows).
  auto* counters = static_cast<CacheCounters*>(t.counters_dev.data());
  if (cached) {
    ensure(t.hit_dev, MemoryKind::kDevice, static_cast<std::size_t>(n), t.device);
    t.cache.rebuild_if_needed(t.tombstones, counters, t.stream);
  }
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(counters, 0, offsetof(CacheCounters, tombstones), t.stream));
  GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kStart], t.stream));
  // The ids are on the device already when the caller says so: only the routes go up.
  const bool ids_on_device = device_ids.data != nullptr && device_ids.device == t.device;
  const std::size_t upload_from = ids_on_device ? route_offset : 0;
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(static_cast<std::byte*>(t.index_dev.data()) + upload_from,
                                       static_cast<const std::byte*>(t.index_host.data()) + upload_from,
                                       index_bytes - upload_from, cudaMemcpyHostToDevice, t.stream));
  ServeRows rows;
  rows.ids = ids_on_device ? device_ids.data : static_cast<const int64_t*>(t.index_dev.data());
  rows.route = static_cast<const uint8_t*>(t.index_dev.data()) + route_offset;
  rows.n = n;
  rows.hot = static_cast<const std::byte*>(t.hot.data());
  rows.pinned = t.host_tier_device;
  rows.pinned_begin = store.host.begin();
  rows.pinned_pitch = store.host.row_stride();
  rows.out = dst;
  rows.row_bytes = rb;
  rows.hit = cached ? static_cast<uint8_t*>(t.hit_dev.data()) : nullptr;
  ++t.stamp;
  t.cache.serve(rows, t.stamp, counters, t.stream);
  GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kServeDone], t.stream));

  try {
    // While the kernel runs: the CPU half of the pinned rows (and storage rows when there is no
    // GPU cache) into pinned staging.
    const std::size_t first_staged = t.cpu_ids.size();
    ensure(t.staging_host, MemoryKind::kPinned,
           std::max<std::size_t>(1, first_staged + static_cast<std::size_t>(probe_rows)) * static_cast<std::size_t>(rb),
           t.device);
    auto* staging = static_cast<std::byte*>(t.staging_host.data());
    if (first_staged > 0) cpu::gather_host(store, t.cpu_ids, staging, stats);
    // Storage rows with a GPU cache: the host reads only those the cache missed, so it waits for
    // the serve kernel's hit flags (the gather's one mid-way synchronisation).
    if (probe_rows > 0) {
      ensure(t.hit_host, MemoryKind::kPinned, static_cast<std::size_t>(n), t.device);
      GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(t.hit_host.data(), t.hit_dev.data(), static_cast<std::size_t>(n),
                                           cudaMemcpyDeviceToHost, t.stream));
      GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(t.stream));
      const auto* hit = static_cast<const uint8_t*>(t.hit_host.data());
      for (int64_t k = 0; k < n; ++k) {
        if (route_h[k] == kRouteProbe && hit[k] == 0) {
          t.cpu_ids.push_back(ids[k]);
          t.cpu_pos.push_back(k);
        }
      }
      if (t.cpu_ids.size() > first_staged) {
        cpu::gather_host(store, std::span<const int64_t>(t.cpu_ids).subspan(first_staged),
                         staging + first_staged * static_cast<std::size_t>(rb), stats);
      }
    }
    // The staged rows and their positions up, then scattered into the output.
    const std::size_t staged = t.cpu_ids.size();
    if (staged > 0) {
      const auto staged_bytes = staged * static_cast<std::size_t>(rb);
      ensure(t.staging_dev, MemoryKind::kDevice, staged_bytes, t.device);
      ensure(t.staged_host, MemoryKind::kPinned, staged * sizeof(int64_t), t.device);
      ensure(t.staged_dev, MemoryKind::kDevice, staged * sizeof(int64_t), t.device);
      std::copy(t.cpu_pos.begin(), t.cpu_pos.end(), static_cast<int64_t*>(t.staged_host.data()));
      GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(t.staged_dev.data(), t.staged_host.data(), staged * sizeof(int64_t),
                                           cudaMemcpyHostToDevice, t.stream));
      GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(t.staging_dev.data(), staging, staged_bytes, cudaMemcpyHostToDevice, t.stream));
      RowCopy c;
      c.src = static_cast<const std::byte*>(t.staging_dev.data());
      c.src_pitch = rb;
      c.dst = dst;
      c.dst_pitch = rb;
      c.dst_rows = static_cast<const int64_t*>(t.staged_dev.data());
      c.row_bytes = rb;
      c.count = static_cast<int64_t>(staged);
      launch_copy_rows(c, t.stream);
    }
    GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kStagedDone], t.stream));
    // Every output row has landed: the batched cache update (misses -> lines) reads them.
    t.cache.update(rows, t.stamp, counters, t.stream);
    GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kUpdateDone], t.stream));
    if (out.memory != MemoryKind::kDevice) {
      GRAPHTIER_CUDA_CHECK(
          cudaMemcpyAsync(out.data, dst, static_cast<std::size_t>(n * rb), cudaMemcpyDeviceToHost, t.stream));
    }
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(t.counters_host.data(), counters, sizeof(CacheCounters), cudaMemcpyDeviceToHost,
                                         t.stream));
    GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(t.stream));
  } catch (...) {
    // Nothing to undo: the update, the only step that gives lines to keys, runs after every row
    // has landed, so a gather that throws before it leaves no line claiming a row.
    cudaStreamSynchronize(t.stream);
    throw;
  }

  const auto elapsed = [&](Event a, Event b) {
    float ms = 0;
    GRAPHTIER_CUDA_CHECK(cudaEventElapsedTime(&ms, t.events[a], t.events[b]));
    return static_cast<double>(ms) * 1e-3;
  };
  const CacheCounters c = *static_cast<const CacheCounters*>(t.counters_host.data());
  t.tombstones = c.tombstones;
  // The serve kernel's time is shared by the rows it served, in proportion.
  const double serve = elapsed(kStart, kServeDone);
  const auto served = static_cast<double>(std::max<int64_t>(1, hot_rows + c.hits + c.zero_copy_rows));
  const auto tier = [&](int64_t rows_served, double seconds) { return TierStats{rows_served, rows_served * rb, seconds}; };
  stats.gpu_hot += tier(hot_rows, serve * static_cast<double>(hot_rows) / served);
  stats.gpu_cache += tier(c.hits, serve * static_cast<double>(c.hits) / served + elapsed(kStagedDone, kUpdateDone));
  stats.host += tier(c.zero_copy_rows, serve * static_cast<double>(c.zero_copy_rows) / served);
  if (cached) {
    stats.cache_fills += c.fills;
    stats.cache_bypasses += c.bypasses;
    stats.gpu_cache_evictions += c.evictions;
  }
}

}  // namespace graphtier::feature::cuda
