// The GPU tiers of a feature store (CUDA builds only): the hot prefix in device memory, the GPU
// software cache, the pinned host tier read by zero-copy or CPU gather + DMA, and storage rows
// staged through pinned memory. Plain C++: the CUDA types stay in gpu_tiers.cu.
#pragma once

#include <cstdint>
#include <span>

#include "feature_store_impl.hpp"

namespace graphtier::feature::cuda {

/// Allocates and loads the GPU hot tier, the GPU cache and the staging buffers on
/// options.device, and measures the two paths of the pinned tier (fills store.tiers.pinned_paths).
/// The calling thread's current device is left as it was.
std::unique_ptr<GpuTiers, GpuTiersDeleter> make_gpu_tiers(FeatureStore::Impl& store, const FeatureStoreOptions& options);

/// Window buffering for the GPU cache: the ids (in [gpu_end, num_nodes)) cross once through
/// pinned memory; the counts change on the device, in stream order with the gathers.
void announce(GpuTiers& tiers, std::span<const int64_t> ids);
void consume(GpuTiers& tiers, std::span<const int64_t> ids);

/// out[k] = X[ids[k]] into device memory (or host memory through a device bounce), every tier
/// working at once: one serve kernel for the hot rows, GPU cache hits and zero-copy rows is queued
/// on the tiers' stream while the CPU gathers the pinned tier's CPU half (split by the rows' span)
/// into pinned staging; storage rows the cache missed follow, then one batched cache update. One
/// stream synchronisation at the end, one more mid-way only with a GPU cache and storage rows
/// (docs/architecture.md, "GPU software cache"). Adds to `stats`. The calling thread's current
/// device is left as it was. With `device_ids` on the tiers' device, the kernels read the ids
/// there and only the routes go up.
void gather(FeatureStore::Impl& store, std::span<const int64_t> ids, TensorView out, GatherStats& stats,
            const DeviceIds& device_ids);

}  // namespace graphtier::feature::cuda
