// The feature tables of a typed dataset (docs/format.md, Heterogeneous datasets): one FeatureStore
// per node type that has features, each over its own `features.<type>.bin` with its own dim, dtype
// and row layout, the options' budgets shared between the types by expected reads per byte.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graphtier/feature/feature_store.hpp"
#include "graphtier/feature/tier_ranges.hpp"
#include "graphtier/graph/dataset.hpp"

namespace graphtier::feature {

class TypedFeatureStore {
 public:
  /// Opens a store for each node type of the typed `dataset` that has a feature table. The static
  /// budgets (gpu_hot, cpu_buffer; a percent is of all the tables' bytes) go to rows of every type
  /// by expected reads per byte (typed_tier_ranges, with the dataset's hotness.bin when it has
  /// one: `prepare` orders each type's ids by it); each cache budget is shared in proportion to the
  /// bytes each type keeps beyond its static tiers. The other options apply to every type's store.
  /// Throws InvalidArgument for a homogeneous dataset (use FeatureStore) or one whose types have no
  /// features, and what FeatureStore throws.
  TypedFeatureStore(const graph::Dataset& dataset, const FeatureStoreOptions& options, ThreadPool& pool);
  ~TypedFeatureStore();
  TypedFeatureStore(const TypedFeatureStore&) = delete;
  TypedFeatureStore& operator=(const TypedFeatureStore&) = delete;

  int32_t num_types() const noexcept { return static_cast<int32_t>(stores_.size()); }
  /// Type `type`'s store (its ids local: global id - offset(type)), or null when it has no features.
  FeatureStore* store(int32_t type) const;
  /// The first global id of `type`.
  int64_t offset(int32_t type) const;

  /// out[k] = the features of global id ids[k], every id of node type `type` (OutOfRange naming
  /// the first that is not, before anything is read); `out` as FeatureStore::gather for that
  /// type's table. InvalidArgument for a type without features. Thread-safe as FeatureStore::gather.
  GatherStats gather(int32_t type, std::span<const int64_t> ids, TensorView out) const;

 private:
  std::vector<int64_t> offsets_;  // [T + 1]
  std::vector<std::unique_ptr<FeatureStore>> stores_;
};

/// Per type, the tiers the options' budgets give a typed dataset's tables (what TypedFeatureStore
/// opens its stores with; a type without features gets an empty layout).
std::vector<TierLayout> typed_tiers(const graph::Dataset& dataset, const FeatureStoreOptions& options);

}  // namespace graphtier::feature
