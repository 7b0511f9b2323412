// The GPU tiers' routing decisions (graphtier/feature/gather_route.hpp) against the host routing
// they replace: the census of a request's ids, each position's route for a given zero-copy quota,
// the compaction of the positions the host stages or reads after a miss, and the quota of the
// pinned rows by their span. The device kernels (src/feature/cuda/gather_route.cu) only launch
// these functions, in the order the tests use them: census merged by + and max, ranks by an
// exclusive scan, selections in position order.
#include "graphtier/feature/gather_route.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <vector>

#include "graphtier/core/rng.hpp"

namespace graphtier::feature {
namespace {

constexpr double kMiB = 1 << 20;
__extension__ typedef __int128 Wide;  // the exact product, for the fixed-point reference

// The host routing the device routing replaces (src/feature/cuda/gpu_tiers.cu before it moved to
// the device), unchanged but for the quota, which is given: two passes, the first counting and
// spanning the pinned rows, the second routing each position and listing the staged ones.
struct HostRouting {
  int64_t hot = 0;
  int64_t pinned = 0;
  int64_t probe = 0;
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = -1;
  std::vector<uint8_t> route;
  std::vector<int64_t> cpu_ids, cpu_pos;
};

HostRouting host_routing(const std::vector<int64_t>& ids, const RouteBounds& b, int64_t zero_copy_quota) {
  HostRouting r;
  const auto n = static_cast<int64_t>(ids.size());
  for (int64_t k = 0; k < n; ++k) {
    const int64_t id = ids[k];
    if (id < b.gpu_end) {
      ++r.hot;
    } else if (id < b.cpu_end) {
      ++r.pinned;
      r.lo = std::min(r.lo, id);
      r.hi = std::max(r.hi, id);
    }
  }
  r.route.resize(ids.size());
  int64_t pinned_seen = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t id = ids[k];
    uint8_t route = kRouteStaged;
    if (id < 0 || id >= b.num_nodes) {
      route = kRouteInvalid;
    } else if (id < b.gpu_end) {
      route = kRouteHot;
    } else if (id < b.cpu_end) {
      if (pinned_seen++ < zero_copy_quota) {
        route = kRouteZeroCopy;
      } else if (b.cached) {
        route = kRouteStagedProbe;
      }
    } else if (b.cached) {
      route = kRouteProbe;
      ++r.probe;
    }
    r.route[k] = route;
    if (route == kRouteStaged || route == kRouteStagedProbe) {
      r.cpu_ids.push_back(id);
      r.cpu_pos.push_back(k);
    }
  }
  return r;
}

// The census as the kernel computes it: each of `threads` threads takes positions k, k + threads,
// ... (a grid-stride loop), and the partial censuses merge by + and max.
GatherCensus census_of(const std::vector<int64_t>& ids, const RouteBounds& b, int threads) {
  GatherCensus total;
  for (int t = 0; t < threads; ++t) {
    GatherCensus c;
    for (std::size_t k = static_cast<std::size_t>(t); k < ids.size(); k += static_cast<std::size_t>(threads)) {
      census_add(c, ids[k], b);
    }
    total.hot += c.hot;
    total.pinned += c.pinned;
    total.storage += c.storage;
    total.pinned_low_gap = std::max(total.pinned_low_gap, c.pinned_low_gap);
    total.pinned_high_end = std::max(total.pinned_high_end, c.pinned_high_end);
  }
  return total;
}

// Routes as the device computes them: ranks by an exclusive scan of the pinned flags (or none,
// when the quota is all or nothing), then route_of per position.
std::vector<uint8_t> device_routes(const std::vector<int64_t>& ids, const RouteBounds& b, int64_t quota, bool ranks) {
  std::vector<uint8_t> route(ids.size());
  int64_t before = 0;
  for (std::size_t k = 0; k < ids.size(); ++k) {
    route[k] = route_of(ids[k], b, ranks ? before : 0, quota);
    before += is_pinned(ids[k], b) ? 1 : 0;
  }
  return route;
}

// The selection of positions in order (cub::DeviceSelect keeps the input order).
template <typename Pred>
std::vector<int64_t> select_positions(std::size_t n, Pred pred) {
  std::vector<int64_t> out;
  for (std::size_t k = 0; k < n; ++k) {
    if (pred(k)) out.push_back(static_cast<int64_t>(k));
  }
  return out;
}

std::vector<int64_t> draw_ids(int64_t n, int64_t num_nodes, uint64_t seed) {
  std::vector<int64_t> ids(static_cast<std::size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    ids[static_cast<std::size_t>(k)] = static_cast<int64_t>(bounded_u64(philox_u64(seed, 7, static_cast<uint64_t>(k)),
                                                                        static_cast<uint64_t>(num_nodes)));
  }
  return ids;
}

// Tier layouts over 1000 ids: every tier, no hot tier, no pinned tier, no storage, pinned only.
std::vector<RouteBounds> layouts() {
  std::vector<RouteBounds> out;
  for (const bool cached : {false, true}) {
    for (const auto& [gpu_end, cpu_end] : {std::pair<int64_t, int64_t>{100, 600}, {0, 400}, {300, 300}, {200, 1000},
                                          {0, 1000}, {1000, 1000}}) {
      out.push_back(RouteBounds{gpu_end, cpu_end, cached, 1000});
    }
  }
  return out;
}

TEST(GatherRouteTest, CensusMatchesTheHostPassInAnyMergeOrder) {
  for (const RouteBounds& b : layouts()) {
    for (const uint64_t seed : {1, 2, 3}) {
      const std::vector<int64_t> ids = draw_ids(997, 1000, seed);
      const HostRouting host = host_routing(ids, b, 0);
      for (const int threads : {1, 7, 256, 2000}) {
        const GatherCensus c = census_of(ids, b, threads);
        EXPECT_EQ(c.hot, host.hot);
        EXPECT_EQ(c.pinned, host.pinned);
        EXPECT_EQ(c.storage, static_cast<int64_t>(ids.size()) - host.hot - host.pinned);
        if (host.pinned > 0) {
          EXPECT_EQ(b.cpu_end - c.pinned_low_gap, host.lo);
          EXPECT_EQ(c.pinned_high_end - 1, host.hi);
          EXPECT_EQ(census_span_bytes(c, b, 64), (host.hi - host.lo + 1) * 64);
        } else {
          EXPECT_EQ(census_span_bytes(c, b, 64), 0);
        }
      }
    }
  }
}

TEST(GatherRouteTest, RoutesAndStagedPositionsMatchTheHostRoutingAtEveryQuota) {
  for (const RouteBounds& b : layouts()) {
    const std::vector<int64_t> ids = draw_ids(1500, 1000, 9);
    const int64_t pinned = host_routing(ids, b, 0).pinned;
    for (const int64_t quota : {int64_t{0}, int64_t{1}, pinned / 3, pinned - 1, pinned}) {
      if (quota < 0) continue;
      const HostRouting host = host_routing(ids, b, quota);
      EXPECT_EQ(device_routes(ids, b, quota, /*ranks=*/true), host.route) << "quota " << quota;
      // Without ranks (the table never splits) the quota is all or nothing, and rank 0 decides the same.
      if (quota == 0 || quota == pinned) {
        EXPECT_EQ(device_routes(ids, b, quota, /*ranks=*/false), host.route);
      }
      // The staged positions, compacted in order, and the ids the host reads at them.
      const std::vector<uint8_t> route = device_routes(ids, b, quota, true);
      const std::vector<int64_t> staged = select_positions(ids.size(), [&](std::size_t k) { return is_staged(route[k]); });
      EXPECT_EQ(staged, host.cpu_pos);
      std::vector<int64_t> staged_ids;
      for (const int64_t k : staged) staged_ids.push_back(ids[static_cast<std::size_t>(k)]);
      EXPECT_EQ(staged_ids, host.cpu_ids);
    }
  }
}

// A store that stages nothing before the serve kernel (all pinned rows zero-copy, storage only
// behind a GPU cache) lets the serve kernel route each position alone: the same routes as the full
// routing with the census's quota (all the pinned rows), and no position staged.
TEST(GatherRouteTest, RoutesAloneMatchTheHostRoutingWhenNothingIsStaged) {
  int64_t checked = 0;
  for (const RouteBounds& b : layouts()) {
    const bool storage = b.cpu_end < 1000;
    if (storage && !b.cached) continue;  // storage rows without a cache are staged
    const std::vector<int64_t> ids = draw_ids(1500, 1000, 12);
    const GatherCensus c = census_of(ids, b, 256);
    const HostRouting host = host_routing(ids, b, c.pinned);
    EXPECT_TRUE(host.cpu_pos.empty());
    std::vector<uint8_t> alone(ids.size());
    for (std::size_t k = 0; k < ids.size(); ++k) alone[k] = route_alone(ids[k], b);
    EXPECT_EQ(alone, host.route) << "bounds " << b.gpu_end << ", " << b.cpu_end << ", cached " << b.cached;
    ++checked;
  }
  EXPECT_EQ(checked, 9);
}

// Ids checked on the device (device ids): one outside [0, num_nodes) routes nowhere, at every
// layout and quota, and changes no other position's route (it is never a pinned row, so neither
// the census's pinned count and span nor the ranks see it).
TEST(GatherRouteTest, IdsOutsideTheTableRouteNowhereAndMoveNoOtherRoute) {
  const int64_t bad[] = {-1, 1000, int64_t{1} << 40, std::numeric_limits<int64_t>::min(),
                         std::numeric_limits<int64_t>::max()};
  for (const RouteBounds& b : layouts()) {
    std::vector<int64_t> ids = draw_ids(600, 1000, 21);
    const std::vector<int64_t> valid = ids;
    for (std::size_t j = 0; j < std::size(bad); ++j) ids[37 * j + 5] = bad[j];
    const HostRouting host = host_routing(ids, b, 0);
    const int64_t pinned = host.pinned;
    EXPECT_EQ(census_of(ids, b, 7).pinned, pinned);
    for (const int64_t quota : {int64_t{0}, pinned / 2, pinned}) {
      const std::vector<uint8_t> route = device_routes(ids, b, quota, /*ranks=*/true);
      EXPECT_EQ(route, host_routing(ids, b, quota).route);
      const std::vector<uint8_t> clean = device_routes(valid, b, quota, true);
      for (std::size_t k = 0; k < ids.size(); ++k) {
        const bool invalid = ids[k] < 0 || ids[k] >= b.num_nodes;
        EXPECT_EQ(route[k] == kRouteInvalid, invalid) << "position " << k;
        EXPECT_FALSE(invalid && (is_staged(route[k]) || probes_cache(route[k]))) << "position " << k;
        // Every other position routes as it would without the bad ids, up to the quota's rank.
        if (!invalid && !is_pinned(ids[k], b)) {
          EXPECT_EQ(route[k], clean[k]) << "position " << k;
        }
      }
    }
    for (const int64_t id : bad) EXPECT_EQ(route_alone(id, b), kRouteInvalid);
  }
}

TEST(GatherRouteTest, ServeSourcesAreTheArchitecturesTable) {
  // docs/architecture.md, "GPU software cache": hot rows from the hot tier; a probed row from its
  // line when it hit, else a zero-copy row from pinned memory and a storage row left for the host;
  // a staged row never (the host gathered it, hit or not).
  struct Case {
    uint8_t route;
    bool probed;
    ServeSource miss;
    ServeSource hit;
  };
  const Case cases[] = {{kRouteHot, false, kServeHot, kServeHot},
                        {kRouteZeroCopy, true, kServePinned, kServeLine},
                        {kRouteStaged, false, kServeNone, kServeNone},
                        {kRouteProbe, true, kServeNone, kServeLine},
                        {kRouteStagedProbe, true, kServeNone, kServeNone},
                        {kRouteInvalid, false, kServeNone, kServeNone}};
  for (const Case& c : cases) {
    SCOPED_TRACE(static_cast<int>(c.route));
    EXPECT_EQ(probes_cache(c.route), c.probed);
    EXPECT_EQ(serve_source(c.route, false), c.miss);
    // Only a probed position can hit.
    if (c.probed) {
      EXPECT_EQ(serve_source(c.route, true), c.hit);
    }
  }
}

TEST(GatherRouteTest, MissedPositionsMatchTheHostScanOfTheHitFlags) {
  const RouteBounds b{100, 400, true, 1000};
  const std::vector<int64_t> ids = draw_ids(2000, 1000, 4);
  const HostRouting host = host_routing(ids, b, 50);
  std::vector<uint8_t> hit(ids.size());
  for (std::size_t k = 0; k < ids.size(); ++k) hit[k] = philox_u64(5, 0, k) % 3 == 0 ? 1 : 0;
  // The host's former loop over every position after the mid-way wait.
  std::vector<int64_t> expected;
  for (std::size_t k = 0; k < ids.size(); ++k) {
    if (host.route[k] == kRouteProbe && hit[k] == 0) expected.push_back(static_cast<int64_t>(k));
  }
  ASSERT_FALSE(expected.empty());
  const std::vector<uint8_t> route = device_routes(ids, b, 50, true);
  EXPECT_EQ(select_positions(ids.size(), [&](std::size_t k) { return route[k] == kRouteProbe && hit[k] == 0; }),
            expected);
}

TEST(GatherRouteTest, SpanBucketsAreEighthOctavesInOrder) {
  for (int b = 24; b < kSpanBuckets; ++b) {
    EXPECT_EQ(span_bucket(span_bucket_floor(b)), b) << b;
    if (b + 1 < kSpanBuckets) {
      EXPECT_LT(span_bucket_floor(b), span_bucket_floor(b + 1));
      EXPECT_EQ(span_bucket(span_bucket_floor(b + 1) - 1), b);
    }
  }
  int previous = 0;
  for (uint64_t span = 1; span < (uint64_t{1} << 62); span = span * 3 / 2 + 1) {
    const int bucket = span_bucket(span);
    EXPECT_GE(bucket, previous);
    EXPECT_LT(bucket, kSpanBuckets);
    EXPECT_LE(span_bucket_floor(bucket), span);
    previous = bucket;
  }
  EXPECT_EQ(span_bucket(uint64_t{1} << 40), 40 * kSpanBucketsPerOctave);
  EXPECT_EQ(span_bucket((uint64_t{1} << 40) + (uint64_t{1} << 39)), 40 * kSpanBucketsPerOctave + 4);
}

TEST(GatherRouteTest, ShareOfIsExactRoundingForAnyCount) {
  for (uint64_t i = 0; i < 2000; ++i) {
    const auto share = static_cast<uint32_t>(bounded_u64(philox_u64(6, 0, i), static_cast<uint64_t>(kShareOne) + 1));
    const auto pinned = static_cast<int64_t>(philox_u64(6, 1, i) >> (i % 2 == 0 ? 14 : 40));
    const Wide exact = (static_cast<Wide>(pinned) * share + kShareOne / 2) >> kShareBits;
    EXPECT_EQ(share_of(share, pinned), static_cast<int64_t>(exact)) << share << " x " << pinned;
  }
  EXPECT_EQ(share_of(static_cast<uint32_t>(kShareOne), int64_t{1} << 50), int64_t{1} << 50);
  EXPECT_EQ(share_of(0, int64_t{1} << 50), 0);
}

TEST(GatherRouteTest, QuotaIsTheFractionAtTheSpansBucketTimesThePinnedRows) {
  PinnedPaths p;  // the floor's 128 B figures (pinned_split_test.cpp)
  p.near_span_bytes = 256 * kMiB;
  p.near_zero_copy_rows_per_second = 400e6;
  p.tier_bytes = 16 * 1024 * kMiB;
  p.zero_copy_rows_per_second = 32e6;
  p.cpu_copy_rows_per_second = 156e6;
  const SplitTable table = split_table(p);
  EXPECT_TRUE(splits_to_cpu(table));
  const RouteBounds b{0, int64_t{1} << 30, false, int64_t{1} << 30};
  const int64_t stride = 128;
  for (const int64_t rows_spanned : {int64_t{1}, int64_t{1000}, int64_t{1} << 21, int64_t{3} << 22, int64_t{1} << 27,
                                     (int64_t{1} << 30) - 5}) {
    GatherCensus c;
    c.pinned = 65536;
    c.pinned_low_gap = b.cpu_end - 3;                  // lowest id 3
    c.pinned_high_end = 3 + rows_spanned;              // highest id 3 + rows_spanned - 1
    const auto span = static_cast<uint64_t>(rows_spanned * stride);
    ASSERT_EQ(census_span_bytes(c, b, stride), static_cast<int64_t>(span));
    const double at_floor = zero_copy_fraction(p, static_cast<double>(span_bucket_floor(span_bucket(span))));
    const int64_t quota = zero_copy_quota(table, c, b, stride);
    // The table's share is the fraction at the bucket's floor, in 24-bit fixed point.
    EXPECT_NEAR(static_cast<double>(quota), at_floor * static_cast<double>(c.pinned), 1.0) << span;
    // Within 1/8 octave of the span, the exact fraction (it falls with the span) is close.
    const double exact = zero_copy_fraction(p, static_cast<double>(span));
    EXPECT_LE(exact, at_floor + 1e-12);
    EXPECT_NEAR(exact, at_floor, 0.05) << span;
  }
  // Forced paths: every pinned row one way.
  GatherCensus c;
  c.pinned = 12345;
  c.pinned_low_gap = 10;
  c.pinned_high_end = b.cpu_end;
  EXPECT_EQ(zero_copy_quota(uniform_split_table(static_cast<uint32_t>(kShareOne)), c, b, stride), 12345);
  EXPECT_EQ(zero_copy_quota(uniform_split_table(0), c, b, stride), 0);
  EXPECT_FALSE(splits_to_cpu(uniform_split_table(static_cast<uint32_t>(kShareOne))));
  EXPECT_TRUE(splits_to_cpu(uniform_split_table(0)));
  c.pinned = 0;
  EXPECT_EQ(zero_copy_quota(table, c, b, stride), 0);
}

}  // namespace
}  // namespace graphtier::feature
