// The GPU software cache on the GPU (docs/architecture.md, "GPU software cache"): a key-to-slot
// hash table, the lines' reference bits and use stamps, and the window's reuse counts, all in
// device memory; the gather's serve kernel probes it (one warp per output row), and one batched
// update per gather (dedup of the misses, CLOCK victims, table writes, line fills) runs after
// every output row has landed, in stream order. The decisions are the __host__ __device__
// functions of graphtier/cache/gpu_cache_table.hpp; these kernels only launch them.
//
// Thread-safety: serve() and update() are called by one gather at a time (the feature store's
// gather lock), window() by one announce/consume at a time (its policy lock), and window() may run
// on another thread while a gather's serve() or update() runs: it touches only its own scratch
// and, through the stream, the reuse counts. Everything is queued on the stream handed in (the GPU
// tiers' main stream, where the gather routes and serves; the staged rows' copies use a second
// one), so a probe, a window change and an update never overlap on the device.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "device_scratch.cuh"
#include "graphtier/core/memory.hpp"
#include "graphtier/feature/gather_route.hpp"  // Route

namespace graphtier::feature::cuda {

/// Per-gather counters in device memory, copied back once at the end of the gather.
struct CacheCounters {
  int64_t hot_rows = 0;        // positions served from the hot tier
  int64_t hits = 0;            // positions served from a line
  int64_t zero_copy_rows = 0;  // positions served by zero-copy reads of the pinned tier
  int64_t fills = 0;           // distinct missed keys given a line
  int64_t bypasses = 0;        // distinct missed keys left without one (every line used or pinned)
  int64_t evictions = 0;       // held keys whose line a fill took
  int64_t invalid_ids = 0;     // positions routed kRouteInvalid (ids checked on the device)
  int64_t tombstones = 0;      // table cells marked as evicted (kept across gathers)
};

/// One gather's rows as the serve kernel reads them (device pointers).
struct ServeRows {
  const int64_t* ids = nullptr;
  // [n] each position's route (gather_route.hpp). With `route_here` the serve kernel decides it
  // (route_of with every pinned row zero-copy: the store never stages a row, so no route depends
  // on the other positions) and writes it for the kernels after; otherwise the router wrote it.
  uint8_t* route = nullptr;
  bool route_here = false;
  RouteBounds bounds;  // read with route_here
  int64_t n = 0;
  const std::byte* hot = nullptr;     // [gpu_end, row_bytes]
  const std::byte* pinned = nullptr;  // the pinned tier as the GPU addresses it
  int64_t pinned_begin = 0;           // its first id
  int64_t pinned_pitch = 0;           // its row stride
  std::byte* out = nullptr;           // [n, row_bytes], device
  int64_t row_bytes = 0;
  uint8_t* hit = nullptr;  // [n]: 1 where a line served the row (device)
};

class DeviceCache {
 public:
  DeviceCache() = default;
  /// `lines` lines of `row_bytes` (0: no cache: serve() still routes the hot and zero-copy rows)
  /// for keys in [base, num_nodes), on the current device, initialised on `stream`.
  DeviceCache(int64_t lines, int64_t row_bytes, int64_t base, int64_t num_nodes, int device, cudaStream_t stream);

  int64_t lines() const noexcept { return lines_; }

  /// Queues the serve kernel: hot rows, cache hits (reference bit and use stamp `stamp` set), and
  /// zero-copy misses; counts into `counters` (device), one atomic per block and counter. hit[k]
  /// is written for every position, route[k] too with `route_here`.
  void serve(const ServeRows& rows, uint32_t stamp, CacheCounters* counters, cudaStream_t stream);
  /// Queues the batched update for the misses of serve(): each distinct missed key (any route
  /// but kRouteHot and kRouteStaged, hit 0), in order of first position, takes a never-used line or a CLOCK
  /// victim, or bypasses; the table is rewritten and the lines filled from `rows.out`, which must
  /// hold every row by then (queue it after the staged rows' scatter).
  void update(const ServeRows& rows, uint32_t stamp, CacheCounters* counters, cudaStream_t stream);
  /// Window buffering: each distinct id of ids[0, n) (device, in [base, num_nodes)) gains
  /// (delta +1) or loses (-1, never below zero) one announced use.
  void window(const int64_t* ids, int64_t n, int32_t delta, cudaStream_t stream);
  /// Clears the table and reinserts every held line when the tombstones counted so far (the last
  /// gather's counters) pass a quarter of the cells.
  void rebuild_if_needed(int64_t tombstones, CacheCounters* counters, cudaStream_t stream);

 private:
  int64_t lines_ = 0;
  int64_t row_bytes_ = 0;
  int64_t base_ = 0;
  uint64_t mask_ = 0;
  Buffer lines_data_;   // [lines, row_bytes]
  Buffer table_keys_;   // [capacity]
  Buffer table_slots_;  // [capacity]
  Buffer slot_key_;     // [lines], -1: never used
  Buffer referenced_;   // [lines] CLOCK reference bits
  Buffer stamp_;        // [lines] the gather that last used the line
  Buffer reuse_;        // [num_nodes - base] announced uses per key
  Buffer state_;        // CacheState: hand, never-used lines
  int sweep_blocks_ = 1;  // the victim sweep's grid (a cooperative launch when above 1)
  Buffer sweep_cleared_;  // the sweep's count of second-chance bits its first lap cleared
  Buffer sweep_victims_;  // [sweep_blocks_] one round's victims per block
  // Per-gather scratch, grown on demand (stream-ordered, kept between gathers).
  ::graphtier::cuda::DeviceScratch<int64_t> pending_keys_, pending_first_, iota_, fill_pos_, fill_slot_, evict_key_,
      fill_count_, window_keys_, window_first_;
  ::graphtier::cuda::DeviceScratch<uint8_t> flags_, select_temp_;
  int64_t iota_size_ = 0;
};

}  // namespace graphtier::feature::cuda
