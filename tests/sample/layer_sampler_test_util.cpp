#include "layer_sampler_test_util.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>

#include "graphtier/core/portable_math.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/sample/random.hpp"

namespace graphtier::sample::test {
namespace {

__extension__ using u128 = unsigned __int128;

template <typename Fn>
void for_each_nonzero(const OwnedGraph& g, std::span<const int64_t> rows, Fn&& fn) {
  for (const int64_t i : rows) {
    const int64_t d = g.indptr[i + 1] - g.indptr[i];
    for (int64_t p = g.indptr[i]; p < g.indptr[i + 1]; ++p) fn(d, static_cast<int64_t>(g.indices[p]));
    fn(d, i);
  }
}

std::vector<int64_t> all_nodes(const OwnedGraph& g) {
  std::vector<int64_t> v(static_cast<std::size_t>(g.num_nodes()));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

}  // namespace

std::map<int64_t, double> exact_column_norms(const OwnedGraph& g, std::span<const int64_t> rows) {
  std::map<int64_t, double> norms;
  for_each_nonzero(g, rows, [&](int64_t d, int64_t u) { norms[u] += 1.0 / static_cast<double>((d + 1) * (d + 1)); });
  return norms;
}

std::map<int64_t, uint64_t> reference_draw_weights(const OwnedGraph& g, std::span<const int64_t> rows) {
  std::map<int64_t, u128> sums;
  for_each_nonzero(g, rows, [&](int64_t d, int64_t u) {
    const u128 a = static_cast<u128>(d + 1);
    const u128 q = (u128{1} << 62) / (a * a);
    sums[u] += q == 0 ? 1 : q;
  });
  u128 total = 0;
  for (const auto& [u, c] : sums) total += c;
  int bits = 0;
  for (u128 t = total; t != 0; t >>= 1) ++bits;
  const int shift = std::max(0, bits - 52);
  std::map<int64_t, uint64_t> weights;
  for (const auto& [u, c] : sums) weights[u] = std::max<uint64_t>(1, static_cast<uint64_t>(c >> shift));
  return weights;
}

double tree_sum(const std::vector<double>& x) {
  // Pad to a power of two with zeros, then halve: node j of the next level = nodes 2j + 2j+1.
  std::size_t width = 1;
  while (width < x.size()) width *= 2;
  std::vector<double> level(width, 0.0);
  std::copy(x.begin(), x.end(), level.begin());
  while (level.size() > 1) {
    std::vector<double> up(level.size() / 2);
    for (std::size_t j = 0; j < up.size(); ++j) up[j] = level[2 * j] + level[2 * j + 1];
    level.swap(up);
  }
  return x.empty() ? 0.0 : level[0];
}

std::vector<int64_t> naive_race_order(const std::vector<uint64_t>& weights, uint64_t seed, uint64_t layer_stream) {
  // The tree as explicit levels of weights, top-down: level[d][j] = sum of the leaves under node j
  // of depth d (node number 2^d + j).
  const auto n = static_cast<int64_t>(weights.size());
  int levels = 0;
  while ((int64_t{1} << levels) < n) ++levels;
  std::vector<std::vector<u128>> level(static_cast<std::size_t>(levels + 1));
  level[levels].assign(std::size_t{1} << levels, 0);
  for (int64_t i = 0; i < n; ++i) level[levels][i] = weights[i];
  for (int d = levels - 1; d >= 0; --d) {
    level[d].resize(std::size_t{1} << d);
    for (std::size_t j = 0; j < level[d].size(); ++j) level[d][j] = level[d + 1][2 * j] + level[d + 1][2 * j + 1];
  }
  const auto bits = [&](uint64_t node, uint64_t which) {  // words 0-1 or 2-3 of node's Philox block
    const PhiloxBlock b = philox_block(seed, layer_stream ^ (uint64_t{1} << 62), node);
    return which == 0 ? (uint64_t{b.v[1]} << 32) | b.v[0] : (uint64_t{b.v[3]} << 32) | b.v[2];
  };
  const auto exponential = [&](uint64_t b) {
    const double u = std::max(static_cast<double>(b >> 11) / 9007199254740992.0, 0x1p-60);
    return -portable_log(u);
  };
  // Keys of every node, depth by depth; +inf for nodes of weight 0.
  std::vector<double> key = {exponential(bits(0, 1)) / static_cast<double>(level[0][0])};
  for (int d = 0; d < levels; ++d) {
    std::vector<double> next(std::size_t{2} << d, std::numeric_limits<double>::infinity());
    for (std::size_t j = 0; j < key.size(); ++j) {
      const uint64_t node = (uint64_t{1} << d) + j;
      const u128 wl = level[d + 1][2 * j], wr = level[d + 1][2 * j + 1];
      if (wl + wr == 0) continue;
      const bool left = bounded_u64(bits(node, 0), static_cast<uint64_t>(wl + wr)) < static_cast<uint64_t>(wl);
      const u128 w_other = left ? wr : wl;
      const double other = w_other == 0 ? std::numeric_limits<double>::infinity()
                                         : key[j] + exponential(bits(node, 1)) / static_cast<double>(w_other);
      next[2 * j] = left ? key[j] : other;
      next[2 * j + 1] = left ? other : key[j];
    }
    key.swap(next);
  }
  std::vector<int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return key[a] < key[b] || (key[a] == key[b] && a < b); });
  return order;
}

MiniBatch reference_layer_sample(const OwnedGraph& g, std::span<const int64_t> seeds,
                                 const LayerSamplerOptions& options, uint64_t stream) {
  MiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  std::vector<int64_t> dst = batch.seeds;
  const std::vector<int64_t> everyone = all_nodes(g);
  for (std::size_t l = 0; l < options.layer_sizes.size(); ++l) {
    const uint64_t ls = layer_stream(stream, static_cast<int>(l));
    const std::map<int64_t, uint64_t> w =
        reference_draw_weights(g, options.method == LayerMethod::kLadies ? std::span<const int64_t>(dst) : everyone);
    std::set<int64_t> src_set(dst.begin(), dst.end());
    const int64_t size = options.layer_sizes[l];
    if (size < 0 || size >= static_cast<int64_t>(w.size())) {
      for (const auto& [u, x] : w) src_set.insert(u);
    } else {
      std::vector<uint64_t> weights;
      for (const auto& [u, x] : w) weights.push_back(x);
      const std::vector<int64_t> order = naive_race_order(weights, options.seed, ls);
      std::vector<int64_t> ids;
      for (const auto& [u, x] : w) ids.push_back(u);
      for (int64_t k = 0; k < size; ++k) src_set.insert(ids[order[k]]);
    }
    NaiveBlockBuilder b(dst);
    for (const int64_t v : dst) {
      std::vector<int64_t> row;
      for (int64_t p = g.indptr[v]; p < g.indptr[v + 1]; ++p) {
        if (src_set.count(g.indices[p])) row.push_back(g.indices[p]);
      }
      row.push_back(v);
      std::vector<double> inverse;
      for (const int64_t u : row) inverse.push_back(1.0 / static_cast<double>(w.at(u)));
      const double sum = tree_sum(inverse);
      for (const int64_t u : row) {
        b.add(u);
        b.block().weights.push_back(static_cast<float>((1.0 / static_cast<double>(w.at(u))) / sum));
      }
      b.end_row();
    }
    dst = b.block().src_nodes;
    batch.blocks.push_back(std::move(b.block()));
  }
  return batch;
}

namespace {

void enumerate(const std::vector<double>& w, int s, std::vector<char>& used, double prob, double left,
               std::vector<double>& inclusion) {
  if (s == 0) return;
  for (std::size_t j = 0; j < w.size(); ++j) {
    if (used[j]) continue;
    const double p = prob * w[j] / left;
    inclusion[j] += p;
    used[j] = 1;
    enumerate(w, s - 1, used, p, left - w[j], inclusion);
    used[j] = 0;
  }
}

}  // namespace

std::vector<double> exact_inclusion(const std::vector<double>& weights, int s) {
  std::vector<double> inclusion(weights.size(), 0.0);
  std::vector<char> used(weights.size(), 0);
  enumerate(weights, s, used, 1.0, std::accumulate(weights.begin(), weights.end(), 0.0), inclusion);
  return inclusion;
}

}  // namespace graphtier::sample::test
