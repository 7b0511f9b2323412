#include "graphtier/feature/tier_ranges.hpp"

#include <algorithm>

namespace graphtier::feature {

TierRanges tier_ranges(const graph::Manifest& manifest, const Budget& gpu, const Budget& cpu) {
  TierRanges t;
  t.num_nodes = manifest.num_nodes;
  t.row_stride = manifest.features.row_stride;
  if (t.row_stride == 0) return t;
  const int64_t table = manifest.num_nodes * t.row_stride;
  t.gpu_end = std::min(manifest.num_nodes, gpu.resolve(table) / t.row_stride);
  t.cpu_end = std::min(manifest.num_nodes, t.gpu_end + cpu.resolve(table) / t.row_stride);
  return t;
}

}  // namespace graphtier::feature
