// The host half of a gather: rows of the host tier, the host cache and storage into host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "feature_store_impl.hpp"

namespace graphtier::feature::cpu {

/// out[k * row_bytes] = X[ids[k]] for ids in [gpu_end, num_nodes) (validated by the caller).
/// `out` is host or pinned memory. Storage rows are read in chunks by one task of the pool while
/// the other tasks copy host-tier rows and cache hits, then scatter the previous chunk's staged
/// rows to the output and to the cache lines they fill. Adds to `stats`.
void gather_host(FeatureStore::Impl& store, std::span<const int64_t> ids, std::byte* out, GatherStats& stats);

}  // namespace graphtier::feature::cpu
