#include "cuda/gpu_cache.cuh"

#include <cooperative_groups.h>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstring>

#include "cuda_check.cuh"
#include "cuda/copy_rows.cuh"
#include "graphtier/cache/gpu_cache_table.hpp"

namespace graphtier::feature::cuda {

namespace gpu = ::graphtier::cache::gpu;

namespace {

constexpr int kThreads = 256;
constexpr int kWarp = 32;
constexpr int kSweepThreads = 1024;  // threads per block of the victim sweep
constexpr unsigned kFullMask = 0xffffffffu;

struct CacheState {
  int64_t hand;    // the CLOCK hand
  int64_t unused;  // lines [unused, lines) were never used
};

struct Table {
  int64_t* keys;
  int64_t* slots;
  uint64_t mask;
};

// The atomic steps the table functions take as callables.
struct DeviceCas {
  __device__ int64_t operator()(int64_t* address, int64_t expected, int64_t desired) const {
    return static_cast<int64_t>(atomicCAS(reinterpret_cast<unsigned long long*>(address),
                                          static_cast<unsigned long long>(expected),
                                          static_cast<unsigned long long>(desired)));
  }
};

struct DeviceMin {
  __device__ void operator()(int64_t* address, int64_t value) const {
    atomicMin(reinterpret_cast<long long*>(address), static_cast<long long>(value));
  }
};

unsigned blocks_for(int64_t items, int64_t per_block) {
  return static_cast<unsigned>(std::clamp<int64_t>((items + per_block - 1) / per_block, 1, 65535));
}

// Adds one block's count to a counter: the block's threads add their nonzero counts into shared
// memory, thread 0 adds the total with one global atomic (per-warp atomics on one address
// serialise in L2: 65536 of them per gather of 65536 rows). Every thread of the block calls it.
constexpr int kServeCounts = 4;  // hot rows, hits, zero-copy rows, invalid ids

__device__ __forceinline__ void add_block_counts(unsigned long long (&shared)[kServeCounts],
                                                 const int64_t (&mine)[kServeCounts], CacheCounters* counters) {
  for (int c = 0; c < kServeCounts; ++c) {
    if (mine[c] != 0) atomicAdd(&shared[c], static_cast<unsigned long long>(mine[c]));
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long* global[kServeCounts] = {reinterpret_cast<unsigned long long*>(&counters->hot_rows),
                                                reinterpret_cast<unsigned long long*>(&counters->hits),
                                                reinterpret_cast<unsigned long long*>(&counters->zero_copy_rows),
                                                reinterpret_cast<unsigned long long*>(&counters->invalid_ids)};
    for (int c = 0; c < kServeCounts; ++c) {
      if (shared[c] != 0) atomicAdd(global[c], shared[c]);
    }
  }
}

// A warp takes kServeGroup positions at once: one lane each loads its id, routes it (with
// r.route_here: route_alone, the route written for the kernels after it), probes the table and
// picks its row's source (serve_source); then the warp copies the group's rows, several a round
// where they are whole 512-byte chunks (warp_copy_rows_packed), else one after another, the next
// row's loads behind no id or probe. So a row waits for one memory round trip, not three.
constexpr int kServeGroup = 8;
// Five blocks a multiprocessor (48 registers, no spills): 40 warps' loads in flight, not the 32 that
// the 64 registers the compiler picks alone allow.
constexpr int kServeBlocksPerSm = 5;

__global__ void __launch_bounds__(kThreads, kServeBlocksPerSm)
    serve_kernel(ServeRows r, Table table, const std::byte* lines, uint8_t* referenced, uint32_t* stamps, bool cached,
                 uint32_t stamp, CacheCounters* counters) {
  __shared__ unsigned long long block_counts[kServeCounts];
  if (threadIdx.x < kServeCounts) block_counts[threadIdx.x] = 0;
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t first_warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int64_t num_warps = static_cast<int64_t>(gridDim.x) * blockDim.x / kWarp;
  int64_t counts[kServeCounts] = {0, 0, 0, 0};
  for (int64_t group = first_warp * kServeGroup; group < r.n; group += num_warps * kServeGroup) {
    const int64_t k = group + lane;
    const std::byte* src = nullptr;
    if (lane < kServeGroup && k < r.n) {
      const int64_t id = r.ids[k];
      uint8_t route = 0;
      if (r.route_here) {
        route = route_alone(id, r.bounds);
        r.route[k] = route;
      } else {
        route = r.route[k];
      }
      int64_t slot = -1;
      if (cached && probes_cache(route)) {
        slot = gpu::table_find(table.keys, table.slots, table.mask, id);
        if (slot >= 0) {
          referenced[slot] = 1;
          stamps[slot] = stamp;
        }
      }
      if (r.hit != nullptr) r.hit[k] = slot >= 0 ? 1 : 0;
      switch (serve_source(route, slot >= 0)) {
        case kServeHot:
          src = r.hot + id * r.row_bytes;
          ++counts[0];
          break;
        case kServeLine:
          src = lines + slot * r.row_bytes;
          ++counts[1];
          break;
        case kServePinned:
          src = r.pinned + (id - r.pinned_begin) * r.pinned_pitch;
          ++counts[2];
          break;
        case kServeNone:
          if (route == kRouteInvalid) ++counts[3];
          break;
      }
    }
    const auto rows = static_cast<int>(r.n - group < kServeGroup ? r.n - group : kServeGroup);
    if (warp_copy_rows_packed(src, r.out + group * r.row_bytes, r.row_bytes, rows, lane)) continue;
    for (int j = 0; j < rows; ++j) {
      const auto from = reinterpret_cast<const std::byte*>(
          __shfl_sync(kFullMask, reinterpret_cast<unsigned long long>(src), j));
      if (from != nullptr) warp_copy_row(from, r.out + (group + j) * r.row_bytes, r.row_bytes, lane);
    }
  }
  add_block_counts(block_counts, counts, counters);
}

// A position the cache saw and missed.
__device__ __forceinline__ bool missed(const ServeRows& r, int64_t k) {
  const uint8_t route = r.route[k];
  return (route == kRouteZeroCopy || route == kRouteProbe || route == kRouteStagedProbe) && r.hit[k] == 0;
}

__global__ void record_misses_kernel(ServeRows r, int64_t* keys, int64_t* first, uint64_t mask) {
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < r.n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (missed(r, k)) gpu::first_position_insert(keys, first, mask, r.ids[k], k, DeviceCas{}, DeviceMin{});
  }
}

__global__ void flag_first_kernel(ServeRows r, const int64_t* keys, const int64_t* first, uint64_t mask,
                                  uint8_t* flags) {
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < r.n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    flags[k] = missed(r, k) && gpu::first_position(keys, first, mask, r.ids[k]) == k ? 1 : 0;
  }
}

__global__ void iota_kernel(int64_t* out, int64_t n) {
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[k] = k;
  }
}

struct SweepArgs {
  const int64_t* ids;
  const int64_t* fill_pos;    // first positions of the distinct misses, in order
  const int64_t* fill_count;  // how many
  int64_t* fill_slot;         // out: the line of each, or -1 (bypass)
  int64_t* evict_key;         // out: the key its line held, or -1
  int64_t* slot_key;
  uint8_t* referenced;
  uint32_t* stamps;
  const int32_t* reuse;
  int64_t base;
  int64_t lines;
  CacheState* state;
  CacheCounters* counters;
  uint32_t stamp;
  int* block_victims;            // [gridDim.x] one round's victims per block
  unsigned long long* cleared;   // second-chance bits the first lap cleared (zero at launch)
};

__device__ __forceinline__ void take_line(const SweepArgs& a, int64_t j, int64_t slot) {
  a.fill_slot[j] = slot;
  a.slot_key[slot] = a.ids[a.fill_pos[j]];
  a.referenced[slot] = 0;
  a.stamps[slot] = a.stamp;
}

// The blocks of one sweep wait for each other: a grid barrier of a cooperative launch, or the
// block barrier when the sweep has one block (a device without cooperative launches).
__device__ __forceinline__ void sweep_barrier() {
  if (gridDim.x == 1) {
    __syncthreads();
  } else {
    cooperative_groups::this_grid().sync();
  }
}

// Never-used lines first, then the CLOCK sweep from the hand, in rounds of gridDim.x x
// kSweepThreads slots (the co-resident blocks of a cooperative launch, at most the lines): slot i
// of a round is thread i of the grid, its victims_before a block scan plus the victims of the
// blocks before it (their totals exchanged through `block_victims` between two grid barriers), so
// the order is a one-at-a-time hand's at any grid size. Each thread owns the same slots in both
// laps, so a slot's bookkeeping is read and written by one thread; `taken` and `need` are computed
// by every thread alike from the same totals. Never-used lines and bypassed fills are grid-strided.
__global__ void __launch_bounds__(kSweepThreads) sweep_kernel(SweepArgs a) {
  using Scan = cub::BlockScan<int, kSweepThreads>;
  __shared__ typename Scan::TempStorage scan_temp;
  __shared__ int64_t victims_before_block;
  __shared__ int64_t round_victims;
  const int tid = static_cast<int>(threadIdx.x);
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * kSweepThreads + tid;
  const int64_t threads = static_cast<int64_t>(gridDim.x) * kSweepThreads;
  const int64_t m = *a.fill_count;
  const int64_t unused = a.state->unused;
  const int64_t hand = a.state->hand;
  const int64_t from_unused = std::min(m, a.lines - unused);
  for (int64_t j = thread; j < from_unused; j += threads) {
    a.evict_key[j] = -1;
    take_line(a, j, unused + j);
  }
  sweep_barrier();  // the lines just taken are seen as used by this gather
  int64_t taken = 0;
  int64_t need = m - from_unused;  // 0 unless every line is used: the sweep never sees a never-used line
  int64_t last_seen = -1;          // the last victim this thread took
  int64_t last_index = -1;         // its fill number
  for (int lap = 0; lap < 2; ++lap) {
    if (lap == 1) {
      sweep_barrier();  // every second-chance clear of the first lap is counted
      need = gpu::clock_second_lap_need(need, taken,
                                        static_cast<int64_t>(*reinterpret_cast<volatile unsigned long long*>(a.cleared)));
    }
    for (int64_t begin = 0; begin < a.lines && taken < need; begin += threads) {
      const int64_t i = begin + thread;
      const bool valid = i < a.lines;
      const int64_t s = valid ? (hand + i) % a.lines : 0;
      gpu::ClockClass cls = gpu::ClockClass::kKeep;
      if (valid) {
        const int64_t key = a.slot_key[s];
        cls = gpu::clock_class(lap, a.stamps[s] == a.stamp, a.reuse[key - a.base], a.referenced[s]);
      }
      int before_in_block = 0;
      int block_victims = 0;
      Scan(scan_temp).ExclusiveSum(cls == gpu::ClockClass::kVictim ? 1 : 0, before_in_block, block_victims);
      if (tid == 0) a.block_victims[blockIdx.x] = block_victims;
      sweep_barrier();
      if (tid < 32) {  // one warp sums the blocks' totals: those before this block, and all
        int64_t before = 0;
        int64_t all = 0;
        for (int64_t b = tid; b < gridDim.x; b += 32) {
          const int64_t v = *reinterpret_cast<volatile const int*>(&a.block_victims[b]);
          all += v;
          if (b < blockIdx.x) before += v;
        }
        for (int d = 16; d > 0; d /= 2) {
          before += __shfl_down_sync(kFullMask, before, d);
          all += __shfl_down_sync(kFullMask, all, d);
        }
        if (tid == 0) {
          victims_before_block = before;
          round_victims = all;
        }
      }
      __syncthreads();
      const int64_t before = taken + victims_before_block + before_in_block;
      const int64_t after = std::min(need, taken + round_victims);
      if (valid && gpu::clock_reached(before, need)) {
        if (cls == gpu::ClockClass::kSecondChance) {
          a.referenced[s] = 0;
          atomicAdd(a.cleared, 1ull);
        }
        if (cls == gpu::ClockClass::kVictim) {
          const int64_t j = from_unused + before;
          a.evict_key[j] = a.slot_key[s];
          take_line(a, j, s);
          last_seen = s;
          last_index = before;
        }
      }
      taken = after;
      sweep_barrier();  // every block has read block_victims and the scan storage
    }
  }
  // The hand passes the last victim: the thread that took victim number taken - 1 writes it.
  if (taken > 0 && last_index == taken - 1) a.state->hand = (last_seen + 1) % a.lines;
  const int64_t got = from_unused + taken;
  for (int64_t j = got + thread; j < m; j += threads) {
    a.fill_slot[j] = -1;
    a.evict_key[j] = -1;
  }
  if (thread == 0) {
    a.state->unused = unused + from_unused;
    a.counters->fills = got;
    a.counters->bypasses = m - got;
    a.counters->evictions = taken;
  }
}

// One warp per fill: lane 0 turns the evicted key's cell into a tombstone and gives the new key a
// cell; the warp copies the row, already in the output at its first position, into the line.
__global__ void apply_fills_kernel(Table table, const int64_t* ids, const int64_t* fill_pos, const int64_t* fill_count,
                                   const int64_t* fill_slot, const int64_t* evict_key, const std::byte* out,
                                   std::byte* lines, int64_t row_bytes, CacheCounters* counters) {
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t first_warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int64_t num_warps = static_cast<int64_t>(gridDim.x) * blockDim.x / kWarp;
  const int64_t m = *fill_count;
  int64_t tombstones = 0;  // this lane's change to the table's count (lane 0 only)
  for (int64_t j = first_warp; j < m; j += num_warps) {
    const int64_t slot = fill_slot[j];
    if (slot < 0) continue;
    if (lane == 0) {
      if (evict_key[j] >= 0 && gpu::table_erase(table.keys, table.mask, evict_key[j])) ++tombstones;
      if (gpu::table_insert(table.keys, table.slots, table.mask, ids[fill_pos[j]], slot, DeviceCas{}) ==
          gpu::kTombstone) {
        --tombstones;
      }
    }
    warp_copy_row(out + fill_pos[j] * row_bytes, lines + slot * row_bytes, row_bytes, lane);
  }
  // Two's complement: adding the unsigned image of a negative change subtracts it.
  if (tombstones != 0) {
    atomicAdd(reinterpret_cast<unsigned long long*>(&counters->tombstones), static_cast<unsigned long long>(tombstones));
  }
}

__global__ void rebuild_kernel(Table table, const int64_t* slot_key, int64_t lines, CacheCounters* counters) {
  if (blockIdx.x == 0 && threadIdx.x == 0) counters->tombstones = 0;
  for (int64_t s = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; s < lines;
       s += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (slot_key[s] >= 0) gpu::table_insert(table.keys, table.slots, table.mask, slot_key[s], s, DeviceCas{});
  }
}

__global__ void window_record_kernel(const int64_t* ids, int64_t n, int64_t* keys, int64_t* first, uint64_t mask) {
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    gpu::first_position_insert(keys, first, mask, ids[k], k, DeviceCas{}, DeviceMin{});
  }
}

// Distinct ids only (the first occurrence of each), so a plain read-modify-write is race-free.
__global__ void window_apply_kernel(const int64_t* ids, int64_t n, const int64_t* keys, const int64_t* first,
                                    uint64_t mask, int32_t* reuse, int64_t base, int32_t delta) {
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (gpu::first_position(keys, first, mask, ids[k]) != k) continue;
    int32_t& count = reuse[ids[k] - base];
    count = gpu::window_count(count, delta);
  }
}

// The first-occurrence table for `n` positions, emptied on the stream.
uint64_t reset_first_table(::graphtier::cuda::DeviceScratch<int64_t>& keys,
                           ::graphtier::cuda::DeviceScratch<int64_t>& first, int64_t n, cudaStream_t stream) {
  const uint64_t capacity = gpu::table_capacity(n);
  keys.grow(static_cast<int64_t>(capacity));
  first.grow(static_cast<int64_t>(capacity));
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(keys.get(), 0xff, capacity * sizeof(int64_t), stream));   // kEmpty
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(first.get(), 0x7f, capacity * sizeof(int64_t), stream));  // above any position
  return capacity - 1;
}

}  // namespace

DeviceCache::DeviceCache(int64_t lines, int64_t row_bytes, int64_t base, int64_t num_nodes, int device,
                         cudaStream_t stream)
    : lines_(lines),
      row_bytes_(row_bytes),
      base_(base),
      pending_keys_(stream),
      pending_first_(stream),
      iota_(stream),
      fill_pos_(stream),
      fill_slot_(stream),
      evict_key_(stream),
      fill_count_(1, stream),
      window_keys_(stream),
      window_first_(stream),
      flags_(stream),
      select_temp_(stream) {
  if (lines_ == 0) return;
  const uint64_t capacity = gpu::table_capacity(lines_);
  mask_ = capacity - 1;
  const auto n = static_cast<std::size_t>(lines_);
  lines_data_ = Buffer(MemoryKind::kDevice, n * static_cast<std::size_t>(row_bytes_), device);
  table_keys_ = Buffer(MemoryKind::kDevice, capacity * sizeof(int64_t), device);
  table_slots_ = Buffer(MemoryKind::kDevice, capacity * sizeof(int64_t), device);
  slot_key_ = Buffer(MemoryKind::kDevice, n * sizeof(int64_t), device);
  referenced_ = Buffer(MemoryKind::kDevice, n, device);
  stamp_ = Buffer(MemoryKind::kDevice, n * sizeof(uint32_t), device);
  reuse_ = Buffer(MemoryKind::kDevice, static_cast<std::size_t>(num_nodes - base) * sizeof(int32_t), device);
  state_ = Buffer(MemoryKind::kDevice, sizeof(CacheState), device);
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(table_keys_.data(), 0xff, table_keys_.size(), stream));
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(slot_key_.data(), 0xff, slot_key_.size(), stream));
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(referenced_.data(), 0, referenced_.size(), stream));
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(stamp_.data(), 0, stamp_.size(), stream));
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(reuse_.data(), 0, reuse_.size(), stream));
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(state_.data(), 0, state_.size(), stream));
  // The sweep's grid: a block per 1024 lines, at most one per multiprocessor, all co-resident (a
  // cooperative launch); one block where the device has no cooperative launches.
  int cooperative = 0;
  int multiprocessors = 0;
  int per_multiprocessor = 0;
  GRAPHTIER_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  GRAPHTIER_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  GRAPHTIER_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, sweep_kernel, kSweepThreads, 0));
  const int64_t resident = cooperative != 0 && per_multiprocessor > 0 ? multiprocessors : 1;
  sweep_blocks_ = static_cast<int>(std::clamp<int64_t>((lines_ + kSweepThreads - 1) / kSweepThreads, 1, resident));
  sweep_cleared_ = Buffer(MemoryKind::kDevice, sizeof(unsigned long long), device);
  sweep_victims_ = Buffer(MemoryKind::kDevice, static_cast<std::size_t>(sweep_blocks_) * sizeof(int), device);
}

void DeviceCache::serve(const ServeRows& rows, uint32_t stamp, CacheCounters* counters, cudaStream_t stream) {
  if (rows.n == 0) return;
  const Table table{static_cast<int64_t*>(table_keys_.data()), static_cast<int64_t*>(table_slots_.data()), mask_};
  serve_kernel<<<blocks_for((rows.n + kServeGroup - 1) / kServeGroup, kThreads / kWarp), kThreads, 0, stream>>>(
      rows, table, static_cast<const std::byte*>(lines_data_.data()), static_cast<uint8_t*>(referenced_.data()),
      static_cast<uint32_t*>(stamp_.data()), lines_ > 0, stamp, counters);
  GRAPHTIER_CUDA_CHECK_LAUNCH("serve_kernel");
}

void DeviceCache::update(const ServeRows& rows, uint32_t stamp, CacheCounters* counters, cudaStream_t stream) {
  if (lines_ == 0 || rows.n == 0) return;
  const int64_t n = rows.n;
  const uint64_t pmask = reset_first_table(pending_keys_, pending_first_, n, stream);
  const unsigned grid = blocks_for(n, kThreads);
  record_misses_kernel<<<grid, kThreads, 0, stream>>>(rows, pending_keys_.get(), pending_first_.get(), pmask);
  GRAPHTIER_CUDA_CHECK_LAUNCH("record_misses_kernel");
  flags_.grow(n);
  flag_first_kernel<<<grid, kThreads, 0, stream>>>(rows, pending_keys_.get(), pending_first_.get(), pmask,
                                                   flags_.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("flag_first_kernel");
  if (n > iota_size_) {
    iota_.grow(n);
    iota_size_ = static_cast<int64_t>(iota_.capacity());
    iota_kernel<<<blocks_for(iota_size_, kThreads), kThreads, 0, stream>>>(iota_.get(), iota_size_);
    GRAPHTIER_CUDA_CHECK_LAUNCH("iota_kernel");
  }
  fill_pos_.grow(n);
  fill_slot_.grow(n);
  evict_key_.grow(n);
  // The distinct misses' first positions, in position order (the fills' order).
  std::size_t temp_bytes = 0;
  GRAPHTIER_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, temp_bytes, iota_.get(), flags_.get(), fill_pos_.get(),
                                                  fill_count_.get(), n, stream));
  select_temp_.grow(static_cast<int64_t>(temp_bytes));
  GRAPHTIER_CUDA_CHECK(cub::DeviceSelect::Flagged(select_temp_.get(), temp_bytes, iota_.get(), flags_.get(),
                                                  fill_pos_.get(), fill_count_.get(), n, stream));
  SweepArgs a{rows.ids,
              fill_pos_.get(),
              fill_count_.get(),
              fill_slot_.get(),
              evict_key_.get(),
              static_cast<int64_t*>(slot_key_.data()),
              static_cast<uint8_t*>(referenced_.data()),
              static_cast<uint32_t*>(stamp_.data()),
              static_cast<const int32_t*>(reuse_.data()),
              base_,
              lines_,
              static_cast<CacheState*>(state_.data()),
              counters,
              stamp,
              static_cast<int*>(sweep_victims_.data()),
              static_cast<unsigned long long*>(sweep_cleared_.data())};
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(a.cleared, 0, sizeof(unsigned long long), stream));
  if (sweep_blocks_ == 1) {
    sweep_kernel<<<1, kSweepThreads, 0, stream>>>(a);
  } else {
    void* args[] = {&a};
    GRAPHTIER_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&sweep_kernel),
                                                     dim3(static_cast<unsigned>(sweep_blocks_)), dim3(kSweepThreads),
                                                     args, 0, stream));
  }
  GRAPHTIER_CUDA_CHECK_LAUNCH("sweep_kernel");
  const Table table{static_cast<int64_t*>(table_keys_.data()), static_cast<int64_t*>(table_slots_.data()), mask_};
  apply_fills_kernel<<<blocks_for(n, kThreads / kWarp), kThreads, 0, stream>>>(
      table, rows.ids, fill_pos_.get(), fill_count_.get(), fill_slot_.get(), evict_key_.get(), rows.out,
      static_cast<std::byte*>(lines_data_.data()), row_bytes_, counters);
  GRAPHTIER_CUDA_CHECK_LAUNCH("apply_fills_kernel");
}

void DeviceCache::window(const int64_t* ids, int64_t n, int32_t delta, cudaStream_t stream) {
  if (lines_ == 0 || n == 0) return;
  const uint64_t mask = reset_first_table(window_keys_, window_first_, n, stream);
  const unsigned grid = blocks_for(n, kThreads);
  window_record_kernel<<<grid, kThreads, 0, stream>>>(ids, n, window_keys_.get(), window_first_.get(), mask);
  GRAPHTIER_CUDA_CHECK_LAUNCH("window_record_kernel");
  window_apply_kernel<<<grid, kThreads, 0, stream>>>(ids, n, window_keys_.get(), window_first_.get(), mask,
                                                     static_cast<int32_t*>(reuse_.data()), base_, delta);
  GRAPHTIER_CUDA_CHECK_LAUNCH("window_apply_kernel");
}

void DeviceCache::rebuild_if_needed(int64_t tombstones, CacheCounters* counters, cudaStream_t stream) {
  if (lines_ == 0 || !gpu::table_needs_rebuild(tombstones, mask_ + 1)) return;
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(table_keys_.data(), 0xff, table_keys_.size(), stream));
  rebuild_kernel<<<blocks_for(lines_, kThreads), kThreads, 0, stream>>>(
      Table{static_cast<int64_t*>(table_keys_.data()), static_cast<int64_t*>(table_slots_.data()), mask_},
      static_cast<const int64_t*>(slot_key_.data()), lines_, counters);
  GRAPHTIER_CUDA_CHECK_LAUNCH("rebuild_kernel");
}

}  // namespace graphtier::feature::cuda
