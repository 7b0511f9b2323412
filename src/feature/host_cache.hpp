// The host cache: lines of host memory holding storage rows, placed by a cache::CachePolicy.
#pragma once

#include <cstddef>
#include <cstdint>

#include "graphtier/cache/cache_policy.hpp"
#include "graphtier/core/file.hpp"

namespace graphtier::feature {

class HostCache {
 public:
  /// `num_lines` rows of `row_bytes` each (0: no cache).
  HostCache(int64_t num_lines, int64_t row_bytes, cache::Eviction eviction, uint64_t seed);

  cache::CachePolicy& policy() noexcept { return policy_; }
  int64_t num_lines() const noexcept { return policy_.num_slots(); }
  std::byte* line(int64_t slot) noexcept { return rows_.get() + static_cast<std::size_t>(slot * row_bytes_); }

 private:
  cache::CachePolicy policy_;
  int64_t row_bytes_;
  DirectIoBuffer rows_;  // aligned for O_DIRECT: a fill of whole blocks is read into its line in place
};

}  // namespace graphtier::feature
