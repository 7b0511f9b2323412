#include "loader/accumulator.hpp"

#include <cmath>

namespace graphtier::loader {

int64_t Accumulator::expected_reads(std::span<const int64_t> input_nodes, const feature::GatherStats& totals) const {
  int64_t in_storage = 0;
  for (const int64_t v : input_nodes) in_storage += v >= storage_begin_ ? 1 : 0;
  // The caches serve storage-range rows as well as host-range ones (the GPU cache); counting all
  // their hits as absorbed storage reads errs towards merging more, which only deepens the queue.
  const double absorbed = static_cast<double>(totals.host_cache.rows + totals.gpu_cache.rows);
  const double missed = static_cast<double>(totals.storage.rows);
  const double miss_rate = absorbed + missed > 0 ? missed / (absorbed + missed) : 1.0;
  return static_cast<int64_t>(std::ceil(static_cast<double>(in_storage) * miss_rate));
}

}  // namespace graphtier::loader
