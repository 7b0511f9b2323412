// How one request's pinned-tier rows are split between the GPU's zero-copy reads and the CPU
// gather into pinned staging plus one DMA copy (docs/architecture.md, "Feature store and tiers"
// and "Performance floor"). The zero-copy rate depends on the span of the pinned region the rows
// touch (the GPU's translation reach of host mappings: 51 GB/s within 256 MiB, 4 GB/s over 16 GiB
// at 128 B rows), the CPU path's hardly at all; so both are measured at start-up at the store's
// row size, zero-copy at two spans, and each request is split by its own span. The GPU tiers
// evaluate the split on the device from a table of these functions by span in eighths of an
// octave (split_table, graphtier/feature/gather_route.hpp).
#pragma once

namespace graphtier::feature {

/// The two transfer paths of the pinned host tier to the GPU, measured at start-up on random rows
/// of the tier at the store's row size (CUDA builds with a host tier; zeros otherwise).
struct PinnedPaths {
  double zero_copy_rows_per_second = 0;  // GPU threads reading pinned memory, rows over the whole tier
  double cpu_copy_rows_per_second = 0;   // CPU gather into pinned staging + one DMA copy
  /// Share of a request's pinned-tier rows given to zero-copy when they span the whole tier.
  double zero_copy_fraction = 0;
  double tier_bytes = 0;                      // the whole tier's span
  double near_span_bytes = 0;                 // the narrow span measured (0: the tier is no wider)
  double near_zero_copy_rows_per_second = 0;  // zero-copy over rows within near_span_bytes
  /// The host-to-device link: one DMA copy of pinned rows, in rows/s at the store's row size (0:
  /// not measured). Both paths cross it, so together they cannot go faster.
  double link_rows_per_second = 0;
};

/// Above this ratio of rates the slower path is not worth the split's bookkeeping.
inline constexpr double kPinnedSplitRatio = 8.0;

/// Zero-copy rows/s for rows spread over `span_bytes`: the narrow span's rate at or below it, the
/// whole tier's at or above the tier's size, log-linear in the span between them.
double zero_copy_rate(const PinnedPaths& paths, double span_bytes);

/// The zero-copy share when both paths run at once, each given rows in proportion to its rate
/// (1 or 0 when one path is over kPinnedSplitRatio times the other; 0 when neither was measured).
/// Both cross one link of `link_rows_per_second` (0: unbounded): when the two rates together
/// exceed it, the request takes the link's time whatever the split, so zero-copy (no host wait, no
/// staging) keeps all it can carry in that time, min(1, zero-copy / link), and the CPU the rest.
double split_share(double zero_copy_rows_per_second, double cpu_copy_rows_per_second,
                   double link_rows_per_second = 0);

/// The zero-copy share of a request whose pinned-tier rows span `span_bytes` ((max id - min id +
/// 1) x row stride).
double zero_copy_fraction(const PinnedPaths& paths, double span_bytes);

}  // namespace graphtier::feature
