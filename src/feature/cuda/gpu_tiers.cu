#include <cuda_runtime.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <vector>

#include "cuda_check.cuh"
#include "cuda_stream.cuh"
#include "cpu/gather_cpu.hpp"
#include "cuda/copy_rows.cuh"
#include "cuda/gpu_tiers.hpp"
#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/rng.hpp"

namespace graphtier::feature::cuda {

namespace {

enum Event { kStart, kHotDone, kZeroCopyDone, kStagedDone, kFillDone, kHitDone, kNumEvents };

// Rows sampled to measure the two pinned-tier paths at start-up.
constexpr int64_t kCalibrationRows = 16384;
// Beyond this ratio the slower path is not worth the split's bookkeeping.
constexpr double kSplitRatio = 8.0;

void ensure(Buffer& buffer, MemoryKind kind, std::size_t bytes, int device) {
  if (buffer.size() >= bytes) return;
  buffer = Buffer(kind, std::max(bytes, buffer.size() * 2), device);
}

}  // namespace

struct GpuTiers {
  explicit GpuTiers(int device)
      : device(device), owned_stream(device), stream(::graphtier::cuda::native(owned_stream.get())) {}

  int device = 0;
  int64_t gpu_end = 0;
  int64_t row_bytes = 0;
  OwnedCudaStream owned_stream;  // declared before the buffers: destroyed after they are freed
  cudaStream_t stream = nullptr;
  cudaEvent_t events[kNumEvents] = {};
  Buffer hot;          // device, [gpu_end, row_bytes]
  Buffer cache_lines;  // device, [lines, row_bytes]
  cache::CachePolicy policy{0, cache::Eviction::kClock};
  const std::byte* host_tier_device = nullptr;  // the pinned host tier as the GPU addresses it
  Buffer index_host;   // pinned: every index array of one gather, copied in one transfer
  Buffer index_dev;
  Buffer staging_host;  // pinned: rows gathered by the CPU
  Buffer staging_dev;
  Buffer bounce;        // device output for a gather into host memory
  double zero_copy_fraction = 0;
  PinnedPath forced_path = PinnedPath::kMeasured;
  // Host-side lists of one gather.
  std::vector<int64_t> hot_src, hot_dst, zc_src, zc_dst, cpu_ids, cpu_dst, fill_src, fill_dst, hit_src, hit_dst;
  std::vector<int64_t> keys, slots;
  std::vector<cache::LookupKind> kinds;

  ~GpuTiers() {
    cudaStreamSynchronize(stream);
    for (cudaEvent_t e : events) {
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

// Times both paths of the pinned tier on the same random rows and sets the split.
void measure_pinned_paths(GpuTiers& t, FeatureStore::Impl& store) {
  const int64_t begin = store.host.begin();
  const int64_t rows = store.host.end() - begin;
  if (rows == 0) return;
  const int64_t n = std::min(rows, kCalibrationRows);
  std::vector<int64_t> ids(static_cast<std::size_t>(n));
  for (int64_t k = 0; k < n; ++k) ids[k] = static_cast<int64_t>(bounded_u64(philox_u64(0x9e37, 0, k), rows));
  const auto bytes = static_cast<std::size_t>(n * t.row_bytes);
  ensure(t.index_dev, MemoryKind::kDevice, ids.size() * sizeof(int64_t), t.device);
  ensure(t.staging_host, MemoryKind::kPinned, bytes, t.device);
  ensure(t.staging_dev, MemoryKind::kDevice, bytes, t.device);
  // On the tiers' stream: a cudaMemcpy from pageable memory may return before its DMA has landed,
  // and the non-blocking stream would not wait for the legacy stream's copy.
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(t.index_dev.data(), ids.data(), ids.size() * sizeof(int64_t),
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
  GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kHotDone], t.stream));
  GRAPHTIER_CUDA_CHECK(cudaEventSynchronize(t.events[kHotDone]));
  float zc_ms = 0;
  GRAPHTIER_CUDA_CHECK(cudaEventElapsedTime(&zc_ms, t.events[kStart], t.events[kHotDone]));

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
  const double cpu_seconds = seconds_since(start);

  PinnedPaths& p = store.tiers.pinned_paths;
  p.zero_copy_rows_per_second = static_cast<double>(n) / std::max(1e-9, zc_ms * 1e-3);
  p.cpu_copy_rows_per_second = static_cast<double>(n) / std::max(1e-9, cpu_seconds);
  const double zc_rate = p.zero_copy_rows_per_second;
  const double cpu_rate = p.cpu_copy_rows_per_second;
  p.zero_copy_fraction = zc_rate > kSplitRatio * cpu_rate   ? 1.0
                         : cpu_rate > kSplitRatio * zc_rate ? 0.0
                                                            : zc_rate / (zc_rate + cpu_rate);
  t.zero_copy_fraction = t.forced_path == PinnedPath::kZeroCopy ? 1.0
                         : t.forced_path == PinnedPath::kCpuCopy ? 0.0
                                                                 : p.zero_copy_fraction;
  log_info("pinned tier: zero-copy ", format_count(zc_rate), " rows/s, CPU gather + copy ", format_count(cpu_rate),
           " rows/s at ", t.row_bytes, " B rows; zero-copy share ", p.zero_copy_fraction);
}

}  // namespace

std::unique_ptr<GpuTiers, GpuTiersDeleter> make_gpu_tiers(FeatureStore::Impl& store, const FeatureStoreOptions& options) {
  std::unique_ptr<GpuTiers, GpuTiersDeleter> t(new GpuTiers(options.device));
  t->gpu_end = store.tiers.ranges.gpu_end;
  t->row_bytes = store.layout.row_bytes();
  t->forced_path = options.pinned_path;
  GRAPHTIER_CUDA_CHECK(cudaSetDevice(t->device));
  for (cudaEvent_t& e : t->events) GRAPHTIER_CUDA_CHECK(cudaEventCreate(&e));
  if (t->gpu_end > 0) {
    t->hot = Buffer(MemoryKind::kDevice, static_cast<std::size_t>(t->gpu_end * t->row_bytes), t->device);
    load_hot_rows(*t, store.features_path, store.layout, t->gpu_end);
  }
  if (store.tiers.gpu_cache_rows > 0) {
    t->cache_lines = Buffer(MemoryKind::kDevice, static_cast<std::size_t>(store.tiers.gpu_cache_rows * t->row_bytes), t->device);
    t->policy = cache::CachePolicy(store.tiers.gpu_cache_rows, options.eviction, options.seed + 1);
  }
  if (store.host.end() > store.host.begin()) {
    void* mapped = nullptr;
    GRAPHTIER_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, const_cast<void*>(store.host.buffer().data()), 0));
    t->host_tier_device = static_cast<const std::byte*>(mapped);
    measure_pinned_paths(*t, store);
  }
  return t;
}

void announce(GpuTiers& t, std::span<const int64_t> ids) {
  if (t.policy.num_slots() > 0) t.policy.announce(ids);
}

void consume(GpuTiers& t, std::span<const int64_t> ids) {
  if (t.policy.num_slots() > 0) t.policy.consume(ids);
}

void gather(FeatureStore::Impl& store, std::span<const int64_t> ids, TensorView out, GatherStats& stats) {
  GpuTiers& t = *store.gpu;
  const int64_t n = static_cast<int64_t>(ids.size());
  const int64_t rb = t.row_bytes;
  const int64_t cpu_end = store.tiers.ranges.cpu_end;
  // The kernels run on t.device: another GPU's memory is not theirs to write (no peer access).
  GRAPHTIER_EXPECTS(out.memory != MemoryKind::kDevice || out.device == t.device, InvalidArgument,
                    "gather output is on CUDA device ", out.device, ", the feature store's GPU tiers on device ",
                    t.device);
  GRAPHTIER_CUDA_CHECK(cudaSetDevice(t.device));

  std::byte* dst = static_cast<std::byte*>(out.data);
  if (out.memory != MemoryKind::kDevice) {
    ensure(t.bounce, MemoryKind::kDevice, static_cast<std::size_t>(n * rb), t.device);
    dst = static_cast<std::byte*>(t.bounce.data());
  }

  // Route every position: hot tier, GPU cache hit, or a miss served by the pinned tier (zero-copy
  // or CPU) or storage (CPU); a miss given a cache line is copied into it once it has landed.
  for (auto* v : {&t.hot_src, &t.hot_dst, &t.zc_src, &t.zc_dst, &t.cpu_ids, &t.cpu_dst, &t.fill_src, &t.fill_dst,
                  &t.hit_src, &t.hit_dst}) {
    v->clear();
  }
  t.keys.clear();
  std::vector<int64_t> key_pos;
  for (int64_t k = 0; k < n; ++k) {
    if (ids[k] < t.gpu_end) {
      t.hot_src.push_back(ids[k]);
      t.hot_dst.push_back(k);
    } else {
      t.keys.push_back(ids[k]);
      key_pos.push_back(k);
    }
  }
  const std::size_t m = t.keys.size();
  t.slots.assign(m, -1);
  t.kinds.assign(m, cache::LookupKind::kBypass);
  cache::LookupCounts counts{0, 0, static_cast<int64_t>(m)};
  if (t.policy.num_slots() > 0 && m > 0) {
    const std::lock_guard lock(store.policy_mutex);  // only for the lookup (feature_store_impl.hpp)
    counts = t.policy.lookup(t.keys, t.slots, t.kinds);
  }
  // From the lookup on, whatever throws must free the lines given to this gather's fills.
  try {
    std::vector<int64_t> host_miss_pos;  // misses inside the pinned tier
    for (std::size_t i = 0; i < m; ++i) {
      const int64_t k = key_pos[i];
      if (t.kinds[i] == cache::LookupKind::kHit) {
        t.hit_src.push_back(t.slots[i]);
        t.hit_dst.push_back(k);
        continue;
      }
      if (t.kinds[i] == cache::LookupKind::kFill) {
        t.fill_src.push_back(k);
        t.fill_dst.push_back(t.slots[i]);
      }
      if (t.keys[i] < cpu_end) {
        host_miss_pos.push_back(k);
      } else {
        t.cpu_ids.push_back(t.keys[i]);
        t.cpu_dst.push_back(k);
      }
    }
    // The split measured at start-up: the first share of the pinned rows goes to zero-copy.
    const auto zc_rows =
        static_cast<std::size_t>(t.zero_copy_fraction * static_cast<double>(host_miss_pos.size()) + 0.5);
    for (std::size_t j = 0; j < host_miss_pos.size(); ++j) {
      const int64_t k = host_miss_pos[j];
      if (j < zc_rows) {
        t.zc_src.push_back(ids[k] - store.host.begin());
        t.zc_dst.push_back(k);
      } else {
        t.cpu_ids.push_back(ids[k]);
        t.cpu_dst.push_back(k);
      }
    }

    // Every index array in one pinned buffer and one transfer.
    std::vector<std::vector<int64_t>*> lists{&t.hot_src, &t.hot_dst, &t.zc_src, &t.zc_dst, &t.cpu_dst,
                                             &t.fill_src, &t.fill_dst, &t.hit_src, &t.hit_dst};
    std::size_t total = 0;
    for (const auto* v : lists) total += v->size();
    ensure(t.index_host, MemoryKind::kPinned, std::max<std::size_t>(1, total) * sizeof(int64_t), t.device);
    ensure(t.index_dev, MemoryKind::kDevice, std::max<std::size_t>(1, total) * sizeof(int64_t), t.device);
    std::vector<const int64_t*> dev_ptr;
    {
      auto* host_idx = static_cast<int64_t*>(t.index_host.data());
      auto* dev_idx = static_cast<int64_t*>(t.index_dev.data());
      std::size_t at = 0;
      for (const auto* v : lists) {
        std::copy(v->begin(), v->end(), host_idx + at);
        dev_ptr.push_back(dev_idx + at);
        at += v->size();
      }
    }
    GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kStart], t.stream));
    if (total > 0) {
      GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(t.index_dev.data(), t.index_host.data(), total * sizeof(int64_t),
                                                   cudaMemcpyHostToDevice, t.stream));
    }
    const auto copy = [&](const std::byte* src, int64_t src_pitch, const int64_t* src_rows, std::byte* to,
                          int64_t dst_pitch, const int64_t* dst_rows, std::size_t count) {
      RowCopy c;
      c.src = src;
      c.src_pitch = src_pitch;
      c.src_rows = src_rows;
      c.dst = to;
      c.dst_pitch = dst_pitch;
      c.dst_rows = dst_rows;
      c.row_bytes = rb;
      c.count = static_cast<int64_t>(count);
      launch_copy_rows(c, t.stream);
    };
    auto* lines = static_cast<std::byte*>(t.cache_lines.data());
    // Queued now, running while the CPU gathers the rest below.
    copy(static_cast<const std::byte*>(t.hot.data()), rb, dev_ptr[0], dst, rb, dev_ptr[1], t.hot_src.size());
    GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kHotDone], t.stream));
    copy(t.host_tier_device, store.host.row_stride(), dev_ptr[2], dst, rb, dev_ptr[3], t.zc_src.size());
    GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kZeroCopyDone], t.stream));

    const auto staged_bytes = static_cast<std::size_t>(t.cpu_ids.size()) * static_cast<std::size_t>(rb);
    if (!t.cpu_ids.empty()) {
      ensure(t.staging_host, MemoryKind::kPinned, staged_bytes, t.device);
      ensure(t.staging_dev, MemoryKind::kDevice, staged_bytes, t.device);
      cpu::gather_host(store, t.cpu_ids, static_cast<std::byte*>(t.staging_host.data()), stats);
      GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(t.staging_dev.data(), t.staging_host.data(), staged_bytes,
                                                   cudaMemcpyHostToDevice, t.stream));
      copy(static_cast<const std::byte*>(t.staging_dev.data()), rb, nullptr, dst, rb, dev_ptr[4], t.cpu_ids.size());
    }
    GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kStagedDone], t.stream));
    // Fills read rows that have landed in the output; hits run last, so a hit on a line filled by
    // this gather reads the row just written (stream order).
    copy(dst, rb, dev_ptr[5], lines, rb, dev_ptr[6], t.fill_src.size());
    GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kFillDone], t.stream));
    copy(lines, rb, dev_ptr[7], dst, rb, dev_ptr[8], t.hit_src.size());
    GRAPHTIER_CUDA_CHECK(cudaEventRecord(t.events[kHitDone], t.stream));
    if (out.memory != MemoryKind::kDevice) {
      GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(out.data, dst, static_cast<std::size_t>(n * rb),
                                                   cudaMemcpyDeviceToHost, t.stream));
    }
    GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(t.stream));
  } catch (...) {
    cudaStreamSynchronize(t.stream);
    const std::lock_guard lock(store.policy_mutex);
    t.policy.erase_fills(t.keys, t.kinds);  // no line may claim a row it never received
    throw;
  }

  const auto elapsed = [&](Event a, Event b) {
    float ms = 0;
    GRAPHTIER_CUDA_CHECK(cudaEventElapsedTime(&ms, t.events[a], t.events[b]));
    return static_cast<double>(ms) * 1e-3;
  };
  const auto tier = [&](std::size_t rows, double seconds) {
    return TierStats{static_cast<int64_t>(rows), static_cast<int64_t>(rows) * rb, seconds};
  };
  stats.gpu_hot += tier(t.hot_src.size(), elapsed(kStart, kHotDone));
  stats.gpu_cache += tier(t.hit_src.size(), elapsed(kFillDone, kHitDone) + elapsed(kStagedDone, kFillDone));
  stats.host += tier(t.zc_src.size(), elapsed(kHotDone, kZeroCopyDone));
  if (t.policy.num_slots() > 0) {
    stats.cache_fills += counts.fills;
    stats.cache_bypasses += counts.bypasses;
  }
}

}  // namespace graphtier::feature::cuda
