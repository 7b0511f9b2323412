// The static feature tiers a set of budgets gives. After `prepare`, node ids are in hotness order,
// so every static tier is a prefix range of ids and routing an id to its tier is a comparison.
#pragma once

#include <cstdint>

#include "graphtier/core/units.hpp"
#include "graphtier/graph/dataset.hpp"

namespace graphtier::feature {

/// Static feature tiers are prefixes of the (hotness-ordered) ids: [0, gpu_end) on the GPU,
/// [gpu_end, cpu_end) in pinned host memory, [cpu_end, num_nodes) on storage.
struct TierRanges {
  int64_t gpu_end = 0;
  int64_t cpu_end = 0;
  int64_t num_nodes = 0;
  int64_t row_stride = 0;
};

/// Rows that fit each budget, measured against the feature table's size (num_nodes * row_stride).
TierRanges tier_ranges(const graph::Manifest& manifest, const Budget& gpu, const Budget& cpu);

}  // namespace graphtier::feature
