// The hotness order: sort (score, id) pairs, then invert.
#include <algorithm>
#include <cmath>

#include "graphtier/core/error.hpp"
#include "graphtier/prep/reorder.hpp"
#include "parallel.hpp"

namespace graphtier::prep {
namespace {

constexpr int64_t kNodeGrain = int64_t{1} << 16;

struct Keyed {
  double score;
  int64_t id;
};

/// Fills perm.old_to_new from perm.new_to_old, checking that it is a bijection.
void invert(Permutation& perm, ThreadPool& pool) {
  const int64_t n = perm.size();
  perm.old_to_new.assign(static_cast<std::size_t>(n), -1);
  pool.parallel_for(0, n, kNodeGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) {
      const int64_t old = perm.new_to_old[v];
      GRAPHTIER_EXPECTS(old >= 0 && old < n, InvalidArgument, "permutation entry ", v, " is ", old,
                        ", out of range [0, ", n, ")");
      perm.old_to_new[old] = v;  // a repeat leaves another entry at -1, caught below
    }
  });
  pool.parallel_for(0, n, kNodeGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) {
      GRAPHTIER_EXPECTS(perm.old_to_new[v] >= 0, InvalidArgument, "not a permutation: id ", v, " never appears");
    }
  });
}

}  // namespace

Permutation order_by_score(std::span<const double> scores, ThreadPool& pool, std::span<const int64_t> type_offset) {
  const int64_t n = static_cast<int64_t>(scores.size());
  // Sorting (score, id) pairs rather than ids keeps the comparisons in cache.
  std::vector<Keyed> keyed(static_cast<std::size_t>(n));
  pool.parallel_for(0, n, kNodeGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) {
      GRAPHTIER_EXPECTS(std::isfinite(scores[v]), InvalidArgument, "score of node ", v, " is not finite (", scores[v], ")");
      keyed[v] = {scores[v], v};
    }
  });
  const auto hotter = [](const Keyed& a, const Keyed& b) {
    return a.score > b.score || (a.score == b.score && a.id < b.id);
  };
  if (type_offset.empty()) {
    impl::parallel_sort(keyed, hotter, pool);
  } else {
    GRAPHTIER_EXPECTS(type_offset.front() == 0 && type_offset.back() == n, InvalidArgument,
                      "order_by_score: node type offsets cover [", type_offset.front(), ", ", type_offset.back(),
                      "), not the ", n, " nodes");
    // Each type's range sorted on its own: its nodes keep their range (one type's copy extra).
    std::vector<Keyed> range;
    for (std::size_t t = 0; t + 1 < type_offset.size(); ++t) {
      range.assign(keyed.begin() + type_offset[t], keyed.begin() + type_offset[t + 1]);
      impl::parallel_sort(range, hotter, pool);
      std::copy(range.begin(), range.end(), keyed.begin() + type_offset[t]);
    }
  }
  Permutation perm;
  perm.new_to_old.resize(static_cast<std::size_t>(n));
  perm.old_to_new.resize(static_cast<std::size_t>(n));
  pool.parallel_for(0, n, kNodeGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) {
      perm.new_to_old[v] = keyed[v].id;
      perm.old_to_new[keyed[v].id] = v;
    }
  });
  return perm;
}

Permutation from_new_to_old(std::vector<int64_t> new_to_old, ThreadPool& pool) {
  Permutation perm;
  perm.new_to_old = std::move(new_to_old);
  invert(perm, pool);
  return perm;
}

std::vector<int64_t> map_ids_sorted(std::span<const int64_t> ids, const Permutation& perm) {
  std::vector<int64_t> mapped(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    GRAPHTIER_EXPECTS(ids[i] >= 0 && ids[i] < perm.size(), InvalidArgument, "node id ", ids[i], " at position ", i,
                      " is out of range [0, ", perm.size(), ")");
    mapped[i] = perm.old_to_new[ids[i]];
  }
  std::sort(mapped.begin(), mapped.end());
  return mapped;
}

}  // namespace graphtier::prep
