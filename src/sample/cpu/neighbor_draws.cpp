#include "cpu/neighbor_draws.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "graphtier/core/rng.hpp"
#include "graphtier/sample/random.hpp"
#include "cpu/lanes.hpp"
#include "hetero_steps.hpp"
#include "neighbor_steps.hpp"

namespace graphtier::sample::cpu {
namespace {

// Floyd's algorithm: f distinct offsets out of d with f draws, touching none of the other d - f
// neighbours (what makes zero-copy sampling cheap on the GPU); the device's steps. Sorted.
void draw_uniform_distinct(const DrawContext& ctx, int64_t v, int64_t begin, int64_t d, std::vector<int64_t>& out) {
  const std::size_t first = out.size();
  out.resize(first + static_cast<std::size_t>(ctx.fanout));
  int64_t* kept = out.data() + first;
  const int64_t f = ctx.fanout;
  // The draws first, then the set: the Philox rounds are independent straight-line work the core
  // overlaps, where between floyd_step's branches they ran one by one.
  if (f <= nbr::kWarpFloyd) {
    int64_t t[nbr::kWarpFloyd];
    int64_t picks[nbr::kWarpFloyd];
    nbr::floyd_draws(ctx.seed, ctx.layer_stream, v, d, f, 0, f, t);
    nbr::floyd_small(t, begin, d, static_cast<int>(f), picks, kept);
    return;
  }
  constexpr int64_t kRun = 16;  // even: a run starts at an even draw (floyd_draws)
  int64_t t[kRun];
  for (int64_t i0 = 0; i0 < f; i0 += kRun) {
    const int64_t n = std::min(kRun, f - i0);
    nbr::floyd_draws(ctx.seed, ctx.layer_stream, v, d, f, i0, n, t);
    for (int64_t k = 0; k < n; ++k) nbr::floyd_step(kept, i0 + k, begin, d - f + i0 + k, t[k]);
  }
}

void draw_uniform_repeated(const DrawContext& ctx, int64_t v, int64_t begin, int64_t d, std::vector<int64_t>& out) {
  if (d == 0) return;
  for (int64_t i = 0; i < ctx.fanout; ++i) {
    out.push_back(begin + static_cast<int64_t>(bounded_u64(node_bits(ctx.seed, ctx.layer_stream, v, i), static_cast<uint64_t>(d))));
  }
}

// Efraimidis-Spirakis: the f smallest keys -log(u) / w among positive weights (random.hpp's
// es_key: the device computes the same bits).
void draw_weighted_distinct(const DrawContext& ctx, int64_t begin, int64_t end, std::vector<int64_t>& out,
                            std::vector<double>& keys) {
  const std::size_t first = out.size();
  keys.clear();
  for (int64_t p = begin; p < end; ++p) {
    if (ctx.weights[p] > 0) out.push_back(p);
  }
  const auto positive = static_cast<int64_t>(out.size() - first);
  if (ctx.fanout < 0 || ctx.fanout >= positive) return;  // all positive-weight edges, in order
  for (std::size_t k = first; k < out.size(); ++k) {
    const int64_t p = out[k];
    keys.push_back(es_key(ctx.seed, ctx.layer_stream, p, ctx.weights[p]));
  }
  std::vector<int64_t> order(static_cast<std::size_t>(positive));
  std::iota(order.begin(), order.end(), 0);
  const auto by_key = [&](int64_t a, int64_t b) { return keys[a] != keys[b] ? keys[a] < keys[b] : a < b; };
  std::nth_element(order.begin(), order.begin() + ctx.fanout, order.end(), by_key);
  order.resize(static_cast<std::size_t>(ctx.fanout));
  std::sort(order.begin(), order.end());  // ascending index = ascending position
  for (std::size_t k = 0; k < order.size(); ++k) out[first + k] = out[first + static_cast<std::size_t>(order[k])];
  out.resize(first + order.size());
}

// Inverse-transform sampling on the inclusive prefix sums of the weights.
void draw_weighted_repeated(const DrawContext& ctx, int64_t v, int64_t begin, int64_t end, std::vector<int64_t>& out,
                            std::vector<double>& prefix) {
  prefix.clear();
  double total = 0;
  int64_t last_positive = -1;
  for (int64_t p = begin; p < end; ++p) {
    total += static_cast<double>(ctx.weights[p]);
    prefix.push_back(total);
    if (ctx.weights[p] > 0) last_positive = p;
  }
  if (last_positive < 0) return;
  for (int64_t i = 0; i < ctx.fanout; ++i) {
    const double target = u64_to_unit_double(node_bits(ctx.seed, ctx.layer_stream, v, i)) * total;
    const auto it = std::upper_bound(prefix.begin(), prefix.end(), target);
    out.push_back(it == prefix.end() ? last_positive : begin + (it - prefix.begin()));
  }
}

}  // namespace

void draw_neighbours(const DrawContext& ctx, int64_t v, int64_t begin, int64_t end, std::vector<int64_t>& out,
                     std::vector<double>& scratch) {
  const int64_t d = end - begin;
  if (ctx.fanout == 0) return;
  if (!ctx.weights.empty()) {
    if (ctx.replace && ctx.fanout > 0) {
      draw_weighted_repeated(ctx, v, begin, end, out, scratch);
    } else {
      draw_weighted_distinct(ctx, begin, end, out, scratch);
    }
    return;
  }
  if (ctx.fanout < 0 || (!ctx.replace && ctx.fanout >= d)) {
    for (int64_t p = begin; p < end; ++p) out.push_back(p);
  } else if (ctx.replace) {
    draw_uniform_repeated(ctx, v, begin, d, out);
  } else {
    draw_uniform_distinct(ctx, v, begin, d, out);
  }
}

bool floyd_groups(const DrawContext& ctx) {
  return ctx.weights.empty() && !ctx.replace && ctx.fanout > 0 && ctx.fanout <= nbr::kWarpFloyd;
}

void draw_floyd_group(const DrawContext& ctx, std::span<const NodeColumn> columns, std::vector<int64_t>& out,
                      int64_t* counts) {
  const int64_t f = ctx.fanout;
  const int64_t pairs = (f + 1) / 2;
  uint64_t index[kFloydGroup * (nbr::kWarpFloyd / 2)];
  uint64_t bits[kFloydGroup * nbr::kWarpFloyd];
  int64_t calls = 0;
  int64_t total = 0;
  for (std::size_t k = 0; k < columns.size(); ++k) {
    const NodeColumn& c = columns[k];
    counts[k] = nbr::sample_count(f, false, false, c.degree, c.degree);  // f, or the whole column
    total += counts[k];
    if (f >= c.degree) continue;
    for (int64_t p = 0; p < pairs; ++p) index[calls++] = node_pair_index(c.node, p);
  }
  if (calls > 0) philox_pair_draws(ctx.seed, ctx.layer_stream, index, calls, bits);
  // Every value first, then the sets: the sets' vector loads find the values in the cache, not
  // in flight from a store just made.
  int64_t t[kFloydGroup][nbr::kWarpFloyd];
  const uint64_t* node_bits = bits;
  for (std::size_t k = 0; k < columns.size(); ++k) {
    const int64_t d = columns[k].degree;
    if (f >= d) continue;
    for (int64_t i = 0; i < f; ++i) t[k][i] = nbr::floyd_pick(node_bits[i], d, f, i);
    node_bits += 2 * pairs;
  }
  std::size_t at = out.size();
  out.resize(at + static_cast<std::size_t>(total));
  for (std::size_t k = 0; k < columns.size(); ++k) {
    const NodeColumn& c = columns[k];
    int64_t* kept = out.data() + at;
    at += static_cast<std::size_t>(counts[k]);
    if (f >= c.degree) {
      for (int64_t p = 0; p < c.degree; ++p) kept[p] = c.first + p;
    } else {
      floyd_small_lanes(t[k], c.first, c.degree, static_cast<int>(f), kept);
    }
  }
}

void draw_relations(const DrawContext& ctx, const RelationDraws& relations, int64_t v, int64_t begin, int64_t end,
                    std::vector<int64_t>& out, std::vector<uint8_t>& types, std::vector<double>& scratch) {
  const uint8_t* type_of_edge = relations.type_per_edge.data();
  for (int64_t first = begin; first < end;) {
    const int r = type_of_edge[first];
    const int64_t last = typed::segment_end(type_of_edge, first, end, r);
    DrawContext segment = ctx;
    segment.layer_stream = relation_stream(ctx.layer_stream, r);
    segment.fanout = relations.fanouts[static_cast<std::size_t>(r)];
    const std::size_t before = out.size();
    draw_neighbours(segment, v, first, last, out, scratch);
    types.insert(types.end(), out.size() - before, static_cast<uint8_t>(r));
    first = last;
  }
}

}  // namespace graphtier::sample::cpu
