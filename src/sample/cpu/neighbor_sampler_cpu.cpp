#include "cpu/neighbor_sampler_cpu.hpp"

#include <algorithm>
#include <variant>
#include <vector>

#include "cpu/compact_cpu.hpp"

namespace graphtier::sample::cpu {
namespace {

// How far ahead the loops over random rows start their loads (tuned on R-MAT 2M/40M, 1 thread).
constexpr int64_t kRowLookahead = 8;
constexpr std::size_t kIdLookahead = 16;

/// Sampled edges of one layer before compaction: per dst node its chosen edge positions.
struct LayerDraws {
  std::vector<int64_t> indptr;     // [num_dst + 1]
  std::vector<int64_t> positions;  // global edge positions
  std::vector<uint8_t> types;      // the relation of each position (typed graphs), else empty
};

// The draws see a row as its global position range, so a fetched row draws exactly what the
// whole CSC does (uniform draws depend on the node and its degree only).
template <typename Rows>
LayerDraws draw_layer(const Rows& rows, std::span<const int64_t> dst, const DrawContext& ctx,
                      const RelationDraws& relations, ThreadPool* pool) {
  const auto n = static_cast<int64_t>(dst.size());
  LayerDraws draws;
  draws.indptr.assign(static_cast<std::size_t>(n + 1), 0);
  struct Part {
    std::vector<int64_t> positions;
    std::vector<uint8_t> types;
  };
  const bool groups = relations.empty() && floyd_groups(ctx);
  const auto draw_range = [&](int64_t lo, int64_t hi, Part& out) {
    std::vector<double> scratch;
    if (ctx.fanout > 0 && relations.empty()) out.positions.reserve(static_cast<std::size_t>((hi - lo) * ctx.fanout));
    if (groups) {
      NodeColumn columns[kFloydGroup];
      for (int64_t g = lo; g < hi; g += kFloydGroup) {
        const int64_t end = std::min(hi, g + kFloydGroup);
        for (int64_t i = g; i < end; ++i) {
          if (i + kRowLookahead < hi) rows.prefetch(dst[i + kRowLookahead]);
          const auto row = rows.row(dst[i]);
          columns[i - g] = {dst[i], row.first, row.degree};
        }
        draw_floyd_group(ctx, {columns, static_cast<std::size_t>(end - g)}, out.positions, &draws.indptr[g + 1]);
      }
      return;
    }
    for (int64_t i = lo; i < hi; ++i) {
      if (i + kRowLookahead < hi) rows.prefetch(dst[i + kRowLookahead]);
      const int64_t v = dst[i];
      const auto row = rows.row(v);
      const std::size_t before = out.positions.size();
      if (relations.empty()) {
        draw_neighbours(ctx, v, row.first, row.first + row.degree, out.positions, scratch);
      } else {
        draw_relations(ctx, relations, v, row.first, row.first + row.degree, out.positions, out.types, scratch);
      }
      draws.indptr[i + 1] = static_cast<int64_t>(out.positions.size() - before);
    }
  };
  // Per-part buffers concatenated in part order: the result is the same for any pool size.
  const int parts = pool == nullptr || n < 256 ? 1 : pool->size();
  if (parts == 1) {
    Part all;
    draw_range(0, n, all);
    draws.positions = std::move(all.positions);
    draws.types = std::move(all.types);
  } else {
    std::vector<Part> chunks(static_cast<std::size_t>(parts));
    pool->parallel_parts(0, n, [&](int part, int64_t lo, int64_t hi) { draw_range(lo, hi, chunks[part]); });
    std::size_t total = 0;
    for (const auto& c : chunks) total += c.positions.size();
    draws.positions.reserve(total);
    draws.types.reserve(relations.empty() ? 0 : total);
    for (const auto& c : chunks) {
      draws.positions.insert(draws.positions.end(), c.positions.begin(), c.positions.end());
      draws.types.insert(draws.types.end(), c.types.begin(), c.types.end());
    }
  }
  for (int64_t i = 0; i < n; ++i) draws.indptr[i + 1] += draws.indptr[i];
  return draws;
}

/// The neighbour at each drawn position: a whole CSC's rows read indices at the positions (a flat
/// gather, loads started kIdLookahead ahead), fetched rows find each dst node's row.
template <typename Rows>
std::vector<int64_t> picked_ids(const Rows& rows, std::span<const int64_t> dst, const LayerDraws& draws) {
  std::vector<int64_t> ids(draws.positions.size());
  if constexpr (requires { rows.id_at(int64_t{0}); }) {
    const std::size_t n = ids.size();
    for (std::size_t e = 0; e < n; ++e) {
      if (e + kIdLookahead < n) rows.prefetch_at(draws.positions[e + kIdLookahead]);
      ids[e] = rows.id_at(draws.positions[e]);
    }
    return ids;
  }
  for (std::size_t i = 0; i < dst.size(); ++i) {
    const auto row = rows.row(dst[i]);
    for (int64_t e = draws.indptr[i]; e < draws.indptr[i + 1]; ++e) {
      ids[e] = static_cast<int64_t>(row.ids[draws.positions[e] - row.first]);
    }
  }
  return ids;
}

template <typename Rows>
Block layer_block(const Rows& rows, std::span<const int64_t> dst, const DrawContext& ctx, bool edge_ids,
                  ThreadPool* pool, const RelationDraws& relations = {}) {
  LayerDraws draws = draw_layer(rows, dst, ctx, relations, pool);
  std::vector<int64_t> ids = picked_ids(rows, dst, draws);
  Block block = block_of_draws(dst, {std::move(draws.indptr), std::move(draws.positions), std::move(ids)}, edge_ids);
  block.edge_types = std::move(draws.types);
  return block;
}

}  // namespace

NeighborDraws neighbor_draws(const graph::CscView& csc, int64_t edge_offset, std::span<const int64_t> dst,
                             const DrawContext& ctx, ThreadPool* pool) {
  return std::visit(
      [&](auto indices) {
        using Index = typename decltype(indices)::element_type;
        const CscRows<std::remove_const_t<Index>> rows{csc.indptr, indices, edge_offset};
        LayerDraws draws = draw_layer(rows, dst, ctx, {}, pool);
        std::vector<int64_t> ids = picked_ids(rows, dst, draws);
        return NeighborDraws{std::move(draws.indptr), std::move(draws.positions), std::move(ids)};
      },
      csc.indices);
}

Block block_of_draws(std::span<const int64_t> dst, NeighborDraws draws, bool edge_ids) {
  Block block;
  block.num_dst = static_cast<int64_t>(dst.size());
  block.indptr = std::move(draws.indptr);
  compact_layer(dst, draws.ids, block.src_nodes, block.indices);
  if (edge_ids) block.edge_ids = std::move(draws.positions);
  return block;
}

Block neighbor_layer(const graph::CscView& csc, std::span<const int64_t> dst, const DrawContext& ctx, bool edge_ids,
                     ThreadPool* pool, const RelationDraws& relations) {
  return std::visit(
      [&](auto indices) {
        using Index = typename decltype(indices)::element_type;
        return layer_block(CscRows<std::remove_const_t<Index>>{csc.indptr, indices}, dst, ctx, edge_ids, pool,
                           relations);
      },
      csc.indices);
}

Block neighbor_layer(const FetchedRows& rows, std::span<const int64_t> dst, const DrawContext& ctx, bool edge_ids,
                     ThreadPool* pool) {
  return layer_block(rows, dst, ctx, edge_ids, pool);
}

}  // namespace graphtier::sample::cpu
