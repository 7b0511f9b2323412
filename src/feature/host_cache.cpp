#include "host_cache.hpp"

namespace graphtier::feature {

HostCache::HostCache(int64_t num_lines, int64_t row_bytes, cache::Eviction eviction, uint64_t seed)
    : policy_(num_lines, eviction, seed),
      row_bytes_(row_bytes),
      rows_(num_lines > 0 ? allocate_direct_io_buffer(static_cast<std::size_t>(num_lines * row_bytes))
                          : DirectIoBuffer{nullptr, &std::free}) {}

}  // namespace graphtier::feature
