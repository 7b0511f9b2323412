#include "accumulator.hpp"

#include <cmath>

namespace graphtier::loader {
namespace {

int64_t count_storage_ids(std::span<const int64_t> ids, int64_t storage_begin) {
  int64_t n = 0;
  for (const int64_t v : ids) n += v >= storage_begin ? 1 : 0;
  return n;
}

}  // namespace

int64_t Accumulator::expected_reads(std::span<const int64_t> input_nodes) const {
  // Per storage-range id, not per cache hit: the GPU cache also holds host-range rows, whose hits
  // absorb no storage read.
  const double miss_rate =
      storage_ids_ > 0 ? static_cast<double>(storage_reads_) / static_cast<double>(storage_ids_) : 1.0;
  return static_cast<int64_t>(std::ceil(static_cast<double>(count_storage_ids(input_nodes, storage_begin_)) * miss_rate));
}

void Accumulator::record(std::span<const int64_t> ids, const feature::GatherStats& done) {
  storage_ids_ += count_storage_ids(ids, storage_begin_);
  storage_reads_ += done.storage.rows;
}

int64_t TypedAccumulator::add_expected(std::span<const std::vector<int64_t>> ids_by_type,
                                       std::span<int64_t> expected) const {
  int64_t sum = 0;
  for (std::size_t t = 0; t < types_.size() && t < ids_by_type.size(); ++t) {
    if (!types_[t]) continue;
    const int64_t reads = types_[t]->expected_reads(ids_by_type[t]);
    expected[t] += reads;
    sum += reads;
  }
  return sum;
}

void TypedAccumulator::record(int32_t type, std::span<const int64_t> ids, const feature::GatherStats& done) {
  std::optional<Accumulator>& a = types_[static_cast<std::size_t>(type)];
  if (a) a->record(ids, done);
}

bool TypedAccumulator::wants_more(std::span<const int64_t> expected, int merged) const noexcept {
  bool reads = false;
  for (std::size_t t = 0; t < types_.size() && t < expected.size(); ++t) {
    if (!types_[t]) continue;
    if (expected[t] >= types_[t]->target_depth()) return false;
    reads = reads || expected[t] > 0;
  }
  return reads && merged < max_merge_;
}

}  // namespace graphtier::loader
