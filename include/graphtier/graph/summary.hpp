// Counts and degree statistics of a dataset, and the static tier ranges a set of budgets gives.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/graph/dataset.hpp"

namespace graphtier::graph {

struct DegreeStats {
  int64_t min = 0;
  int64_t max = 0;
  double mean = 0;
  int64_t median = 0;
  int64_t p99 = 0;
  int64_t zero_count = 0;  // nodes with degree 0
};

/// Degree statistics of a list of degrees (nth_element, O(n)).
DegreeStats degree_stats(std::vector<int64_t> degrees);

/// Out-degree of every node: the number of times it appears as a source in the CSC.
std::vector<int64_t> out_degrees(const Dataset& dataset, ThreadPool& pool);

struct DatasetSummary {
  DegreeStats in_degree;
  DegreeStats out_degree;
  int64_t num_train = 0, num_valid = 0, num_test = 0;
  int64_t num_labeled = 0;
  uint64_t total_bytes = 0;
};

DatasetSummary summarize(const Dataset& dataset, ThreadPool& pool);

/// Static feature tiers are prefixes of the (hotness-ordered) ids: [0, gpu_end) on the GPU,
/// [gpu_end, cpu_end) in pinned host memory, [cpu_end, num_nodes) on storage.
struct TierRanges {
  int64_t gpu_end = 0;
  int64_t cpu_end = 0;
  int64_t num_nodes = 0;
  int64_t row_stride = 0;
};

/// Rows that fit each budget, measured against the feature table's size (num_nodes * row_stride).
TierRanges tier_ranges(const Manifest& manifest, const Budget& gpu, const Budget& cpu);

}  // namespace graphtier::graph
