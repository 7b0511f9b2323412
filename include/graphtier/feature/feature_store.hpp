// The tiered feature store: X[ids] gathered from whichever tier holds each row
// (docs/architecture.md, "Contracts", "Feature store and tiers").
//
// After `prepare`, ids are in hotness order, so the static tiers are id ranges (tier_ranges):
//   [0, gpu_end)          GPU hot tier: device memory (CUDA builds)
//   [gpu_end, cpu_end)    host tier: host memory, page-locked (pinned) when a GPU is present
//   [cpu_end, num_nodes)  storage tier: features.bin read with O_DIRECT through io::ReadEngine
// and two dynamic caches for rows outside them: the GPU software cache (CUDA builds; its table,
// CLOCK state and window counts on the GPU: docs/architecture.md, "GPU software cache") and the
// host cache (storage rows in host memory, a cache::CachePolicy beside its rows; `eviction`
// applies to it, the GPU cache is always CLOCK). Both
// honour window buffering: announce() the ids of minibatches sampled ahead, consume() them once
// gathered; a row with announced future use is never evicted.
//
// CPU-only mode (no CUDA build, or no GPU): gpu_hot and gpu_cache budgets must be zero
// (Unsupported otherwise); everything else works, out of core included.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "graphtier/cache/cache_policy.hpp"
#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/core/tensor.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/feature/feature_stats.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/feature/pinned_split.hpp"
#include "graphtier/feature/tier_ranges.hpp"
#include "graphtier/io/read_device.hpp"

namespace graphtier::feature {

/// Byte budgets, each in bytes or a percent of the feature table (num_nodes x row_stride). A
/// budget larger than what is left for it is clamped; zero disables the tier.
struct FeatureBudgets {
  Budget gpu_hot;     // static GPU tier
  Budget gpu_cache;   // GPU software cache
  Budget cpu_buffer;  // static host (pinned) tier
  Budget host_cache;  // host cache of storage rows
};

/// How the GPU reads the pinned host tier (CUDA builds).
enum class PinnedPath : uint8_t {
  kMeasured,  // both paths timed at start-up; each request split by its span (pinned_split.hpp)
  kZeroCopy,  // GPU threads read pinned memory
  kCpuCopy,   // CPU threads gather into pinned staging, then one DMA copy
};

struct FeatureStoreOptions {
  FeatureBudgets budgets;
  PinnedPath pinned_path = PinnedPath::kMeasured;
  cache::Eviction eviction = cache::Eviction::kClock;
  uint64_t seed = 0;  // random eviction
  /// The storage tier's read device, handed in (docs/architecture.md, Conventions 4), e.g. a
  /// FaultInjectingDevice in tests; it must outlive the store. Null: the store makes one with
  /// `io_backend`.
  io::ReadDevice* read_device = nullptr;
  io::IoBackend io_backend = io::IoBackend::kAuto;
  /// Reads kept in flight by the storage tier. 0: measured at construction by io::calibrate
  /// (eq. 2-3 of the paper in docs/references.md, "GIDS") when features.bin is at least 64 MiB,
  /// else the device's limit.
  int io_depth = 0;
  int max_io_depth = 64;  // ring size of a device the store makes itself
  int device = 0;         // CUDA device of the GPU tiers
};

/// Rows per tier, as resolved from the budgets.
struct TierLayout {
  TierRanges ranges;            // gpu_end, cpu_end, num_nodes, row_stride
  int64_t gpu_cache_rows = 0;   // lines of the GPU software cache
  int64_t host_cache_rows = 0;  // lines of the host cache
  bool host_pinned = false;     // the host tier is page-locked
  PinnedPaths pinned_paths;
};

/// Thread-safety: gather, announce, consume and the statistics may be called from any threads at
/// once (docs/architecture.md, "Feature store and tiers"). Gathers run one at a time; the caches'
/// policies have a lock of their own that a gather holds only for its short policy steps (lookup,
/// freeing failed fills), never across its reads and copies, so announce and consume never wait
/// for a gather's I/O. The thread pool handed in must not be running another parallel_for of the
/// caller's while gather runs (ThreadPool is not reentrant).
/// Ids in the memory of CUDA device `device` (FeatureStore::gather).
struct DeviceIds {
  const int64_t* data = nullptr;
  int device = 0;
};

/// One feature table on disk: `rows` rows laid out as `layout` from the file's start (a dataset's
/// features.bin, or one node type's table of a typed dataset, whose row i is node offset + i).
struct FeatureTable {
  std::string path;
  graph::FeatureLayout layout;
  int64_t rows = 0;

  /// A dataset's features.bin; InvalidArgument naming the dataset when it has none.
  static FeatureTable of(const graph::Dataset& dataset);
};

class FeatureStore {
 public:
  /// Loads the static tiers of the already-open `dataset` (which must have features). The store
  /// reads the dataset's manifest and directory during construction only and keeps no reference to
  /// it, so `dataset` may be a temporary or closed afterwards; the tiers read features.bin through
  /// descriptors of their own, and the topology is not read at all. `pool` serves every gather
  /// (storage reads in flight on one of its threads while the others copy) and must outlive the
  /// store. Throws IoError when features.bin cannot be read, InvalidArgument for a dataset without
  /// features or bad options, Unsupported for GPU budgets without a GPU.
  FeatureStore(const graph::Dataset& dataset, const FeatureStoreOptions& options, ThreadPool& pool);
  /// A store over `table` whose tiers are given rather than derived from the options' budgets:
  /// the static ranges (tiers.ranges: num_nodes = table.rows, row_stride = the table's) and the
  /// caches' lines (tiers.gpu_cache_rows, tiers.host_cache_rows); e.g. one node type's share of a
  /// typed dataset's budgets (typed_tier_ranges). The other options apply as above.
  FeatureStore(const FeatureTable& table, const TierLayout& tiers, const FeatureStoreOptions& options,
               ThreadPool& pool);
  ~FeatureStore();
  FeatureStore(const FeatureStore&) = delete;
  FeatureStore& operator=(const FeatureStore&) = delete;

  const graph::FeatureLayout& layout() const noexcept;
  int64_t num_nodes() const noexcept;
  const TierLayout& tiers() const noexcept;
  /// The storage tier's queue depth (calibrated or given).
  int io_depth() const noexcept;

  /// out[k] = X[ids[k]] byte for byte. `out` is a contiguous [ids.size(), dim] tensor of the
  /// table's dtype in host or pinned memory, or device memory in CUDA builds. ids may repeat and
  /// come in any order; every id is checked (OutOfRange naming the first bad one): by the host
  /// before anything is read, or, in a gather through the GPU tiers, by the device as it routes
  /// the ids (a bad one is read from nowhere and given no cache line; `out` is then unspecified).
  /// A read failure throws IoError naming features.bin and the offset; `out` is then unspecified
  /// but no cache line keeps a partial row. Returns what the tiers did for this call
  /// (what last_gather() returns until the next gather).
  ///
  /// `device_ids`, optional: the same ids already in device memory (a GPU-sampled minibatch's
  /// input nodes), complete before the call and alive through it; the GPU tiers on that device
  /// then read them there rather than upload the host copy (the host then reads only the ids of
  /// the rows it stages, at the positions the device lists).
  ///
  /// `output_after`, optional, for a device output: the output's memory is ready only after the
  /// work queued on that stream so far (a stream-ordered allocation, the waits for its previous
  /// owner's consumers); the tiers' streams wait for it on the device, the host does not.
  ///
  /// `after_lookup`, optional: called once, when the caches have looked every id up, so that the
  /// caller's work on them (the loader gives the window's announcements of the gathered ids back)
  /// runs while the host's reads are in flight, not after them; on a thread of `pool`. A gather
  /// through the GPU tiers, or of no ids, calls it when done. Not called when the gather fails
  /// before its lookups are done. It may call window(), not gather() (whose lock the gather holds)
  /// nor anything that runs on `pool` (ThreadPool is not reentrant).
  GatherStats gather(std::span<const int64_t> ids, TensorView out, const DeviceIds& device_ids = {},
                     const CudaStream* output_after = nullptr, const std::function<void()>& after_lookup = {});

  /// Window buffering for the dynamic caches: the ids of one minibatch sampled ahead (delta
  /// kAnnounce: each distinct id gains one announced use) or just gathered (kConsume: loses one,
  /// never below zero). Ids outside the caches' range are ignored; any other delta is an
  /// InvalidArgument. Returns the seconds the call waited for the caches' policy lock (held by
  /// other callers' window changes and by a gather's lookups only, never through its I/O) plus,
  /// with a GPU cache, for the device (the pinned buffer of the window's upload two calls ago): the
  /// loader reports it as EpochStats::window_wait_seconds.
  static constexpr int kAnnounce = +1;
  static constexpr int kConsume = -1;
  double window(std::span<const int64_t> ids, int delta);

  /// Snapshots taken under the statistics' own lock (not the gather's), so safe to call while
  /// another thread (e.g. another loader sharing the store) gathers: the tiers' work in the latest
  /// completed gather of any caller, and summed over every gather since construction.
  GatherStats last_gather() const;
  GatherStats total() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphtier::feature
