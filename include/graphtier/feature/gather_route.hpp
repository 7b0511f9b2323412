// How the GPU tiers route the positions of one gather, as __host__ __device__ functions: the
// routing kernels of src/feature/cuda/gather_route.cu only launch them, and the CPU tests compare
// them with a naive host routing (docs/architecture.md, "GPU software cache").
//
// A position's route is a function of its id, the static tier bounds, whether a GPU cache exists,
// the number of pinned-tier ids at earlier positions and the request's zero-copy quota: the first
// `quota` pinned rows by position are read by zero-copy, the rest are the CPU half. The quota is a
// function of the request's census (pinned rows and their span) through a SplitTable built once at
// start-up from the calibrated paths; integer arithmetic only, so the host and the device agree bit
// for bit and the split is a deterministic function of the ids.
//
// Plain C++ under g++ (GRAPHTIER_HD is `inline` there); host and device code under nvcc.
#pragma once

#include <cstdint>

#include "graphtier/core/rng.hpp"  // GRAPHTIER_HD
#include "graphtier/feature/pinned_split.hpp"

namespace graphtier::feature {

/// How the serve kernel treats output position k (one byte per position, written on the device).
enum Route : uint8_t {
  kRouteHot = 0,          // the static GPU tier (ids < gpu_end)
  kRouteZeroCopy = 1,     // pinned tier: a cache hit reads the line, a miss reads pinned memory by zero-copy
  kRouteStaged = 2,       // no GPU cache: the host gathers the row into staging (the pinned tier's CPU
                          // half, storage rows)
  kRouteProbe = 3,        // storage row with a GPU cache: a hit reads the line, a miss is staged by the host
  kRouteStagedProbe = 4,  // the pinned tier's CPU half with a GPU cache: probed like the others (a
                          // hit marks the line, a miss fills one), the bytes always from staging
  kRouteInvalid = 5,      // an id outside [0, num_nodes) (ids checked on the device): read from
                          // nowhere, staged never, probed never; the gather then throws OutOfRange
};

/// The static tiers as the router sees them: [0, gpu_end) hot, [gpu_end, cpu_end) pinned,
/// [cpu_end, num_nodes) storage; `cached`: a GPU cache exists.
struct RouteBounds {
  int64_t gpu_end = 0;
  int64_t cpu_end = 0;
  bool cached = false;
  int64_t num_nodes = 0;
};

GRAPHTIER_HD bool is_pinned(int64_t id, const RouteBounds& b) { return id >= b.gpu_end && id < b.cpu_end; }

/// The route of a position holding `id`, with `pinned_before` pinned-tier ids at earlier positions
/// and a zero-copy quota of `quota` rows.
GRAPHTIER_HD uint8_t route_of(int64_t id, const RouteBounds& b, int64_t pinned_before, int64_t quota) {
  if (id < 0 || id >= b.num_nodes) return kRouteInvalid;
  if (id < b.gpu_end) return kRouteHot;
  if (id < b.cpu_end) {
    if (pinned_before < quota) return kRouteZeroCopy;
    return b.cached ? kRouteStagedProbe : kRouteStaged;
  }
  return b.cached ? kRouteProbe : kRouteStaged;
}

/// The route where the store never stages a row before the serve kernel: every pinned row goes
/// zero-copy (the split table never leaves one to the CPU) and storage rows are probed in a GPU
/// cache (or there are none). No route then depends on other positions, so the serve kernel
/// decides each one itself, without the census, the quota and the route pass.
GRAPHTIER_HD uint8_t route_alone(int64_t id, const RouteBounds& b) { return route_of(id, b, 0, 1); }

/// Positions whose bytes the host gathers into staging before it could know whether they hit.
GRAPHTIER_HD bool is_staged(uint8_t route) { return route == kRouteStaged || route == kRouteStagedProbe; }

/// Whether the serve kernel probes the GPU cache (when there is one) for a position of `route`:
/// every row that may sit in a line, the pinned tier's and the storage tier's.
GRAPHTIER_HD bool probes_cache(uint8_t route) {
  return route != kRouteHot && route != kRouteStaged && route != kRouteInvalid;
}

/// Where the serve kernel reads the row of a position of `route` whose probe found a line (`hit`)
/// or not: none where the host stages the row (a staged probe's hit only marks the line used).
enum ServeSource : uint8_t { kServeNone = 0, kServeHot, kServeLine, kServePinned };

GRAPHTIER_HD ServeSource serve_source(uint8_t route, bool hit) {
  if (route == kRouteHot) return kServeHot;
  if (route == kRouteStagedProbe || route == kRouteStaged || route == kRouteInvalid) return kServeNone;
  if (hit) return kServeLine;
  return route == kRouteZeroCopy ? kServePinned : kServeNone;
}

/// What one gather's ids hold, summed over positions (repeats count each time). Zero-initialised;
/// the span is kept as two maxima so that every field merges by + or max from zero.
struct GatherCensus {
  int64_t hot = 0;
  int64_t pinned = 0;
  int64_t storage = 0;
  int64_t pinned_low_gap = 0;  // max over pinned ids of cpu_end - id (>= 1): the lowest is cpu_end - this
  int64_t pinned_high_end = 0;  // max over pinned ids of id + 1: the highest is this - 1
};

GRAPHTIER_HD void census_add(GatherCensus& c, int64_t id, const RouteBounds& b) {
  if (id < b.gpu_end) {
    ++c.hot;
  } else if (id < b.cpu_end) {
    ++c.pinned;
    c.pinned_low_gap = c.pinned_low_gap > b.cpu_end - id ? c.pinned_low_gap : b.cpu_end - id;
    c.pinned_high_end = c.pinned_high_end > id + 1 ? c.pinned_high_end : id + 1;
  } else {
    ++c.storage;
  }
}

/// Bytes spanned by the pinned rows ((max id - min id + 1) x row stride), 0 without any.
GRAPHTIER_HD int64_t census_span_bytes(const GatherCensus& c, const RouteBounds& b, int64_t row_stride) {
  if (c.pinned == 0) return 0;
  const int64_t lo = b.cpu_end - c.pinned_low_gap;
  const int64_t hi = c.pinned_high_end - 1;
  return (hi - lo + 1) * row_stride;
}

/// The zero-copy share as a function of the pinned rows' span, in 1/8-octave buckets of the span,
/// as fixed point (kShareOne = all of them). Built on the host (split_table, pinned_split.cpp).
inline constexpr int kSpanBucketsPerOctave = 8;
inline constexpr int kSpanBuckets = 64 * kSpanBucketsPerOctave;
inline constexpr int kShareBits = 24;
inline constexpr int64_t kShareOne = int64_t{1} << kShareBits;

struct SplitTable {
  uint32_t share[kSpanBuckets] = {};
};

GRAPHTIER_HD int floor_log2(uint64_t x) {  // x > 0
#if defined(__CUDA_ARCH__)
  return 63 - __clzll(static_cast<long long>(x));
#else
  return 63 - __builtin_clzll(x);
#endif
}

/// The bucket of a span of `span_bytes` (> 0): 8 x floor(log2) plus the three bits after the
/// leading one.
GRAPHTIER_HD int span_bucket(uint64_t span_bytes) {
  if (span_bytes == 0) return 0;
  const int e = floor_log2(span_bytes);
  const uint64_t m = e >= 3 ? (span_bytes >> (e - 3)) & 7u : (span_bytes << (3 - e)) & 7u;
  return e * kSpanBucketsPerOctave + static_cast<int>(m);
}

/// The smallest span in bucket `bucket` (the span the table's share is evaluated at).
inline uint64_t span_bucket_floor(int bucket) {
  const int e = bucket / kSpanBucketsPerOctave;
  const uint64_t m = static_cast<uint64_t>(8 + bucket % kSpanBucketsPerOctave);
  if (e >= 3) return m << (e - 3);
  const uint64_t v = m >> (3 - e);
  return v == 0 ? 1 : v;
}

/// round(share x pinned) in fixed point, exact for any pinned count (no 64-bit overflow).
GRAPHTIER_HD int64_t share_of(uint32_t share, int64_t pinned) {
  const int64_t high = pinned >> kShareBits;
  const int64_t low = pinned & (kShareOne - 1);
  return high * static_cast<int64_t>(share) + ((low * static_cast<int64_t>(share) + kShareOne / 2) >> kShareBits);
}

/// The request's zero-copy quota: its pinned rows times the share at their span.
GRAPHTIER_HD int64_t zero_copy_quota(const SplitTable& t, const GatherCensus& c, const RouteBounds& b,
                                     int64_t row_stride) {
  if (c.pinned == 0) return 0;
  const auto span = static_cast<uint64_t>(census_span_bytes(c, b, row_stride));
  return share_of(t.share[span_bucket(span)], c.pinned);
}

/// Every bucket at the share of zero_copy_fraction(paths, the bucket's smallest span).
SplitTable split_table(const PinnedPaths& paths);
/// Every bucket at one share: kShareOne (all zero-copy) or 0 (all through the CPU).
SplitTable uniform_split_table(uint32_t share);

/// Whether some span leaves part of the pinned rows to the CPU (the host must then wait for their
/// positions).
bool splits_to_cpu(const SplitTable& t);

}  // namespace graphtier::feature
