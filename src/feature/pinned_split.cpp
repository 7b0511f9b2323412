#include "graphtier/feature/pinned_split.hpp"

#include "graphtier/feature/gather_route.hpp"

#include <algorithm>
#include <cmath>

namespace graphtier::feature {

double zero_copy_rate(const PinnedPaths& p, double span_bytes) {
  const double near = p.near_span_bytes;
  const double far = p.tier_bytes;
  if (near <= 0 || far <= near || span_bytes >= far) return p.zero_copy_rows_per_second;
  if (span_bytes <= near) return p.near_zero_copy_rows_per_second;
  // The floor's figures fall roughly as a power of the span between the two.
  const double t = std::log(span_bytes / near) / std::log(far / near);
  return std::exp(std::log(p.near_zero_copy_rows_per_second) +
                  t * (std::log(p.zero_copy_rows_per_second) - std::log(p.near_zero_copy_rows_per_second)));
}

double split_share(double zc, double cpu, double link) {
  if (zc <= 0 && cpu <= 0) return 0;
  if (zc > kPinnedSplitRatio * cpu) return 1;
  if (cpu > kPinnedSplitRatio * zc) return 0;
  const double proportional = zc / (zc + cpu);
  if (link <= 0 || zc + cpu <= link) return proportional;
  return std::max(proportional, std::min(1.0, zc / link));
}

double zero_copy_fraction(const PinnedPaths& p, double span_bytes) {
  return split_share(zero_copy_rate(p, span_bytes), p.cpu_copy_rows_per_second, p.link_rows_per_second);
}

SplitTable split_table(const PinnedPaths& paths) {
  SplitTable t;
  for (int b = 0; b < kSpanBuckets; ++b) {
    const double f = zero_copy_fraction(paths, static_cast<double>(span_bucket_floor(b)));
    const double fixed = std::round(std::clamp(f, 0.0, 1.0) * static_cast<double>(kShareOne));
    t.share[b] = static_cast<uint32_t>(fixed);
  }
  return t;
}

SplitTable uniform_split_table(uint32_t share) {
  SplitTable t;
  for (uint32_t& s : t.share) s = share;
  return t;
}

bool splits_to_cpu(const SplitTable& t) {
  for (const uint32_t s : t.share) {
    if (s < static_cast<uint32_t>(kShareOne)) return true;
  }
  return false;
}

}  // namespace graphtier::feature
