#include "cpu/compact_cpu.hpp"

#include <algorithm>
#include <bit>

namespace graphtier::sample::cpu {
namespace {

// How many neighbours ahead compact_layer starts loading a key's slot (the keys are random).
constexpr std::size_t kLookahead = 16;

}  // namespace

IdMap::IdMap(int64_t expected) {
  const uint64_t capacity = std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(16, 2 * expected)));
  slots_.assign(capacity, Slot{-1, 0});
  mask_ = capacity - 1;
}

void compact_layer(std::span<const int64_t> dst_nodes, std::span<const int64_t> neighbours,
                   std::vector<int64_t>& src_nodes, std::vector<int64_t>& local) {
  IdMap map(static_cast<int64_t>(dst_nodes.size() + neighbours.size()));
  src_nodes.assign(dst_nodes.begin(), dst_nodes.end());
  for (std::size_t i = 0; i < dst_nodes.size(); ++i) map.find_or_insert(dst_nodes[i], static_cast<int64_t>(i));
  local.resize(neighbours.size());
  const std::size_t n = neighbours.size();
  for (std::size_t e = 0; e < n; ++e) {
    if (e + kLookahead < n) map.prefetch(neighbours[e + kLookahead]);
    const auto next = static_cast<int64_t>(src_nodes.size());
    const int64_t id = map.find_or_insert(neighbours[e], next);
    if (id == next) src_nodes.push_back(neighbours[e]);
    local[e] = id;
  }
}

}  // namespace graphtier::sample::cpu
