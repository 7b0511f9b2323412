#include "cpu/layer_sampler_cpu.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <variant>

#include "cpu/compact_cpu.hpp"
#include "cpu/row_access.hpp"
#include "layer_draws.hpp"
#include "layer_row_sums.hpp"

namespace graphtier::sample::cpu {
namespace {

std::vector<uint64_t> to_draw_weights(std::span<const layer::U128> sums) {
  layer::U128 total{};
  for (const layer::U128& c : sums) total = layer::add(total, c);
  const int shift = layer::weight_shift(total);
  std::vector<uint64_t> weights(sums.size());
  for (std::size_t k = 0; k < sums.size(); ++k) weights[k] = layer::draw_weight(sums[k], shift);
  return weights;
}

/// Sorts `items` by their node id `first` (all in [0, num_nodes)) with a least-significant-digit
/// radix sort, 11 bits a pass: O(n) against std::sort's O(n log n), and this sort is the serial
/// core of every LADIES layer.
void sort_by_node(std::vector<std::pair<int64_t, uint64_t>>& items, int64_t num_nodes) {
  constexpr int kBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  std::vector<std::pair<int64_t, uint64_t>> scratch(items.size());
  for (int shift = 0; (num_nodes - 1) >> shift > 0; shift += kBits) {
    std::array<std::size_t, kBuckets + 1> start{};
    for (const auto& item : items) ++start[((static_cast<uint64_t>(item.first) >> shift) & (kBuckets - 1)) + 1];
    std::partial_sum(start.begin(), start.end(), start.begin());
    for (const auto& item : items) scratch[start[(static_cast<uint64_t>(item.first) >> shift) & (kBuckets - 1)]++] = item;
    items.swap(scratch);
  }
}

int64_t position_of(const std::vector<int64_t>& ids, int64_t id) {
  return layer::find_sorted(ids.data(), static_cast<int64_t>(ids.size()), id);
}

}  // namespace

namespace {

template <typename Rows>
WeightedNodes candidates_of(const Rows& rows, std::span<const int64_t> dst) {
  // (column, contribution) per nonzero, sorted by column: one sort instead of a search per nonzero.
  std::vector<std::pair<int64_t, uint64_t>> nonzeros;
  for (const int64_t v : dst) {
    const auto row = rows.row(v);
    const uint64_t q = layer::row_contribution(row.degree);
    for (int64_t p = 0; p < row.degree; ++p) nonzeros.emplace_back(static_cast<int64_t>(row.ids[p]), q);
    nonzeros.emplace_back(v, q);
  }
  sort_by_node(nonzeros, rows.id_bound());
  WeightedNodes out;
  std::vector<layer::U128> sums;
  for (const auto& [u, q] : nonzeros) {
    if (out.ids.empty() || out.ids.back() != u) {
      out.ids.push_back(u);
      sums.push_back(layer::U128{});
    }
    sums.back() = layer::add(sums.back(), q);
  }
  out.weights = to_draw_weights(sums);
  return out;
}

/// `f(rows)` with the CscRows of the CSC's index type.
template <typename F>
auto with_csc_rows(const graph::CscView& csc, F&& f) {
  return std::visit(
      [&](auto indices) {
        using Index = std::remove_const_t<typename decltype(indices)::element_type>;
        return f(CscRows<Index>{csc.indptr, indices});
      },
      csc.indices);
}

}  // namespace

WeightedNodes ladies_candidates(const graph::CscView& csc, std::span<const int64_t> dst) {
  return with_csc_rows(csc, [&](const auto& rows) { return candidates_of(rows, dst); });
}

std::vector<uint64_t> fastgcn_weights(const graph::CscView& csc) {
  const std::span<const int64_t> indptr = csc.indptr;
  std::vector<layer::U128> sums(static_cast<std::size_t>(csc.num_nodes()));
  std::visit(
      [&](auto indices) {
        for (int64_t v = 0; v < csc.num_nodes(); ++v) {
          const uint64_t q = layer::row_contribution(indptr[v + 1] - indptr[v]);
          for (int64_t p = indptr[v]; p < indptr[v + 1]; ++p) {
            auto& c = sums[static_cast<std::size_t>(indices[p])];
            c = layer::add(c, q);
          }
          sums[v] = layer::add(sums[v], q);
        }
      },
      csc.indices);
  return to_draw_weights(sums);
}

std::vector<uint64_t> race_tree(std::span<const uint64_t> weights) {
  const auto n = static_cast<int64_t>(weights.size());
  const int levels = layer::race_levels(n);
  const int64_t first_leaf = int64_t{1} << levels;
  std::vector<uint64_t> internal(static_cast<std::size_t>(first_leaf), 0);
  const layer::RaceTree t{internal.data(), weights.data(), n, levels};
  // Children before parents: a node's weight is the sum of its two children's.
  for (int64_t x = first_leaf - 1; x >= 1; --x) internal[x] = t.weight(2 * x) + t.weight(2 * x + 1);
  return internal;
}

std::vector<int64_t> draw_positions(std::span<const uint64_t> weights, std::span<const uint64_t> shared_tree,
                                    int64_t size, uint64_t seed, uint64_t layer_stream) {
  const auto n = static_cast<int64_t>(weights.size());
  if (size < 0 || size >= n) {
    std::vector<int64_t> all(static_cast<std::size_t>(n));
    std::iota(all.begin(), all.end(), 0);
    return all;
  }
  std::vector<int64_t> chosen;
  if (size == 0) return chosen;
  std::vector<uint64_t> own;
  if (shared_tree.empty()) own = race_tree(weights);
  const layer::RaceTree t{shared_tree.empty() ? own.data() : shared_tree.data(), weights.data(), n,
                          layer::race_levels(n)};
  // Level by level, keep the `size` best nodes (layer_draws.hpp): the winners lie under them.
  struct Entry {
    double key;
    int64_t node;
  };
  const auto before = [](const Entry& a, const Entry& b) { return layer::race_before(a.key, a.node, b.key, b.node); };
  std::vector<Entry> kept{{layer::race_root_key(t, seed, layer_stream), 1}};
  std::vector<Entry> next;
  for (int depth = 0; depth < t.levels; ++depth) {
    next.clear();
    for (const Entry& e : kept) {
      double left, right;
      layer::race_children(t, seed, layer_stream, e.node, e.key, &left, &right);
      if (t.weight(2 * e.node) != 0) next.push_back({left, 2 * e.node});
      if (t.weight(2 * e.node + 1) != 0) next.push_back({right, 2 * e.node + 1});
    }
    if (static_cast<int64_t>(next.size()) > size) {
      std::nth_element(next.begin(), next.begin() + size, next.end(), before);
      next.resize(static_cast<std::size_t>(size));
    }
    kept.swap(next);
  }
  std::sort(kept.begin(), kept.end(), before);
  chosen.reserve(kept.size());
  for (const Entry& e : kept) chosen.push_back(e.node - (int64_t{1} << t.levels));
  return chosen;
}

namespace {

template <typename Rows>
WeightedNodes columns_of(const Rows& rows, std::span<const int64_t> dst, int64_t size, uint64_t seed,
                         uint64_t layer_stream) {
  WeightedNodes candidates = candidates_of(rows, dst);
  std::vector<char> in_src(candidates.ids.size(), 0);
  for (const int64_t k : draw_positions(candidates.weights, {}, size, seed, layer_stream)) in_src[k] = 1;
  for (const int64_t v : dst) in_src[position_of(candidates.ids, v)] = 1;
  WeightedNodes columns;
  for (std::size_t k = 0; k < candidates.ids.size(); ++k) {
    if (!in_src[k]) continue;
    columns.ids.push_back(candidates.ids[k]);
    columns.weights.push_back(candidates.weights[k]);
  }
  return columns;
}

}  // namespace

WeightedNodes ladies_columns(const graph::CscView& csc, std::span<const int64_t> dst, int64_t size, uint64_t seed,
                             uint64_t layer_stream) {
  return with_csc_rows(csc, [&](const auto& rows) { return columns_of(rows, dst, size, seed, layer_stream); });
}

WeightedNodes ladies_columns(const FetchedRows& rows, std::span<const int64_t> dst, int64_t size, uint64_t seed,
                             uint64_t layer_stream) {
  return columns_of(rows, dst, size, seed, layer_stream);
}

WeightedNodes fastgcn_columns(std::span<const uint64_t> weights, std::span<const uint64_t> tree,
                              std::span<const int64_t> dst, int64_t size, uint64_t seed, uint64_t layer_stream) {
  WeightedNodes columns;
  columns.ids = draw_positions(weights, tree, size, seed, layer_stream);  // candidate position = node id
  columns.ids.insert(columns.ids.end(), dst.begin(), dst.end());
  std::sort(columns.ids.begin(), columns.ids.end());
  columns.ids.erase(std::unique(columns.ids.begin(), columns.ids.end()), columns.ids.end());
  columns.weights.resize(columns.ids.size());
  for (std::size_t k = 0; k < columns.ids.size(); ++k) columns.weights[k] = weights[columns.ids[k]];
  return columns;
}

namespace {

template <typename Rows>
Block layer_block(const Rows& rows, std::span<const int64_t> dst, const WeightedNodes& columns, ThreadPool* pool) {
  const auto n = static_cast<int64_t>(dst.size());
  Block block;
  block.num_dst = n;
  block.indptr.assign(static_cast<std::size_t>(n + 1), 0);
  struct Part {
    std::vector<int64_t> neighbours;  // global ids
    std::vector<float> weights;
  };
  // Membership of every nonzero of the dst rows: a hash probe instead of a binary search.
  IdMap column_of(static_cast<int64_t>(columns.ids.size()));
  for (std::size_t k = 0; k < columns.ids.size(); ++k) column_of.find_or_insert(columns.ids[k], static_cast<int64_t>(k));
  const auto build_rows = [&](int64_t lo, int64_t hi, Part& part) {
    std::vector<double> inverse;
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t v = dst[i];
      const auto row = rows.row(v);
      const std::size_t first = part.neighbours.size();
      inverse.clear();
      const auto keep = [&](int64_t u) {
        const int64_t k = column_of.find(u);
        if (k < 0) return;
        part.neighbours.push_back(u);
        inverse.push_back(1.0 / static_cast<double>(columns.weights[k]));
      };
      for (int64_t p = 0; p < row.degree; ++p) keep(static_cast<int64_t>(row.ids[p]));
      keep(v);  // the self-loop of A + I, last
      // The pairwise tree of layer_row_sums.hpp, which the CUDA backend computes with whole warps.
      const double sum = layer::pairwise_sum(inverse.data(), static_cast<int64_t>(inverse.size()));
      for (const double x : inverse) part.weights.push_back(static_cast<float>(x / sum));
      block.indptr[i + 1] = static_cast<int64_t>(part.neighbours.size() - first);
    }
  };
  const int parts = pool == nullptr || n < 256 ? 1 : pool->size();
  std::vector<Part> chunks(static_cast<std::size_t>(parts));
  if (parts == 1) {
    build_rows(0, n, chunks[0]);
  } else {
    pool->parallel_parts(0, n, [&](int part, int64_t lo, int64_t hi) { build_rows(lo, hi, chunks[part]); });
  }
  for (int64_t i = 0; i < n; ++i) block.indptr[i + 1] += block.indptr[i];
  std::vector<int64_t> neighbours;
  neighbours.reserve(static_cast<std::size_t>(block.indptr[n]));
  block.weights.reserve(static_cast<std::size_t>(block.indptr[n]));
  for (const Part& c : chunks) {
    neighbours.insert(neighbours.end(), c.neighbours.begin(), c.neighbours.end());
    block.weights.insert(block.weights.end(), c.weights.begin(), c.weights.end());
  }
  compact_layer(dst, neighbours, block.src_nodes, block.indices);
  return block;
}

}  // namespace

Block build_layer_block(const graph::CscView& csc, std::span<const int64_t> dst, const WeightedNodes& columns,
                        ThreadPool* pool) {
  return with_csc_rows(csc, [&](const auto& rows) { return layer_block(rows, dst, columns, pool); });
}

Block build_layer_block(const FetchedRows& rows, std::span<const int64_t> dst, const WeightedNodes& columns,
                        ThreadPool* pool) {
  return layer_block(rows, dst, columns, pool);
}

}  // namespace graphtier::sample::cpu
