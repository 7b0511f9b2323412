#include "host_cache.hpp"

namespace graphtier::feature {

HostCache::HostCache(int64_t num_lines, int64_t row_bytes, cache::Eviction eviction, uint64_t seed)
    : policy_(num_lines, eviction, seed),
      row_bytes_(row_bytes),
      rows_(static_cast<std::size_t>(num_lines * row_bytes)) {}

}  // namespace graphtier::feature
