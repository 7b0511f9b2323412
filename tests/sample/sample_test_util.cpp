#include "sample_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#if GRAPHTIER_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "graphtier/core/device_memory.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/sample/random.hpp"

namespace graphtier::sample::test {

void expect_same_minibatch(const MiniBatch& got, const MiniBatch& want) {
  EXPECT_EQ(got.seeds, want.seeds);
  ASSERT_EQ(got.blocks.size(), want.blocks.size());
  for (std::size_t l = 0; l < want.blocks.size(); ++l) {
    SCOPED_TRACE("block " + std::to_string(l));
    const Block& a = got.blocks[l];
    const Block& b = want.blocks[l];
    EXPECT_EQ(a.num_dst, b.num_dst);
    EXPECT_EQ(a.src_nodes, b.src_nodes);
    EXPECT_EQ(a.indptr, b.indptr);
    EXPECT_EQ(a.indices, b.indices);
    EXPECT_EQ(a.edge_ids, b.edge_ids);
    EXPECT_EQ(a.edge_types, b.edge_types);
    EXPECT_EQ(a.src_trees, b.src_trees);
    ASSERT_EQ(a.weights.size(), b.weights.size());
    if (!a.weights.empty()) {  // bitwise (memcmp must not see the null data of empty vectors)
      EXPECT_EQ(0, std::memcmp(a.weights.data(), b.weights.data(), a.weights.size() * sizeof(float)));
    }
  }
}

OwnedGraph OwnedGraph::from_edges(int64_t num_nodes, const std::vector<std::pair<int64_t, int64_t>>& edges) {
  OwnedGraph g;
  g.indptr.assign(static_cast<std::size_t>(num_nodes + 1), 0);
  for (const auto& [src, dst] : edges) ++g.indptr[dst + 1];
  std::partial_sum(g.indptr.begin(), g.indptr.end(), g.indptr.begin());
  std::vector<int64_t> fill(g.indptr.begin(), g.indptr.end() - 1);
  g.indices.resize(edges.size());
  for (const auto& [src, dst] : edges) g.indices[fill[dst]++] = static_cast<int32_t>(src);
  return g;
}

OwnedGraph OwnedGraph::two_hubs(uint64_t seed) {
  std::mt19937_64 rng(seed);
  constexpr int64_t kNodes = 2000;
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t k = 0; k < 12000; ++k) edges.push_back({static_cast<int64_t>(rng() % kNodes), 0});
  for (int64_t k = 0; k < 11000; ++k) edges.push_back({static_cast<int64_t>(rng() % kNodes), 1});
  for (int64_t v = 2; v < kNodes; ++v) {
    for (int64_t k = 0; k < 4; ++k) edges.push_back({static_cast<int64_t>(rng() % kNodes), v});
  }
  return from_edges(kNodes, edges);
}

OwnedGraph OwnedGraph::random(int64_t num_nodes, double mean_degree, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> tail(1.0);
  std::uniform_int_distribution<int64_t> node(0, num_nodes - 1);
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t v = 0; v < num_nodes; ++v) {
    // exp(x)^2-shaped degrees: many small, a few large, about 1 in 8 zero.
    const double x = tail(rng);
    const auto degree = static_cast<int64_t>(mean_degree * 0.5 * x * x);
    for (int64_t k = 0; k < degree; ++k) edges.emplace_back(node(rng), v);
  }
  return from_edges(num_nodes, edges);
}

NaiveBlockBuilder::NaiveBlockBuilder(const std::vector<int64_t>& dst) {
  block_.num_dst = static_cast<int64_t>(dst.size());
  block_.src_nodes = dst;
  for (std::size_t i = 0; i < dst.size(); ++i) local_[dst[i]] = static_cast<int64_t>(i);
  block_.indptr.push_back(0);
}

int64_t NaiveBlockBuilder::add(int64_t src) {
  auto [it, inserted] = local_.try_emplace(src, block_.num_src());
  if (inserted) block_.src_nodes.push_back(src);
  block_.indices.push_back(it->second);
  return it->second;
}

double chi_square_uniform(const std::vector<int64_t>& counts) {
  double total = 0;
  for (int64_t c : counts) total += static_cast<double>(c);
  const double expected = total / static_cast<double>(counts.size());
  double stat = 0;
  for (int64_t c : counts) stat += (static_cast<double>(c) - expected) * (static_cast<double>(c) - expected) / expected;
  return stat;
}

graph::CscView OwnedGraph::csc() const {
  return {indptr, graph::IndexSpan(std::span<const int32_t>(indices))};
}

namespace {

// The draws of node v's edges at positions [begin, begin + d): its whole column, or one relation's
// segment of it.
std::vector<int64_t> reference_draws(const OwnedGraph& g, int64_t v, int64_t begin, int64_t d, int64_t f, bool replace,
                                     uint64_t seed, uint64_t ls) {
  std::vector<int64_t> out;
  if (f == 0) return out;
  if (!g.weights.empty()) {
    std::vector<int64_t> positive;
    for (int64_t p = begin; p < begin + d; ++p) {
      if (g.weights[p] > 0) positive.push_back(p);
    }
    if (positive.empty()) return out;
    if (replace && f > 0) {
      double total = 0;
      std::vector<double> prefix;
      for (int64_t p = begin; p < begin + d; ++p) prefix.push_back(total += g.weights[p]);
      for (int64_t i = 0; i < f; ++i) {
        const double target = u64_to_unit_double(node_bits(seed, ls, v, i)) * total;
        int64_t pick = positive.back();
        for (int64_t k = 0; k < d; ++k) {
          if (prefix[k] > target) {
            pick = begin + k;
            break;
          }
        }
        out.push_back(pick);
      }
      return out;
    }
    if (f < 0 || f >= static_cast<int64_t>(positive.size())) return positive;
    std::vector<std::pair<double, int64_t>> keyed;
    for (int64_t p : positive) {
      const double u = std::max(u64_to_unit_double(edge_bits(seed, ls, p)), 0x1p-60);
      keyed.emplace_back(-std::log(u) / g.weights[p], p);
    }
    std::sort(keyed.begin(), keyed.end());
    for (int64_t i = 0; i < f; ++i) out.push_back(keyed[i].second);
    std::sort(out.begin(), out.end());
    return out;
  }
  if (f < 0 || (!replace && f >= d)) {
    for (int64_t p = begin; p < begin + d; ++p) out.push_back(p);
    return out;
  }
  if (replace) {
    for (int64_t i = 0; d > 0 && i < f; ++i) out.push_back(begin + static_cast<int64_t>(bounded_u64(node_bits(seed, ls, v, i), d)));
    return out;
  }
  std::set<int64_t> kept;
  for (int64_t i = 0; i < f; ++i) {
    const int64_t j = d - f + i;
    const auto t = static_cast<int64_t>(bounded_u64(node_pair_bits(seed, ls, v, i), j + 1));
    kept.insert(kept.count(t) ? j : t);
  }
  for (int64_t t : kept) out.push_back(begin + t);
  return out;
}

}  // namespace

MiniBatch reference_sample(const OwnedGraph& g, std::span<const int64_t> seeds, const NeighborSamplerOptions& options,
                           uint64_t stream) {
  MiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  std::vector<int64_t> dst = batch.seeds;
  for (std::size_t l = 0; l < options.fanouts.size(); ++l) {
    const uint64_t ls = layer_stream(stream, static_cast<int>(l));
    NaiveBlockBuilder b(dst);
    for (int64_t v : dst) {
      const int64_t begin = g.indptr[v], d = g.indptr[v + 1] - begin;
      for (int64_t p : reference_draws(g, v, begin, d, options.fanouts[l], options.replace, options.seed, ls)) {
        b.add(g.indices[p]);
        if (options.edge_ids) b.block().edge_ids.push_back(p);
      }
      b.end_row();
    }
    dst = b.block().src_nodes;
    batch.blocks.push_back(std::move(b.block()));
  }
  return batch;
}

TypedGraph TypedGraph::from_edges(const std::vector<int64_t>& type_sizes, std::vector<graph::RelationTypes> relations,
                                  const std::vector<TypedEdge>& edges) {
  TypedGraph t;
  t.node_type_offset.push_back(0);
  for (int64_t n : type_sizes) t.node_type_offset.push_back(t.node_type_offset.back() + n);
  t.relations = std::move(relations);
  std::vector<TypedEdge> sorted = edges;  // by column, then relation, else as given
  std::stable_sort(sorted.begin(), sorted.end(), [](const TypedEdge& a, const TypedEdge& b) {
    return a.dst != b.dst ? a.dst < b.dst : a.relation < b.relation;
  });
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (const TypedEdge& e : sorted) {
    pairs.emplace_back(e.src, e.dst);
    t.type_per_edge.push_back(static_cast<uint8_t>(e.relation));
  }
  t.graph = OwnedGraph::from_edges(t.node_type_offset.back(), pairs);
  return t;
}

TypedGraph TypedGraph::random(const std::vector<int64_t>& type_sizes, std::vector<graph::RelationTypes> relations,
                              double mean_degree, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> tail(1.0);
  std::vector<int64_t> offset = {0};
  for (int64_t n : type_sizes) offset.push_back(offset.back() + n);
  std::vector<TypedEdge> edges;
  for (std::size_t r = 0; r < relations.size(); ++r) {
    const int64_t src0 = offset[relations[r].src_type], src_n = type_sizes[relations[r].src_type];
    const int64_t dst0 = offset[relations[r].dst_type], dst_n = type_sizes[relations[r].dst_type];
    if (src_n == 0) continue;
    std::uniform_int_distribution<int64_t> src(0, src_n - 1);
    for (int64_t v = dst0; v < dst0 + dst_n; ++v) {
      const double x = tail(rng);  // heavy-tailed degrees, as OwnedGraph::random
      const auto degree = static_cast<int64_t>(mean_degree * 0.5 * x * x);
      for (int64_t k = 0; k < degree; ++k) edges.push_back({src0 + src(rng), v, static_cast<int>(r)});
    }
  }
  std::shuffle(edges.begin(), edges.end(), rng);  // from_edges sorts each column by relation
  return from_edges(type_sizes, std::move(relations), edges);
}

graph::HeteroView TypedGraph::view() const { return {node_type_offset, relations, type_per_edge}; }

MiniBatch reference_sample(const TypedGraph& t, std::span<const int64_t> seeds, const NeighborSamplerOptions& options,
                           uint64_t stream) {
  const OwnedGraph& g = t.graph;
  const auto relations = static_cast<int32_t>(t.relations.size());
  const std::vector<int64_t> table = relation_fanout_table(options, relations);
  const auto layers = table.size() / static_cast<std::size_t>(relations);
  MiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  std::vector<int64_t> dst = batch.seeds;
  for (std::size_t l = 0; l < layers; ++l) {
    const uint64_t ls = layer_stream(stream, static_cast<int>(l));
    NaiveBlockBuilder b(dst);
    for (int64_t v : dst) {
      for (int32_t r = 0; r < relations; ++r) {
        // Relation r's edges of v, found by a scan; contiguous since the columns are sorted.
        int64_t begin = -1, d = 0;
        for (int64_t p = g.indptr[v]; p < g.indptr[v + 1]; ++p) {
          if (t.type_per_edge[p] != r) continue;
          if (begin < 0) begin = p;
          EXPECT_EQ(p, begin + d) << "relation " << r << " of column " << v << " is not contiguous";
          ++d;
        }
        const int64_t f = table[l * static_cast<std::size_t>(relations) + static_cast<std::size_t>(r)];
        for (int64_t p : reference_draws(g, v, begin, d, f, options.replace, options.seed, relation_stream(ls, r))) {
          b.add(g.indices[p]);
          if (options.edge_ids) b.block().edge_ids.push_back(p);
          b.block().edge_types.push_back(static_cast<uint8_t>(r));
        }
      }
      b.end_row();
    }
    dst = b.block().src_nodes;
    batch.blocks.push_back(std::move(b.block()));
  }
  return batch;
}

std::vector<int64_t> random_seeds(int64_t num_nodes, int64_t count, uint64_t seed) {
  std::vector<int64_t> all(static_cast<std::size_t>(num_nodes));
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), std::mt19937_64(seed));
  all.resize(static_cast<std::size_t>(std::min(count, num_nodes)));
  return all;
}

DeviceFill::DeviceFill(int64_t below) : below_(below) {
  // Whether a block of `bytes` can be had now (given back at once).
  const auto fits = [](int64_t bytes) {
    try {
      const Buffer probe(MemoryKind::kDevice, static_cast<std::size_t>(bytes), 0);
      return true;
    } catch (const OutOfMemory&) {
#if GRAPHTIER_WITH_CUDA
      (void)cudaGetLastError();  // the refused cudaMalloc must not fail the next launch check
#endif
      return false;
    }
  };
  for (int block = 0; block < 16 && free_bytes() >= below_; ++block) {
    // The largest block up to what is free minus below / 2 that cudaMalloc grants, to within
    // 256 KiB (a bisection: it may refuse a little less than the free bytes, by its granularity).
    int64_t lo = 0;
    int64_t hi = free_bytes() - below_ / 2;
    if (hi > 0 && fits(hi)) lo = hi;
    while (hi - lo > (int64_t{256} << 10)) {
      const int64_t mid = lo + (hi - lo) / 2;
      (fits(mid) ? lo : hi) = mid;
    }
    if (lo <= 0) break;
    blocks_.emplace_back(MemoryKind::kDevice, static_cast<std::size_t>(lo), 0);
  }
}

int64_t DeviceFill::free_bytes() const { return device_memory(0).free_bytes; }

std::string DeviceFill::unfilled() {
  const int64_t free_now = free_bytes();
  if (free_now < below_) return {};
  release();
  return "could not fill the device down to less than " + std::to_string(below_) + " free bytes (" +
         std::to_string(free_now) + ")";
}

void DeviceFill::release() { blocks_.clear(); }

}  // namespace graphtier::sample::test
