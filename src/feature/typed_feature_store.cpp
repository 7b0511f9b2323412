#include "graphtier/feature/typed_feature_store.hpp"

#include <algorithm>

#include "graphtier/core/error.hpp"

namespace graphtier::feature {

namespace {

// Type t's slice of the dataset's hotness (non-increasing within each type), or none.
std::span<const double> type_hotness(const graph::Dataset& dataset, int32_t t) {
  if (!dataset.has_hotness()) return {};
  const graph::HeteroSchema& schema = dataset.schema();
  const int64_t begin = schema.node_type_offset[static_cast<std::size_t>(t)];
  return dataset.hotness().subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(schema.num_nodes_of(t)));
}

}  // namespace

std::vector<TierLayout> typed_tiers(const graph::Dataset& dataset, const FeatureStoreOptions& options) {
  const graph::HeteroSchema& schema = dataset.schema();
  GRAPHTIER_EXPECTS(!schema.empty(), InvalidArgument, dataset.dir(),
                    ": the dataset has one node set (a homogeneous dataset): open a FeatureStore");
  std::vector<TypedTable> tables;
  for (int32_t t = 0; t < schema.num_node_types(); ++t) {
    const graph::FeatureLayout& layout = schema.node_types[static_cast<std::size_t>(t)].features;
    tables.push_back({schema.num_nodes_of(t), layout.dim > 0 ? layout.row_stride : 0, type_hotness(dataset, t)});
  }
  const std::vector<TierRanges> ranges = typed_tier_ranges(tables, options.budgets.gpu_hot, options.budgets.cpu_buffer);
  // The caches: each budget in proportion to the bytes a type keeps beyond its static tiers.
  int64_t all_bytes = 0;
  int64_t rest_bytes = 0;
  for (std::size_t t = 0; t < tables.size(); ++t) {
    all_bytes += tables[t].rows * tables[t].row_stride;
    rest_bytes += (tables[t].rows - ranges[t].cpu_end) * tables[t].row_stride;
  }
  std::vector<TierLayout> out(tables.size());
  for (std::size_t t = 0; t < tables.size(); ++t) {
    out[t].ranges = ranges[t];
    const int64_t row_bytes = schema.node_types[t].features.row_bytes();
    if (row_bytes == 0 || rest_bytes == 0) continue;
    const double share = static_cast<double>((tables[t].rows - ranges[t].cpu_end) * tables[t].row_stride) /
                         static_cast<double>(rest_bytes);
    const auto lines = [&](const Budget& budget, int64_t end) {
      const auto bytes = static_cast<int64_t>(static_cast<double>(budget.resolve(all_bytes)) * share);
      return std::min(bytes / row_bytes, tables[t].rows - end);
    };
    out[t].gpu_cache_rows = lines(options.budgets.gpu_cache, ranges[t].gpu_end);
    out[t].host_cache_rows = lines(options.budgets.host_cache, ranges[t].cpu_end);
  }
  return out;
}

TypedFeatureStore::TypedFeatureStore(const graph::Dataset& dataset, const FeatureStoreOptions& options,
                                     ThreadPool& pool) {
  const std::vector<TierLayout> tiers = typed_tiers(dataset, options);
  const graph::HeteroSchema& schema = dataset.schema();
  offsets_ = schema.node_type_offset;
  for (int32_t t = 0; t < schema.num_node_types(); ++t) {
    const graph::NodeTypeEntry& type = schema.node_types[static_cast<std::size_t>(t)];
    if (type.features.dim == 0) {
      stores_.push_back(nullptr);
      continue;
    }
    const graph::FileEntry& file = dataset.manifest().files.at(graph::HeteroSchema::feature_array(type.name));
    const FeatureTable table{dataset.dir() + "/" + file.path, type.features, schema.num_nodes_of(t)};
    stores_.push_back(std::make_unique<FeatureStore>(table, tiers[static_cast<std::size_t>(t)], options, pool));
  }
  GRAPHTIER_EXPECTS(std::any_of(stores_.begin(), stores_.end(), [](const auto& s) { return s != nullptr; }),
                    InvalidArgument, dataset.dir(), ": no node type has features");
}

TypedFeatureStore::~TypedFeatureStore() = default;

FeatureStore* TypedFeatureStore::store(int32_t type) const {
  GRAPHTIER_EXPECTS(type >= 0 && type < num_types(), OutOfRange, "node type ", type, " is outside [0, ", num_types(),
                    ")");
  return stores_[static_cast<std::size_t>(type)].get();
}

int64_t TypedFeatureStore::offset(int32_t type) const {
  GRAPHTIER_EXPECTS(type >= 0 && type < num_types(), OutOfRange, "node type ", type, " is outside [0, ", num_types(),
                    ")");
  return offsets_[static_cast<std::size_t>(type)];
}

GatherStats TypedFeatureStore::gather(int32_t type, std::span<const int64_t> ids, TensorView out) const {
  FeatureStore* s = store(type);
  GRAPHTIER_EXPECTS(s != nullptr, InvalidArgument, "node type ", type, " has no features");
  const int64_t begin = offsets_[static_cast<std::size_t>(type)];
  const int64_t end = offsets_[static_cast<std::size_t>(type) + 1];
  std::vector<int64_t> local(ids.size());
  for (std::size_t k = 0; k < ids.size(); ++k) {
    GRAPHTIER_EXPECTS(ids[k] >= begin && ids[k] < end, OutOfRange, "node id ", ids[k], " at position ", k,
                      " is not of node type ", type, " (ids [", begin, ", ", end, "))");
    local[k] = ids[k] - begin;
  }
  return s->gather(local, out);
}

}  // namespace graphtier::feature
