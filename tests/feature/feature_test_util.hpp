// Generated datasets for the feature tests, made once per layout and shared by the suite, and the
// reference X[ids] read straight from features.bin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "graphtier/core/dtype.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph_generate/generate.hpp"
#include "test_util.hpp"

namespace graphtier::test {

/// A generated dataset of `num_nodes` rows of `dim` values of `dtype` at `alignment`, cached for
/// the life of the test binary.
inline const std::string& feature_dataset(int64_t num_nodes, int64_t dim, DType dtype, int64_t alignment) {
  static TempDir root;
  static std::map<std::tuple<int64_t, int64_t, DType, int64_t>, std::string> made;
  const auto key = std::make_tuple(num_nodes, dim, dtype, alignment);
  if (const auto it = made.find(key); it != made.end()) return it->second;
  const std::string dir = root / ("d" + std::to_string(made.size()));
  graph::GenerateOptions options;
  options.num_nodes = num_nodes;
  options.num_edges = num_nodes * 4;
  options.num_classes = 3;
  options.feature_dim = dim;
  options.feature_dtype = dtype;
  options.alignment = alignment;
  options.seed = 7 + made.size();
  ThreadPool pool(2);
  graph::generate_dataset(dir, options, pool);
  return made.emplace(key, dir).first->second;
}

/// `n` ids uniform over [0, num_rows), seeded, about a quarter of them repeating an earlier id.
inline std::vector<int64_t> uniform_ids(std::size_t n, int64_t num_rows, uint64_t seed) {
  std::vector<int64_t> ids(n);
  for (std::size_t k = 0; k < n; ++k) {
    const uint64_t bits = philox_u64(seed, 1, k);
    const uint64_t pick = philox_u64(seed, 2, k);
    ids[k] = (k > 0 && bits % 4 == 0) ? ids[pick % k]
                                      : static_cast<int64_t>(bounded_u64(pick, static_cast<uint64_t>(num_rows)));
  }
  return ids;
}

/// X[ids] packed at row_bytes, from the file itself.
inline std::vector<std::byte> reference_rows(const std::string& dir, std::span<const int64_t> ids) {
  const graph::Dataset dataset = graph::Dataset::open(dir);
  const graph::FeatureLayout& layout = dataset.manifest().features;
  const auto row_bytes = static_cast<std::size_t>(layout.row_bytes());
  std::vector<std::byte> rows(ids.size() * row_bytes);
  const std::span<const std::byte> table = dataset.feature_bytes();
  for (std::size_t k = 0; k < ids.size(); ++k) {
    std::memcpy(rows.data() + k * row_bytes, table.data() + static_cast<std::size_t>(ids[k] * layout.row_stride), row_bytes);
  }
  return rows;
}

}  // namespace graphtier::test
