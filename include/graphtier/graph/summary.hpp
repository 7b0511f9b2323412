// Counts and degree statistics of a dataset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graphtier/core/thread_pool.hpp"
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

/// Edges of each relation of a typed dataset (counts of type_per_edge), [R]; empty when homogeneous.
std::vector<int64_t> edges_per_relation(const Dataset& dataset);

struct DatasetSummary {
  DegreeStats in_degree;
  DegreeStats out_degree;
  int64_t num_train = 0, num_valid = 0, num_test = 0;
  int64_t num_labeled = 0;
  uint64_t total_bytes = 0;
  std::vector<int64_t> edges_per_relation;  // typed datasets; empty otherwise
};

DatasetSummary summarize(const Dataset& dataset, ThreadPool& pool);

}  // namespace graphtier::graph
