// The static feature tiers a set of budgets gives. After `prepare`, node ids are in hotness order,
// so every static tier is a prefix range of ids and routing an id to its tier is a comparison.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

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

/// One node type's feature table of a typed dataset, for the tiers' split between types.
struct TypedTable {
  int64_t rows = 0;                 // nodes of the type
  int64_t row_stride = 0;           // bytes a row takes in a tier (0: the type has no features)
  std::span<const double> hotness;  // [rows] non-increasing expected reads, or empty: all rows alike
};

/// The rows of each type that a tier of `budget_bytes` holds after the `taken[t]` rows each type
/// has in the tiers before it: rows chosen across types by expected reads per byte (hotness /
/// row_stride; a type without hotness counts 1 a row), best first, ties to the lower type, so that
/// rows of different widths are never counted as equal. Each type's rows are a prefix of what it
/// has left (its hotness does not increase), and a row that does not fit what is left of the
/// budget ends its type's share. Deterministic; O(types x switches between types x log rows).
/// Throws InvalidArgument for mismatched sizes, negative counts or hotness of the wrong length.
std::vector<int64_t> typed_tier_rows(std::span<const TypedTable> tables, std::span<const int64_t> taken,
                                     int64_t budget_bytes);

/// Per type, the static tiers that the budgets give (a percent is of all the tables' bytes
/// together): [0, gpu_end) on the GPU, [gpu_end, cpu_end) in host memory, the rest on storage,
/// each type's ids local to it (0 .. rows), chosen by typed_tier_rows.
std::vector<TierRanges> typed_tier_ranges(std::span<const TypedTable> tables, const Budget& gpu, const Budget& cpu);

}  // namespace graphtier::feature
