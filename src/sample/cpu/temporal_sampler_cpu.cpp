#include "cpu/temporal_sampler_cpu.hpp"

#include <variant>
#include <vector>

#include "cpu/compact_cpu.hpp"
#include "graphtier/sample/random.hpp"
#include "hetero_steps.hpp"
#include "temporal_steps.hpp"

namespace graphtier::sample::cpu {
namespace {

/// The draws of one dst node's segment [begin, end) of the time-ordered view, appended as CSC
/// positions (and `relation` to `types` when typed); returns how many.
int64_t draw_segment(const TemporalIndex& index, int64_t begin, int64_t end, int64_t seed_time, int64_t fanout,
                     const TemporalDrawContext& ctx, uint64_t stream, int64_t v, int relation,
                     std::vector<int64_t>& picks, std::vector<int64_t>& positions, std::vector<uint8_t>* types) {
  const temporal::Window w = temporal::window(index.time.data(), begin, end, seed_time, fanout, ctx.replace, ctx.strategy);
  picks.resize(static_cast<std::size_t>(w.count));
  temporal::draw(w, ctx.replace, ctx.seed, stream, v, picks.data());
  for (const int64_t k : picks) positions.push_back(index.order[k]);
  if (types != nullptr) types->insert(types->end(), picks.size(), static_cast<uint8_t>(relation));
  return w.count;
}

/// Draws (CSC positions, and relations when typed) of dst nodes [lo, hi), appended; counts[i]
/// gets node i's.
void draw_range(const graph::CscView& csc, const TemporalIndex& index, std::span<const int64_t> dst,
                std::span<const int64_t> dst_trees, std::span<const int64_t> seed_times, const TemporalDrawContext& ctx,
                int64_t lo, int64_t hi, std::vector<int64_t>& counts, std::vector<int64_t>& positions,
                std::vector<uint8_t>& types) {
  std::vector<int64_t> picks;
  const bool typed = !ctx.relation_fanouts.empty();
  // The relation of view position k (the view keeps each column's relation segments in place).
  const auto type_at = [&](int64_t k) { return ctx.type_per_edge[static_cast<std::size_t>(index.order[k])]; };
  for (int64_t i = lo; i < hi; ++i) {
    const int64_t v = dst[i];
    const int64_t tree = dst_trees[i];
    const uint64_t stream = temporal::tree_stream(ctx.layer_stream, tree);
    const int64_t begin = csc.indptr[v], end = csc.indptr[v + 1];
    if (!typed) {
      counts[i] = draw_segment(index, begin, end, seed_times[tree], ctx.fanout, ctx, stream, v, 0, picks, positions,
                               nullptr);
      continue;
    }
    int64_t count = 0;
    for (int r = 0; r < static_cast<int>(ctx.relation_fanouts.size()); ++r) {
      int64_t first = 0, last = 0;
      typed::relation_segment_at(type_at, begin, end, r, &first, &last);
      count += draw_segment(index, first, last, seed_times[tree], ctx.relation_fanouts[static_cast<std::size_t>(r)],
                            ctx, relation_stream(stream, r), v, r, picks, positions, &types);
    }
    counts[i] = count;
  }
}

}  // namespace

Block temporal_layer(const graph::CscView& csc, const TemporalIndex& index, std::span<const int64_t> dst,
                     std::span<const int64_t> dst_trees, std::span<const int64_t> seed_times,
                     const TemporalDrawContext& ctx, bool edge_ids, ThreadPool* pool) {
  const auto n = static_cast<int64_t>(dst.size());
  std::vector<int64_t> counts(static_cast<std::size_t>(n), 0);
  std::vector<int64_t> positions;
  std::vector<uint8_t> types;
  const int parts = pool == nullptr || n < 256 ? 1 : pool->size();
  if (parts == 1) {
    draw_range(csc, index, dst, dst_trees, seed_times, ctx, 0, n, counts, positions, types);
  } else {
    std::vector<std::vector<int64_t>> chunks(static_cast<std::size_t>(parts));
    std::vector<std::vector<uint8_t>> type_chunks(static_cast<std::size_t>(parts));
    pool->parallel_parts(0, n, [&](int part, int64_t lo, int64_t hi) {
      draw_range(csc, index, dst, dst_trees, seed_times, ctx, lo, hi, counts, chunks[part], type_chunks[part]);
    });
    for (const auto& c : chunks) positions.insert(positions.end(), c.begin(), c.end());
    for (const auto& c : type_chunks) types.insert(types.end(), c.begin(), c.end());
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
  block.edge_types = std::move(types);
  return block;
}

}  // namespace graphtier::sample::cpu
