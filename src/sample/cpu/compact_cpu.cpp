#include "cpu/compact_cpu.hpp"

#include <algorithm>
#include <bit>

#include "graphtier/core/rng.hpp"

namespace graphtier::sample::cpu {

IdMap::IdMap(int64_t expected) {
  const uint64_t capacity = std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(16, 2 * expected)));
  keys_.assign(capacity, -1);
  values_.resize(capacity);
  mask_ = capacity - 1;
}

int64_t IdMap::find_or_insert(int64_t key, int64_t next) {
  for (uint64_t slot = mix64(static_cast<uint64_t>(key)) & mask_;; slot = (slot + 1) & mask_) {
    if (keys_[slot] == key) return values_[slot];
    if (keys_[slot] < 0) {
      keys_[slot] = key;
      values_[slot] = next;
      return next;
    }
  }
}

int64_t IdMap::find(int64_t key) const {
  for (uint64_t slot = mix64(static_cast<uint64_t>(key)) & mask_;; slot = (slot + 1) & mask_) {
    if (keys_[slot] == key) return values_[slot];
    if (keys_[slot] < 0) return -1;
  }
}

void compact_layer(std::span<const int64_t> dst_nodes, std::span<const int64_t> neighbours,
                   std::vector<int64_t>& src_nodes, std::vector<int64_t>& local) {
  IdMap map(static_cast<int64_t>(dst_nodes.size() + neighbours.size()));
  src_nodes.assign(dst_nodes.begin(), dst_nodes.end());
  for (std::size_t i = 0; i < dst_nodes.size(); ++i) map.find_or_insert(dst_nodes[i], static_cast<int64_t>(i));
  local.resize(neighbours.size());
  for (std::size_t e = 0; e < neighbours.size(); ++e) {
    const auto next = static_cast<int64_t>(src_nodes.size());
    const int64_t id = map.find_or_insert(neighbours[e], next);
    if (id == next) src_nodes.push_back(neighbours[e]);
    local[e] = id;
  }
}

}  // namespace graphtier::sample::cpu
