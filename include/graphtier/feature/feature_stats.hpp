// What the tiers of a feature store did for one gather, and in total.
#pragma once

#include <cstdint>

#include "graphtier/io/io_stats.hpp"

namespace graphtier::feature {

/// Rows a tier delivered to the output (repeats count each time), their bytes, and the time the
/// tier's work took, summed over the threads that did it (so tiers working concurrently can add
/// up to more than the gather's wall time).
struct TierStats {
  int64_t rows = 0;
  int64_t bytes = 0;
  double seconds = 0;

  TierStats& operator+=(const TierStats& o) {
    rows += o.rows;
    bytes += o.bytes;
    seconds += o.seconds;
    return *this;
  }
};

struct GatherStats {
  int64_t rows = 0;       // ids gathered
  double seconds = 0;     // wall time of the gather calls
  TierStats gpu_hot;      // static prefix [0, gpu_end) in device memory
  TierStats gpu_cache;    // dynamic cache of rows outside the GPU tier, in device memory
  TierStats host;         // static range [gpu_end, cpu_end) in (pinned) host memory
  TierStats host_cache;   // dynamic cache of storage rows in host memory
  TierStats storage;      // rows read from features.bin
  int64_t cache_fills = 0;     // rows copied into a cache line (GPU cache: distinct keys)
  int64_t cache_bypasses = 0;  // misses served without a line, every line pinned or in use (GPU cache: distinct keys)
  int64_t gpu_cache_evictions = 0;  // GPU cache lines whose key a fill replaced
  io::IoStats io;              // the read engine's work for the storage rows

  GatherStats& operator+=(const GatherStats& o) {
    rows += o.rows;
    seconds += o.seconds;
    gpu_hot += o.gpu_hot;
    gpu_cache += o.gpu_cache;
    host += o.host;
    host_cache += o.host_cache;
    storage += o.storage;
    cache_fills += o.cache_fills;
    cache_bypasses += o.cache_bypasses;
    gpu_cache_evictions += o.gpu_cache_evictions;
    io += o.io;
    return *this;
  }
};

}  // namespace graphtier::feature
