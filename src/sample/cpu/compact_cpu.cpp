#include "cpu/compact_cpu.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>

namespace graphtier::sample::cpu {
namespace {

// How many neighbours ahead compact_layer starts loading a key's slot (the keys are random).
constexpr std::size_t kLookahead = 16;

/// Ids below 2^k as positions in a table of 2^k (no hashing, no probe): compact_layer's map
/// when that table is small next to a hash table for the layer's ids.
class DenseIdMap {
 public:
  explicit DenseIdMap(int width) : local_(new uint32_t[std::size_t{1} << width]) {
    std::memset(local_.get(), 0xFF, (std::size_t{1} << width) * sizeof(uint32_t));
  }
  uint32_t find_or_insert(uint32_t id, uint32_t next) {
    uint32_t& local = local_[id];
    if (local == kEmpty) local = next;
    return local;
  }
  void prefetch(uint32_t id) const { __builtin_prefetch(local_.get() + id); }

 private:
  static constexpr uint32_t kEmpty = ~0u;
  std::unique_ptr<uint32_t[]> local_;
};

template <typename Key, typename Map>
void compact_with(Map map, std::span<const int64_t> dst_nodes, std::span<const int64_t> neighbours,
                  std::vector<int64_t>& src_nodes, std::vector<int64_t>& local) {
  src_nodes.assign(dst_nodes.begin(), dst_nodes.end());
  for (std::size_t i = 0; i < dst_nodes.size(); ++i) map.find_or_insert(static_cast<Key>(dst_nodes[i]), static_cast<Key>(i));
  local.resize(neighbours.size());
  const std::size_t n = neighbours.size();
  for (std::size_t e = 0; e < n; ++e) {
    if (e + kLookahead < n) map.prefetch(static_cast<Key>(neighbours[e + kLookahead]));
    const auto next = static_cast<Key>(src_nodes.size());
    const Key id = map.find_or_insert(static_cast<Key>(neighbours[e]), next);
    if (id == next) src_nodes.push_back(neighbours[e]);
    local[e] = static_cast<int64_t>(id);
  }
}

/// The bits set in any id (an OR: one vectorised pass); every id is below 2^bit_width of it.
uint64_t any_bits(std::span<const int64_t> ids) {
  uint64_t bits = 0;
  for (const int64_t id : ids) bits |= static_cast<uint64_t>(id);
  return bits;
}

}  // namespace

void compact_layer(std::span<const int64_t> dst_nodes, std::span<const int64_t> neighbours,
                   std::vector<int64_t>& src_nodes, std::vector<int64_t>& local) {
  // The ids' bit width bounds them (a negative id has every bit: the 64-bit map). Ids and
  // positions below 2^31 take 32-bit entries: a dense table when 2^width is at most twice the
  // layer's ids (what a hash table for them would hold), else a hash table of 8-byte slots for
  // at most min(ids, 2^width) keys; each a table half the size or less, so it stays in cache.
  const auto ids = static_cast<int64_t>(dst_nodes.size() + neighbours.size());
  const int width = std::bit_width(any_bits(dst_nodes) | any_bits(neighbours));
  if (width <= 31 && ids < (int64_t{1} << 31)) {
    if ((int64_t{1} << width) <= 2 * ids) {
      compact_with<uint32_t>(DenseIdMap(width), dst_nodes, neighbours, src_nodes, local);
    } else {
      compact_with<uint32_t>(BasicIdMap<uint32_t>(std::min(ids, int64_t{1} << width)), dst_nodes, neighbours,
                             src_nodes, local);
    }
  } else {
    compact_with<int64_t>(IdMap(ids), dst_nodes, neighbours, src_nodes, local);
  }
}

}  // namespace graphtier::sample::cpu
