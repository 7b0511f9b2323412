// The per-node draws of neighbour sampling on the host, exactly as neighbor_sampler.hpp specifies
// them: they append the chosen edge positions (positions in the CSC indices array) of one node.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace graphtier::sample::cpu {

struct DrawContext {
  uint64_t seed;
  uint64_t layer_stream;
  int64_t fanout;  // -1 = all
  bool replace;
  std::span<const float> weights;  // empty = uniform
};

/// Appends the sampled edge positions of node v, whose edges occupy [begin, end), to `out`.
/// `scratch` is reused between calls to avoid allocations.
void draw_neighbours(const DrawContext& ctx, int64_t v, int64_t begin, int64_t end, std::vector<int64_t>& out,
                     std::vector<double>& scratch);

/// Whether a layer's draws go by groups (draw_floyd_group): uniform without replacement, with a
/// fanout of at most nbr::kWarpFloyd, on an untyped graph.
bool floyd_groups(const DrawContext& ctx);

/// The most nodes one draw_floyd_group call takes.
inline constexpr int kFloydGroup = 16;

/// A node's column: its edges occupy [first, first + degree).
struct NodeColumn {
  int64_t node;
  int64_t first;
  int64_t degree;
};

/// draw_neighbours for up to kFloydGroup nodes in a row when floyd_groups(ctx): every Floyd draw of
/// the group comes from one sweep of the Philox calls over the CPU's vector lanes
/// (cpu/lanes.hpp), the same bits node_pair_bits gives. counts[k]: what column k appended.
void draw_floyd_group(const DrawContext& ctx, std::span<const NodeColumn> columns, std::vector<int64_t>& out,
                      int64_t* counts);

/// A typed layer's relations: every edge's relation, and each relation's fanout ([R]).
struct RelationDraws {
  std::span<const uint8_t> type_per_edge;
  std::span<const int64_t> fanouts;

  bool empty() const noexcept { return type_per_edge.empty(); }
};

/// The typed form of draw_neighbours (neighbor_sampler.hpp): node v's column [begin, end), sorted
/// by relation, sampled segment by segment (ctx.fanout unused), each pick's relation appended to
/// `types`.
void draw_relations(const DrawContext& ctx, const RelationDraws& relations, int64_t v, int64_t begin, int64_t end,
                    std::vector<int64_t>& out, std::vector<uint8_t>& types, std::vector<double>& scratch);

}  // namespace graphtier::sample::cpu
