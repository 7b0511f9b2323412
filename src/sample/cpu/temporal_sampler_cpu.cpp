#include "cpu/temporal_sampler_cpu.hpp"

#include <variant>
#include <vector>

#include "cpu/compact_cpu.hpp"
#include "temporal_steps.hpp"

namespace graphtier::sample::cpu {
namespace {

/// Draws (CSC positions) of dst nodes [lo, hi), appended; counts[i] gets node i's.
void draw_range(const graph::CscView& csc, const TemporalIndex& index, std::span<const int64_t> dst,
                std::span<const int64_t> dst_trees, std::span<const int64_t> seed_times, const TemporalDrawContext& ctx,
                int64_t lo, int64_t hi, std::vector<int64_t>& counts, std::vector<int64_t>& positions) {
  std::vector<int64_t> picks;
  for (int64_t i = lo; i < hi; ++i) {
    const int64_t v = dst[i];
    const int64_t tree = dst_trees[i];
    const temporal::Window w = temporal::window(index.time.data(), csc.indptr[v], csc.indptr[v + 1],
                                                seed_times[tree], ctx.fanout, ctx.replace, ctx.strategy);
    picks.resize(static_cast<std::size_t>(w.count));
    temporal::draw(w, ctx.replace, ctx.seed, temporal::tree_stream(ctx.layer_stream, tree), v, picks.data());
    for (const int64_t k : picks) positions.push_back(index.order[k]);
    counts[i] = w.count;
  }
}

}  // namespace

Block temporal_layer(const graph::CscView& csc, const TemporalIndex& index, std::span<const int64_t> dst,
                     std::span<const int64_t> dst_trees, std::span<const int64_t> seed_times,
                     const TemporalDrawContext& ctx, bool edge_ids, ThreadPool* pool) {
  const auto n = static_cast<int64_t>(dst.size());
  std::vector<int64_t> counts(static_cast<std::size_t>(n), 0);
  std::vector<int64_t> positions;
  const int parts = pool == nullptr || n < 256 ? 1 : pool->size();
  if (parts == 1) {
    draw_range(csc, index, dst, dst_trees, seed_times, ctx, 0, n, counts, positions);
  } else {
    std::vector<std::vector<int64_t>> chunks(static_cast<std::size_t>(parts));
    pool->parallel_parts(0, n, [&](int part, int64_t lo, int64_t hi) {
      draw_range(csc, index, dst, dst_trees, seed_times, ctx, lo, hi, counts, chunks[part]);
    });
    for (const auto& c : chunks) positions.insert(positions.end(), c.begin(), c.end());
  }
  Block block;
  block.num_dst = n;
  block.indptr.assign(static_cast<std::size_t>(n + 1), 0);
  for (int64_t i = 0; i < n; ++i) block.indptr[i + 1] = block.indptr[i] + counts[i];

  // Compaction per tree: the key of (tree, id) is tree_key, so one map serves every tree.
  IdMap map(n + static_cast<int64_t>(positions.size()));
  block.src_nodes.assign(dst.begin(), dst.end());
  block.src_trees.assign(dst_trees.begin(), dst_trees.end());
  for (int64_t i = 0; i < n; ++i) map.find_or_insert(temporal::tree_key(dst_trees[i], dst[i]), i);
  block.indices.resize(positions.size());
  std::visit(
      [&](auto indices) {
        for (int64_t i = 0; i < n; ++i) {
          const int64_t tree = dst_trees[i];
          for (int64_t e = block.indptr[i]; e < block.indptr[i + 1]; ++e) {
            const auto id = static_cast<int64_t>(indices[positions[e]]);
            const auto next = static_cast<int64_t>(block.src_nodes.size());
            const int64_t local = map.find_or_insert(temporal::tree_key(tree, id), next);
            if (local == next) {
              block.src_nodes.push_back(id);
              block.src_trees.push_back(tree);
            }
            block.indices[e] = local;
          }
        }
      },
      csc.indices);
  if (edge_ids) block.edge_ids = std::move(positions);
  return block;
}

}  // namespace graphtier::sample::cpu
