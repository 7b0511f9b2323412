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
std::unique_ptr<GpuTiers, GpuTiersDeleter> make_gpu_tiers(FeatureStore::Impl& store, const FeatureStoreOptions& options);

void announce(GpuTiers& tiers, std::span<const int64_t> ids);
void consume(GpuTiers& tiers, std::span<const int64_t> ids);

/// out[k] = X[ids[k]] into device memory (or host memory through a device bounce), every tier
/// working at once: GPU kernels for the hot tier, cache hits and zero-copy rows are queued on the
/// tiers' stream while the CPU gathers the rest into pinned staging. Adds to `stats`.
void gather(FeatureStore::Impl& store, std::span<const int64_t> ids, TensorView out, GatherStats& stats);

}  // namespace graphtier::feature::cuda
