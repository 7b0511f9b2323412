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
