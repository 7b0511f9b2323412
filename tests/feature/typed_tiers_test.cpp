// The static tiers' split between the node types of a typed dataset (tier_ranges.hpp): golden
// cases, and the greedy choice against a naive one-row-at-a-time reference on random tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/feature/tier_ranges.hpp"

namespace graphtier::feature {
namespace {

// Every remaining row of every type in order of reads per byte (ties: lower type, then lower id);
// a row that fits is taken, one that does not closes its type.
std::vector<int64_t> naive_rows(const std::vector<TypedTable>& tables, const std::vector<int64_t>& taken,
                                int64_t budget) {
  std::vector<std::tuple<double, std::size_t, int64_t>> rows;
  for (std::size_t t = 0; t < tables.size(); ++t) {
    if (tables[t].row_stride == 0) continue;
    for (int64_t i = taken[t]; i < tables[t].rows; ++i) {
      const double reads = tables[t].hotness.empty() ? 1.0 : tables[t].hotness[static_cast<std::size_t>(i)];
      rows.emplace_back(reads / static_cast<double>(tables[t].row_stride), t, i);
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) > std::get<0>(b);
    if (std::get<1>(a) != std::get<1>(b)) return std::get<1>(a) < std::get<1>(b);
    return std::get<2>(a) < std::get<2>(b);
  });
  std::vector<int64_t> out(tables.size(), 0);
  std::vector<bool> closed(tables.size(), false);
  for (const auto& [ratio, t, i] : rows) {
    if (closed[t]) continue;
    if (tables[t].row_stride <= budget) {
      budget -= tables[t].row_stride;
      ++out[t];
    } else {
      closed[t] = true;
    }
  }
  return out;
}

TEST(TypedTiers, RowsGoByReadsPerByteNotByRows) {
  // Papers: 4 KiB rows read 10 times; authors: 512 B rows read 2 times. An author row gives 2/512
  // reads per byte, a paper row 10/4096: authors first although papers are read more.
  const std::vector<double> papers(100, 10.0);
  const std::vector<double> authors(100, 2.0);
  const std::vector<TypedTable> tables = {{100, 4096, papers}, {100, 512, authors}};
  const std::vector<int64_t> none = {0, 0};
  EXPECT_EQ(typed_tier_rows(tables, none, 512 * 100), (std::vector<int64_t>{0, 100}));
  EXPECT_EQ(typed_tier_rows(tables, none, 512 * 100 + 4096 * 3 + 100), (std::vector<int64_t>{3, 100}));
  EXPECT_EQ(typed_tier_rows(tables, none, 511), (std::vector<int64_t>{0, 0}));
  // After the GPU's share, the host's continues where it ended.
  EXPECT_EQ(typed_tier_rows(tables, std::vector<int64_t>{0, 100}, 4096 * 2), (std::vector<int64_t>{2, 0}));
}

TEST(TypedTiers, ARowThatDoesNotFitEndsItsTypeOnlyAndTypesWithoutFeaturesGetNothing) {
  const std::vector<double> wide = {100.0, 100.0, 1.0};
  const std::vector<double> narrow = {1.0, 1.0, 1.0, 1.0};
  const std::vector<TypedTable> tables = {{3, 1000, wide}, {4, 10, narrow}, {50, 0, {}}};
  // Wide rows first (0.1 reads per byte); the third (0.001) comes after the narrow ones (0.1, tie
  // to the lower type) and does not fit what is left.
  EXPECT_EQ(typed_tier_rows(tables, std::vector<int64_t>{0, 0, 0}, 2040), (std::vector<int64_t>{2, 4, 0}));
  EXPECT_EQ(typed_tier_rows(tables, std::vector<int64_t>{0, 0, 0}, 1500), (std::vector<int64_t>{1, 4, 0}))
      << "the second wide row does not fit: the wide type ends, the narrow one goes on";
}

TEST(TypedTiers, PerTypeRangesFromBudgetsArePrefixesAndNested) {
  const std::vector<double> a = {5, 4, 3, 2, 1};
  const std::vector<TypedTable> tables = {{5, 100, a}, {10, 100, {}}};
  const std::vector<TierRanges> ranges = typed_tier_ranges(tables, Budget::bytes(300), Budget::parse("20%"));
  ASSERT_EQ(ranges.size(), 2u);
  // 1500 bytes in all: 300 on the GPU (rows 5/100, 4/100, 3/100 of the first type beat 1/100),
  // 300 in host memory (the first type's 2/100, then ties at 1/100 to the lower type).
  EXPECT_EQ(std::make_tuple(ranges[0].gpu_end, ranges[0].cpu_end, ranges[0].num_nodes), std::make_tuple(3, 5, 5));
  EXPECT_EQ(std::make_tuple(ranges[1].gpu_end, ranges[1].cpu_end, ranges[1].num_nodes), std::make_tuple(0, 1, 10));
}

TEST(TypedTiers, MatchesTheNaiveChoiceOnRandomTables) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int num_types = 1 + static_cast<int>(rng() % 4);
    std::vector<std::vector<double>> scores(static_cast<std::size_t>(num_types));
    std::vector<TypedTable> tables;
    std::vector<int64_t> taken;
    int64_t total = 0;
    for (int t = 0; t < num_types; ++t) {
      const auto rows = static_cast<int64_t>(rng() % 40);
      const int64_t stride = rng() % 5 == 0 ? 0 : int64_t{1} << (2 + rng() % 4);
      auto& s = scores[static_cast<std::size_t>(t)];
      if (rng() % 3 != 0) {
        // Few distinct values, so that ties across and within types are common.
        for (int64_t i = 0; i < rows; ++i) s.push_back(static_cast<double>(rng() % 6) * 8.0);
        std::sort(s.rbegin(), s.rend());
      }
      tables.push_back({rows, stride, s});
      taken.push_back(rows == 0 ? 0 : static_cast<int64_t>(rng() % static_cast<uint64_t>(rows + 1)));
      total += rows * stride;
    }
    const auto budget = static_cast<int64_t>(rng() % static_cast<uint64_t>(total + 64));
    ASSERT_EQ(typed_tier_rows(tables, taken, budget), naive_rows(tables, taken, budget)) << "trial " << trial;
  }
}

TEST(TypedTiers, BadInputIsRefused) {
  const std::vector<double> two = {1, 1};
  EXPECT_THROW(typed_tier_rows(std::vector<TypedTable>{{3, 8, two}}, std::vector<int64_t>{0}, 10), InvalidArgument);
  EXPECT_THROW(typed_tier_rows(std::vector<TypedTable>{{2, 8, two}}, std::vector<int64_t>{3}, 10), InvalidArgument);
  EXPECT_THROW(typed_tier_rows(std::vector<TypedTable>{{2, 8, two}}, std::vector<int64_t>{}, 10), InvalidArgument);
  EXPECT_THROW(typed_tier_rows(std::vector<TypedTable>{{2, 8, two}}, std::vector<int64_t>{0}, -1), InvalidArgument);
}

}  // namespace
}  // namespace graphtier::feature
