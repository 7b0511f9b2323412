// The hotness order and the relabeled CSC.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/prep/reorder.hpp"
#include "test_util.hpp"

namespace graphtier::prep {
namespace {

TEST(OrderByScore, DescendingWithTiesByOldId) {
  ThreadPool pool(2);
  const std::vector<double> scores{1, 3, 3, 0, 1, -2, 3};
  const Permutation perm = order_by_score(scores, pool);
  EXPECT_EQ(perm.new_to_old, (std::vector<int64_t>{1, 2, 6, 0, 4, 3, 5}));
  for (int64_t n = 0; n < perm.size(); ++n) EXPECT_EQ(perm.old_to_new[perm.new_to_old[n]], n);
}

TEST(OrderByScore, MatchesStableSortForAnyPoolSize) {
  std::mt19937_64 rng(3);
  std::vector<double> scores(100000);
  for (auto& s : scores) s = static_cast<double>(rng() % 1000) / 7.0;  // many ties
  std::vector<int64_t> expected(scores.size());
  std::iota(expected.begin(), expected.end(), 0);
  std::stable_sort(expected.begin(), expected.end(), [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  for (int threads : {1, 2, 5, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(order_by_score(scores, pool).new_to_old, expected) << threads << " threads";
  }
}

TEST(OrderByScore, RejectsNonFinite) {
  ThreadPool pool(1);
  const std::vector<double> scores{1, std::numeric_limits<double>::quiet_NaN()};
  EXPECT_THROW(order_by_score(scores, pool), InvalidArgument);
}

TEST(Permutation, FromNewToOldChecksBijection) {
  ThreadPool pool(2);
  const Permutation p = from_new_to_old({2, 0, 1}, pool);
  EXPECT_EQ(p.old_to_new, (std::vector<int64_t>{1, 2, 0}));
  EXPECT_THROW(from_new_to_old({0, 0, 1}, pool), InvalidArgument);
  EXPECT_THROW(from_new_to_old({0, 3, 1}, pool), InvalidArgument);
}

TEST(Permutation, MapsIdsAndGathers) {
  ThreadPool pool(2);
  const Permutation p = from_new_to_old({2, 0, 3, 1}, pool);  // old 2 -> new 0, old 0 -> new 1, ...
  const std::vector<int64_t> split{0, 1, 2};
  EXPECT_EQ(map_ids_sorted(split, p), (std::vector<int64_t>{0, 1, 3}));
  const std::vector<int32_t> labels{10, 11, 12, 13};
  EXPECT_EQ(gather_by_new_id(std::span<const int32_t>(labels), p, pool), (std::vector<int32_t>{12, 10, 13, 11}));
}

template <typename T>
std::vector<T> load(const std::string& path) {
  const std::string bytes = test::read_file(path);
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

TEST(RelabelCsc, RowsFollowThePermutationInAnyWindow) {
  std::mt19937_64 rng(5);
  const int64_t n = 2000;
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> indices;
  for (int64_t v = 0; v < n; ++v) {
    const int64_t degree = v % 97 == 0 ? 300 : static_cast<int64_t>(rng() % 6);  // a few hubs, some empty
    for (int64_t k = 0; k < degree; ++k) indices.push_back(static_cast<int32_t>(rng() % n));
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  const graph::CscView csc{indptr, graph::IndexSpan(std::span<const int32_t>(indices))};
  std::vector<double> scores(n);
  for (auto& s : scores) s = static_cast<double>(rng() % 50);
  ThreadPool pool(3);
  const Permutation perm = order_by_score(scores, pool);
  test::TempDir dir;
  for (int64_t window : {int64_t{7}, int64_t{1000}, int64_t{1} << 24}) {
    {
      OutputFile indptr_out(dir / "indptr.bin"), indices_out(dir / "indices.bin");
      write_relabeled_csc(csc, perm, indptr_out, indices_out, pool, nullptr, window);
      indptr_out.close();
      indices_out.close();
    }
    const auto new_indptr = load<int64_t>(dir / "indptr.bin");
    const auto new_indices = load<int32_t>(dir / "indices.bin");
    ASSERT_EQ(new_indptr.size(), indptr.size());
    ASSERT_EQ(new_indices.size(), indices.size());
    for (int64_t v = 0; v < n; ++v) {
      const int64_t old = perm.new_to_old[v];
      ASSERT_EQ(new_indptr[v + 1] - new_indptr[v], indptr[old + 1] - indptr[old]);
      for (int64_t k = 0; k < indptr[old + 1] - indptr[old]; ++k) {
        ASSERT_EQ(new_indices[new_indptr[v] + k], perm.old_to_new[indices[indptr[old] + k]])
            << "window " << window << " row " << v;
      }
    }
  }
}

}  // namespace
}  // namespace graphtier::prep
