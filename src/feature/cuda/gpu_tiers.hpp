// The GPU tiers of a feature store (CUDA builds only): the hot prefix in device memory, the GPU
// software cache, the pinned host tier read by zero-copy or CPU gather + DMA, and storage rows
// staged through pinned memory. Plain C++: the CUDA types stay in gpu_tiers.cu.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "host_tiers.hpp"
#include "graphtier/feature/feature_store.hpp"

namespace graphtier::feature::cuda {

struct GpuTiers;  // defined in gpu_tiers.cu, CUDA builds only
/// Defined in gpu_tiers.cu (CUDA builds) or feature_store.cpp (CPU builds, never called with a
/// tier set), so that the tiers stay opaque to every C++ translation unit.
struct GpuTiersDeleter {
  void operator()(GpuTiers* tiers) const noexcept;
};

/// Allocates and loads the GPU hot tier (rows [0, tiers.ranges.gpu_end) of the host's feature
/// file), the GPU cache (tiers.gpu_cache_rows lines) and the staging buffers on options.device,
/// maps the host's pinned rows and measures their two paths (pinned_paths). The calling thread's
/// current device is left as it was.
std::unique_ptr<GpuTiers, GpuTiersDeleter> make_gpu_tiers(const HostTiers& host, const TierLayout& tiers,
                                                          const FeatureStoreOptions& options);

/// What make_gpu_tiers measured of the pinned rows' two paths (pinned_split.hpp); all zero when
/// there are no pinned rows.
const PinnedPaths& pinned_paths(const GpuTiers& tiers);

/// Window buffering for the GPU cache: the ids (in [gpu_end, num_nodes)) cross once through
/// pinned memory; the counts change on the device, in stream order with the gathers. Returns the
/// seconds the host waited for the device (a pinned buffer's previous upload; the stream, when
/// the device buffer grows).
/// `delta`: +1 (announce) or -1 (consume).
double window(GpuTiers& tiers, std::span<const int64_t> ids, int32_t delta);

/// out[k] = X[ids[k]] into device memory (or host memory through a device bounce), every tier
/// working at once. The device routes the positions (gather_route.cuh: a census of the ids, the
/// zero-copy quota of the pinned rows by their span, each position's route) and lists the
/// positions the host stages; one serve kernel for the hot rows, GPU cache hits and zero-copy rows
/// runs while the CPU gathers the listed rows (the pinned tier's CPU half) into pinned staging,
/// uploaded and scattered on a second stream; storage rows the cache missed follow, then one
/// batched cache update. Host waits (docs/architecture.md, "GPU budgets"): one stream
/// synchronisation at the end; one event wait for the staged positions when the store can stage
/// rows; one for the missed positions with a GPU cache and storage rows. Adds to `stats`. The
/// calling thread's current device is left as it was. The host checks no id: it copies them once
/// into pinned memory for the upload (none when `device_ids` holds them on the tiers' device) and
/// reads ids[k] only at the positions it stages. The device checks every id as it routes it: an
/// id outside [0, num_nodes) is read from nowhere, staged never and probed never, and the gather
/// throws OutOfRange naming the first one once the device is done (`out` then unspecified, no
/// cache line given to it). With `output_after`, the tiers' streams wait on the device for the
/// work queued on it so far before they write the output.
/// `host` serves the rows the CPU stages (its pinned rows' CPU half, storage rows the cache missed).
void gather(GpuTiers& tiers, HostTiers& host, std::span<const int64_t> ids, TensorView out, GatherStats& stats,
            const DeviceIds& device_ids, const CudaStream* output_after);

}  // namespace graphtier::feature::cuda
