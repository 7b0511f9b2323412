// The random draws of every sampler, as pure functions of what identifies them
// (docs/architecture.md, Randomness), so that the CPU and CUDA backends sample exactly the same
// edges.
//
// A minibatch is identified by a 64-bit `stream` (the loader uses epoch << 32 | batch index).
// Layer l of it draws from layer_stream(stream, l). Within a layer:
//   - per-node draws: node_bits(seed, layer_stream, node, draw): node < 2^40, draw < 2^24
//     (Floyd's draws two per call: node_pair_bits);
//   - per-edge draws: edge_bits(seed, layer_stream, edge): edge = position in the input graph's
//     indices array, so any thread can draw for any edge without knowing what came before.
// Typed graphs (graph/hetero_view.hpp) draw relation r's segment of a column from
// relation_stream(layer_stream, r), so a node's draws in one relation do not depend on its other
// relations, on which relations a fanout samples, or on the order they are visited.
//
// Plain C++ under g++, host/device code under nvcc (like core/rng.hpp).
#pragma once

#include <cstdint>

#include "graphtier/core/portable_math.hpp"
#include "graphtier/core/rng.hpp"

namespace graphtier::sample {

inline constexpr int64_t kMaxSampleNodes = int64_t{1} << 40;
inline constexpr int64_t kMaxDraws = int64_t{1} << 24;

GRAPHTIER_HD uint64_t layer_stream(uint64_t stream, int layer) {
  return mix64(stream + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(layer + 1));
}

/// The stream of relation r's draws within a layer. mix64(0) = 0: relation 0 draws from the layer's
/// own stream, so a graph of one relation samples exactly as the homogeneous graph.
GRAPHTIER_HD uint64_t relation_stream(uint64_t layer_stream, int relation) {
  return layer_stream ^ mix64(static_cast<uint64_t>(relation));
}

GRAPHTIER_HD uint64_t node_bits(uint64_t seed, uint64_t layer_stream, int64_t node, int64_t draw) {
  return philox_u64(seed, layer_stream, (static_cast<uint64_t>(node) << 24) | static_cast<uint64_t>(draw));
}

/// The Philox index of a node's draws 2p and 2p + 1 (node_bits' index of (node, p)).
GRAPHTIER_HD uint64_t node_pair_index(int64_t node, int64_t pair) {
  return (static_cast<uint64_t>(node) << 24) | static_cast<uint64_t>(pair);
}

/// Draws 2p and 2p + 1 of a node from one Philox call: the block at node_pair_index(node, p),
/// whose words 0-1 are draw 2p's bits and words 2-3 draw 2p + 1's (Floyd's draws: half the calls).
GRAPHTIER_HD PhiloxBlock node_pair_block(uint64_t seed, uint64_t layer_stream, int64_t node, int64_t pair) {
  return philox_block(seed, layer_stream, node_pair_index(node, pair));
}

GRAPHTIER_HD uint64_t pair_half(const PhiloxBlock& b, int64_t draw) {
  const int w = (draw & 1) == 0 ? 0 : 2;
  return (static_cast<uint64_t>(b.v[w + 1]) << 32) | b.v[w];
}

/// Draw `draw` of a node from node_pair_block: what a single draw (a GPU lane) computes.
GRAPHTIER_HD uint64_t node_pair_bits(uint64_t seed, uint64_t layer_stream, int64_t node, int64_t draw) {
  return pair_half(node_pair_block(seed, layer_stream, node, draw >> 1), draw);
}

GRAPHTIER_HD uint64_t edge_bits(uint64_t seed, uint64_t layer_stream, int64_t edge) {
  return philox_u64(seed, layer_stream ^ (uint64_t{1} << 63), static_cast<uint64_t>(edge));
}

/// The Efraimidis-Spirakis key -log(u) / w of edge `edge` with weight w > 0 (weighted sampling
/// without replacement keeps the smallest): the same bits on the host and the device.
GRAPHTIER_HD double es_key(uint64_t seed, uint64_t layer_stream, int64_t edge, float w) {
  double u = u64_to_unit_double(edge_bits(seed, layer_stream, edge));
  if (u < 0x1p-60) u = 0x1p-60;
  return div_rn(-portable_log(u), static_cast<double>(w));
}

}  // namespace graphtier::sample
