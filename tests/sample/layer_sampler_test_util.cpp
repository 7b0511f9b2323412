#include "layer_sampler_test_util.hpp"

#include <algorithm>
#include <numeric>
#include <set>

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
  const int shift = std::max(0, bits - 61);
  std::map<int64_t, uint64_t> weights;
  for (const auto& [u, c] : sums) weights[u] = std::max<uint64_t>(1, static_cast<uint64_t>(c >> shift));
  return weights;
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
      std::vector<std::pair<int64_t, uint64_t>> left(w.begin(), w.end());
      for (int64_t k = 0; k < size; ++k) {
        uint64_t remaining = 0;
        for (const auto& [u, x] : left) remaining += x;
        const uint64_t r = bounded_u64(node_bits(options.seed, ls, 0, k), remaining);
        uint64_t cumulative = 0;
        for (auto it = left.begin(); it != left.end(); ++it) {
          cumulative += it->second;
          if (cumulative > r) {
            src_set.insert(it->first);
            left.erase(it);
            break;
          }
        }
      }
    }
    NaiveBlockBuilder b(dst);
    for (const int64_t v : dst) {
      std::vector<int64_t> row;
      for (int64_t p = g.indptr[v]; p < g.indptr[v + 1]; ++p) {
        if (src_set.count(g.indices[p])) row.push_back(g.indices[p]);
      }
      row.push_back(v);
      double sum = 0;
      for (const int64_t u : row) sum += 1.0 / static_cast<double>(w.at(u));
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
