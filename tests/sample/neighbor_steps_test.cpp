// The decisions of GPU neighbour sampling (neighbor_steps.hpp) called on the host and compared
// with the CPU sampler: the sample count, the serial Floyd step, the warp Floyd's collision rule
// (the lanes emulated one by one), the radix select of Efraimidis-Spirakis keys (the warp's and
// the block's digit steps), the compaction's first-occurrence numbering, and the host's bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "cpu/compact_cpu.hpp"
#include "cpu/neighbor_draws.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"
#include "graphtier/sample/random.hpp"
#include "neighbor_steps.hpp"
#include "sample_test_util.hpp"

namespace graphtier::sample {
namespace {

/// The CPU sampler's edge positions of node v over [begin, begin + weights.size()) (or d uniform).
std::vector<int64_t> cpu_draws(uint64_t seed, uint64_t ls, int64_t fanout, bool replace, const std::vector<float>& w,
                               int64_t v, int64_t begin, int64_t d) {
  std::vector<float> all;  // weights indexed by position
  if (!w.empty()) {
    all.assign(static_cast<std::size_t>(begin + d), 1.0f);
    std::copy(w.begin(), w.end(), all.begin() + begin);
  }
  const cpu::DrawContext ctx{seed, ls, fanout, replace, all};
  std::vector<int64_t> out;
  std::vector<double> scratch;
  cpu::draw_neighbours(ctx, v, begin, begin + d, out, scratch);
  return out;
}

std::vector<float> random_weights(std::mt19937_64& rng, int64_t d) {
  std::vector<float> w(static_cast<std::size_t>(d));
  for (float& x : w) x = rng() % 4 == 0 ? 0.0f : static_cast<float>(rng() % 50 + 1) / 8.0f;
  return w;
}

// ---- sample_count ------------------------------------------------------------------------------

TEST(NeighborSteps, SampleCountIsWhatTheCpuDraws) {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 3000; ++trial) {
    const int64_t d = static_cast<int64_t>(rng() % 70);
    const int64_t fanouts[] = {-1, 0, 1, 5, 32, 33, 69, 100};
    const int64_t fanout = fanouts[rng() % 8];
    const bool replace = rng() % 2 == 0, weighted = rng() % 2 == 0;
    const std::vector<float> w = weighted ? random_weights(rng, d) : std::vector<float>{};
    const int64_t positive = weighted ? std::count_if(w.begin(), w.end(), [](float x) { return x > 0; }) : d;
    const auto got = cpu_draws(3, 4, fanout, replace, w, trial, 17, d);
    ASSERT_EQ(nbr::sample_count(fanout, replace, weighted, d, positive), static_cast<int64_t>(got.size()))
        << "d " << d << " fanout " << fanout << " replace " << replace << " weighted " << weighted;
  }
}

TEST(NeighborSteps, HubsAreThePathsWhoseCostGrowsWithTheDegree) {
  EXPECT_FALSE(nbr::cost_grows_with_degree(10, false, false, 1'000'000));  // Floyd: f draws
  EXPECT_FALSE(nbr::cost_grows_with_degree(10, true, false, 1'000'000));   // f draws with replacement
  EXPECT_TRUE(nbr::cost_grows_with_degree(-1, false, false, 1'000'000));   // copies the list
  EXPECT_TRUE(nbr::cost_grows_with_degree(2'000'000, false, false, 1'000'000));
  EXPECT_FALSE(nbr::cost_grows_with_degree(2'000'000, true, false, 1'000'000));
  for (bool replace : {false, true}) EXPECT_TRUE(nbr::cost_grows_with_degree(10, replace, true, 1'000'000));
  EXPECT_FALSE(nbr::cost_grows_with_degree(0, false, true, 1'000'000));
}

// ---- Floyd -------------------------------------------------------------------------------------

/// The serial Floyd of the GPU (f > 32) on the host.
std::vector<int64_t> serial_floyd(uint64_t seed, uint64_t ls, int64_t v, int64_t begin, int64_t d, int64_t f) {
  std::vector<int64_t> kept(static_cast<std::size_t>(f));
  for (int64_t i = 0; i < f; ++i) {
    nbr::floyd_step(kept.data(), i, begin, d - f + i, nbr::floyd_draw(seed, ls, v, d, f, i));
  }
  return kept;
}

/// The warp Floyd (f <= 32) on the host, lane by lane: __match_any_sync and the ballots written
/// out, the collision rule and the rank the functions the kernel calls.
std::vector<int64_t> warp_floyd(uint64_t seed, uint64_t ls, int64_t v, int64_t begin, int64_t d, int f) {
  std::vector<int64_t> t(static_cast<std::size_t>(f));
  std::vector<int> ref(static_cast<std::size_t>(f));
  for (int lane = 0; lane < f; ++lane) {
    t[lane] = nbr::floyd_draw(seed, ls, v, d, f, lane);
    ref[lane] = nbr::floyd_warp_ref(t[lane], lane, d, f);
  }
  uint32_t repeated = 0;
  for (int lane = 0; lane < f; ++lane) {
    for (int k = 0; k < lane; ++k) {
      if (t[k] == t[lane]) repeated |= 1u << lane;
    }
  }
  const uint32_t collided = nbr::floyd_warp_collisions(repeated, f, [&](int i) { return ref[i]; });
  std::vector<int64_t> pick(static_cast<std::size_t>(f));
  for (int lane = 0; lane < f; ++lane) pick[lane] = ((collided >> lane) & 1u) != 0 ? d - f + lane : t[lane];
  std::vector<int64_t> out(static_cast<std::size_t>(f), -1);
  for (int lane = 0; lane < f; ++lane) {
    const int rank = nbr::floyd_warp_rank(pick[lane], f, [&](int i) { return pick[i]; });
    EXPECT_EQ(out[rank], -1) << "two lanes share output slot " << rank;
    out[rank] = begin + pick[lane];
  }
  return out;
}

TEST(NeighborSteps, FloydGoldenTinyCase) {
  // d = 3, f = 2: draw 0 picks t0 in [0, 1], draw 1 picks t1 in [0, 2] (or 2 when t1 == t0).
  for (int64_t v = 0; v < 64; ++v) {
    const auto want = cpu_draws(5, 6, 2, false, {}, v, 100, 3);
    ASSERT_EQ(want.size(), 2u);
    EXPECT_EQ(warp_floyd(5, 6, v, 100, 3, 2), want) << "node " << v;
    EXPECT_EQ(serial_floyd(5, 6, v, 100, 3, 2), want) << "node " << v;
  }
}

TEST(NeighborSteps, WarpAndSerialFloydMatchTheCpuSampler) {
  std::mt19937_64 rng(2);
  int64_t collisions = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const int f = 1 + static_cast<int>(rng() % 32);
    // Degrees just above f collide most (and exercise the chains through collided lanes).
    const int64_t d = f + 1 + static_cast<int64_t>(rng() % (trial % 2 == 0 ? 3 : 200));
    const uint64_t seed = rng(), ls = rng();
    const int64_t v = static_cast<int64_t>(rng() % 100000), begin = static_cast<int64_t>(rng() % 1000);
    const auto want = cpu_draws(seed, ls, f, false, {}, v, begin, d);
    ASSERT_EQ(warp_floyd(seed, ls, v, begin, d, f), want) << "f " << f << " d " << d << " trial " << trial;
    ASSERT_EQ(serial_floyd(seed, ls, v, begin, d, f), want);
    for (int i = 0; i < f; ++i) collisions += std::count(want.begin(), want.end(), begin + d - f + i);
  }
  EXPECT_GT(collisions, 1000);  // the collision paths ran
}

TEST(NeighborSteps, SerialFloydAboveTheWarpMatchesTheCpuSampler) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t f = 33 + static_cast<int64_t>(rng() % 100);
    const int64_t d = f + 1 + static_cast<int64_t>(rng() % (trial % 2 == 0 ? 4 : 2000));
    const uint64_t seed = rng(), ls = rng();
    const int64_t v = static_cast<int64_t>(rng() % 100000);
    ASSERT_EQ(serial_floyd(seed, ls, v, 7, d, f), cpu_draws(seed, ls, f, false, {}, v, 7, d)) << "f " << f << " d " << d;
  }
}

// ---- Efraimidis-Spirakis radix select -----------------------------------------------------------

/// The GPU's weighted draw without replacement on the host: keys, 8 radix passes whose digit is
/// found the warp's way (lane sums, the first lane to reach `need`, radix_digit over its 8 bins)
/// or the block's (one bin per thread, the bin whose exclusive count is below `need` and whose
/// digit step stops there), then the keep rule in position order.
std::vector<int64_t> radix_select(const std::vector<uint64_t>& keys, int64_t begin, int64_t n, bool block_way) {
  const auto d = static_cast<int64_t>(keys.size());
  uint64_t prefix = 0;
  int64_t need = n;
  for (int shift = 56; shift >= 0; shift -= 8) {
    unsigned hist[nbr::kRadixBins] = {};
    for (uint64_t key : keys) {
      const int bin = nbr::radix_bin(key, shift, prefix);
      if (bin >= 0) ++hist[bin];
    }
    int digit = -1;
    int64_t below = 0;
    if (block_way) {
      int64_t before = 0;
      for (int b = 0; b < nbr::kRadixBins; ++b) {
        int64_t mine = before;
        if (before < need && nbr::radix_digit(hist + b, 1, need, &mine) == 0) {
          EXPECT_EQ(digit, -1) << "two threads claim the digit";
          digit = b;
          below = mine;
        }
        before += hist[b];
      }
    } else {
      constexpr int kPerLane = nbr::kRadixBins / 32;
      int64_t inclusive = 0;
      for (int lane = 0; lane < 32 && digit < 0; ++lane) {
        int64_t mine = 0;
        for (int b = 0; b < kPerLane; ++b) mine += hist[lane * kPerLane + b];
        if (inclusive + mine >= need) {
          below = inclusive;
          digit = lane * kPerLane + nbr::radix_digit(hist + lane * kPerLane, kPerLane, need, &below);
        }
        inclusive += mine;
      }
    }
    EXPECT_GE(digit, 0);
    EXPECT_LT(digit, nbr::kRadixBins);
    prefix |= static_cast<uint64_t>(digit) << shift;
    need -= below;
  }
  std::vector<int64_t> out;
  int64_t ties = 0;
  for (int64_t k = 0; k < d; ++k) {
    if (nbr::es_keep(keys[k], prefix, ties, need)) out.push_back(begin + k);
    if (keys[k] == prefix) ++ties;
  }
  return out;
}

std::vector<int64_t> radix_weighted(uint64_t seed, uint64_t ls, const std::vector<float>& w, int64_t begin, int64_t n,
                                    bool block_way) {
  std::vector<uint64_t> keys(w.size());
  for (std::size_t k = 0; k < w.size(); ++k) keys[k] = nbr::es_key_bits(seed, ls, begin + static_cast<int64_t>(k), w[k]);
  return radix_select(keys, begin, n, block_way);
}

TEST(NeighborSteps, RadixSelectKeepsTheLowestPositionsAmongTiedKeys) {
  // Real keys almost never tie; the rule must still be the host's (key, position) order.
  std::mt19937_64 rng(8);
  for (int trial = 0; trial < 500; ++trial) {
    const int64_t d = 1 + static_cast<int64_t>(rng() % 300);
    std::vector<uint64_t> keys(static_cast<std::size_t>(d));
    const uint64_t spread = 1 + rng() % 5;
    for (uint64_t& k : keys) k = (rng() % spread) << (rng() % 2 == 0 ? 3 : 40);  // many ties, several digits
    const int64_t n = 1 + static_cast<int64_t>(rng() % d);
    std::vector<int64_t> order(static_cast<std::size_t>(d));
    for (int64_t k = 0; k < d; ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return keys[a] != keys[b] ? keys[a] < keys[b] : a < b; });
    order.resize(static_cast<std::size_t>(n));
    std::sort(order.begin(), order.end());
    for (int64_t& k : order) k += 10;
    ASSERT_EQ(radix_select(keys, 10, n, false), order) << "warp way, trial " << trial;
    ASSERT_EQ(radix_select(keys, 10, n, true), order) << "block way, trial " << trial;
  }
}

TEST(NeighborSteps, RadixDigitGolden) {
  unsigned hist[8] = {0, 3, 0, 2, 5, 0, 0, 1};
  int64_t below = 0;
  EXPECT_EQ(nbr::radix_digit(hist, 8, 1, &below), 1);
  EXPECT_EQ(below, 0);
  below = 0;
  EXPECT_EQ(nbr::radix_digit(hist, 8, 4, &below), 3);
  EXPECT_EQ(below, 3);
  below = 0;
  EXPECT_EQ(nbr::radix_digit(hist, 8, 11, &below), 7);
  EXPECT_EQ(below, 10);
  below = 4;  // a lane's bins after 4 keys in earlier lanes
  EXPECT_EQ(nbr::radix_digit(hist, 8, 6, &below), 1);
  EXPECT_EQ(below, 4);
  below = 4;
  EXPECT_EQ(nbr::radix_digit(hist, 8, 20, &below), 8);  // not reached: every bin counted
  EXPECT_EQ(below, 15);
  EXPECT_EQ(nbr::radix_bin(0x1122334455667788ull, 56, 0), 0x11);
  EXPECT_EQ(nbr::radix_bin(0x1122334455667788ull, 48, 0x1100000000000000ull), 0x22);
  EXPECT_EQ(nbr::radix_bin(0x1122334455667788ull, 48, 0x1200000000000000ull), -1);
  EXPECT_EQ(nbr::es_key_bits(1, 2, 3, 0.0f), ~0ull);
}

TEST(NeighborSteps, RadixSelectMatchesTheCpuSampler) {
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 600; ++trial) {
    const int64_t d = 1 + static_cast<int64_t>(rng() % (trial % 3 == 0 ? 20 : 700));
    std::vector<float> w = random_weights(rng, d);
    if (trial % 7 == 0) std::fill(w.begin(), w.end(), 0.5f);  // equal weights
    const int64_t positive = std::count_if(w.begin(), w.end(), [](float x) { return x > 0; });
    if (positive < 2) continue;
    const int64_t n = 1 + static_cast<int64_t>(rng() % (positive - 1));  // n < positive: the select path
    const uint64_t seed = rng(), ls = rng();
    const int64_t begin = static_cast<int64_t>(rng() % 5000);
    const auto want = cpu_draws(seed, ls, n, false, w, 0, begin, d);
    ASSERT_EQ(radix_weighted(seed, ls, w, begin, n, false), want) << "warp way, d " << d << " n " << n;
    ASSERT_EQ(radix_weighted(seed, ls, w, begin, n, true), want) << "block way, d " << d << " n " << n;
  }
}

// ---- Compaction --------------------------------------------------------------------------------

/// The GPU compaction on the host: the smallest position per id (the table's atomicMin), the
/// first-occurrence marks, their inclusive scan, then the local ids.
void gpu_compact(const std::vector<int64_t>& dst, const std::vector<int64_t>& nbrs, std::vector<int64_t>& src_nodes,
                 std::vector<int64_t>& local) {
  const auto nd = static_cast<int64_t>(dst.size()), ne = static_cast<int64_t>(nbrs.size());
  std::map<int64_t, uint64_t> first;
  // Any insertion order gives the same minima: insert backwards.
  for (int64_t q = nd + ne - 1; q >= 0; --q) {
    const int64_t id = q < nd ? dst[q] : nbrs[q - nd];
    auto [it, inserted] = first.emplace(id, static_cast<uint64_t>(q));
    if (!inserted) it->second = std::min<uint64_t>(it->second, static_cast<uint64_t>(q));
  }
  std::vector<int64_t> new_rank(static_cast<std::size_t>(ne));
  int64_t running = 0;
  for (int64_t e = 0; e < ne; ++e) new_rank[e] = running += nbr::first_occurrence(first[nbrs[e]], nd + e) ? 1 : 0;
  src_nodes.assign(static_cast<std::size_t>(nd + running), -1);
  std::copy(dst.begin(), dst.end(), src_nodes.begin());
  local.resize(static_cast<std::size_t>(ne));
  for (int64_t e = ne - 1; e >= 0; --e) {  // the threads' order does not matter
    const auto f = static_cast<int64_t>(first[nbrs[e]]);
    local[e] = nbr::compact_local_id(f, nd, new_rank.data());
    if (nbr::first_occurrence(static_cast<uint64_t>(f), nd + e)) src_nodes[local[e]] = nbrs[e];
  }
}

TEST(NeighborSteps, CompactionNumbersNewNodesInFirstAppearanceOrder) {
  {
    // Golden: dst {7, 3}; neighbours 3, 9, 7, 9, 4 -> src {7, 3, 9, 4}, local {1, 2, 0, 2, 3}.
    std::vector<int64_t> src, local;
    gpu_compact({7, 3}, {3, 9, 7, 9, 4}, src, local);
    EXPECT_EQ(src, (std::vector<int64_t>{7, 3, 9, 4}));
    EXPECT_EQ(local, (std::vector<int64_t>{1, 2, 0, 2, 3}));
  }
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 600; ++trial) {
    // The host's three maps: ids in a range at most twice their count (its dense table), ids
    // spread below 2^31 (32-bit hash slots) and ids of up to 2^45 (64-bit slots).
    const int64_t ids = 1 + static_cast<int64_t>(rng() % 300);
    const int spread = trial % 3;
    const auto id_of = [&](int64_t k) { return spread == 0 ? k : spread == 1 ? k * 7919 + 1000 : (k << 37) + k; };
    std::vector<int64_t> dst = test::random_seeds(ids, static_cast<int64_t>(rng() % ids) + 1, rng());
    for (int64_t& x : dst) x = id_of(x);
    std::vector<int64_t> nbrs(rng() % 400);
    for (int64_t& x : nbrs) x = id_of(static_cast<int64_t>(rng() % ids));
    std::vector<int64_t> want_src, want_local, src, local;
    cpu::compact_layer(dst, nbrs, want_src, want_local);
    gpu_compact(dst, nbrs, src, local);
    ASSERT_EQ(src, want_src) << "trial " << trial;
    ASSERT_EQ(local, want_local) << "trial " << trial;
  }
  for (int64_t ids : {0, 1, 31, 32, 33, 1000, 1 << 20}) {
    const uint64_t c = nbr::compact_capacity(ids);
    EXPECT_GE(c, 2 * static_cast<uint64_t>(ids));
    EXPECT_GE(c, 64u);
    EXPECT_EQ(c & (c - 1), 0u);
  }
}

// ---- Bounds ------------------------------------------------------------------------------------

TEST(NeighborSteps, BoundsHoldTheCpuSamplersSizes) {
  const test::OwnedGraph g0 = test::OwnedGraph::random(2000, 8, 6);
  test::OwnedGraph gw = g0;
  std::mt19937_64 rng(7);
  gw.weights = random_weights(rng, gw.num_edges());
  const std::vector<std::vector<int64_t>> fanout_sets = {{15, 10, 5}, {-1, 3}, {0, 4}, {40, 2}, {1, 1, 1, 1}};
  // A small graph, where fanout * seeds exceeds the edge count (the bound with replacement must
  // not be capped by it).
  const test::OwnedGraph small = test::OwnedGraph::random(60, 2, 8);
  const test::OwnedGraph* graphs[] = {&g0, &gw, &small};
  for (const test::OwnedGraph* g : graphs) {
    for (bool replace : {false, true}) {
      for (const auto& fanouts : fanout_sets) {
        const NeighborSampler sampler(g->sample_graph(), {.fanouts = fanouts, .replace = replace, .seed = 9});
        for (uint64_t stream = 0; stream < 4; ++stream) {
          const std::vector<int64_t> seeds = test::random_seeds(g->num_nodes(), std::min<int64_t>(1 + 97 * stream, g->num_nodes()), stream);
          const MiniBatch mb = sampler.sample(seeds, stream);
          int64_t nd_bound = static_cast<int64_t>(seeds.size());
          for (std::size_t l = 0; l < fanouts.size(); ++l) {
            const Block& blk = mb.blocks[l];
            const int64_t ne = static_cast<int64_t>(blk.indices.size()), ns = static_cast<int64_t>(blk.src_nodes.size());
            nbr::LayerBound b = nbr::layer_bound(nd_bound, fanouts[l], replace, g->num_nodes(), g->num_edges());
            if (b.ne < 0) {
              EXPECT_LT(fanouts[l], 0);
              // The sampler reads the exact sizes here.
              b = nbr::layer_bound(blk.num_dst, fanouts[l], replace, g->num_nodes(), g->num_edges(), ne);
            }
            ASSERT_LE(blk.num_dst, b.nd);
            ASSERT_LE(ne, b.ne) << "layer " << l << " fanout " << fanouts[l];
            ASSERT_LE(ns, b.num_src);
            ASSERT_LE(nbr::compact_capacity(std::min(blk.num_dst + ne, g->num_nodes())), b.capacity);
            nd_bound = b.num_src;
          }
        }
      }
    }
  }
}

// The memory the bounds ask for, for the budget the sampler's header states: 1024 seeds, fanouts
// [15, 10, 5], a graph of 20M nodes and 400M edges.
TEST(NeighborSteps, BoundsBytesOfTheReferenceBatch) {
  int64_t nd = 1024, batch = 0, workspace = 0, table = 0;
  const int64_t fanouts[] = {15, 10, 5};
  std::vector<nbr::LayerBound> bounds;
  for (int64_t f : fanouts) {
    const nbr::LayerBound b = nbr::layer_bound(nd, f, false, 20'000'000, 400'000'000);
    bounds.push_back(b);
    batch += nbr::layer_batch_bytes(b, true);
    workspace = std::max(workspace, nbr::layer_workspace_bytes(b));  // reused across layers
    table = std::max<int64_t>(table, static_cast<int64_t>(b.capacity) * 16);
    nd = b.num_src;
  }
  EXPECT_EQ(bounds[0].ne, 15360);
  EXPECT_EQ(bounds[1].nd, 16384);
  EXPECT_EQ(bounds[2].ne, 901120);
  EXPECT_EQ(bounds[2].num_src, 1081344);
  EXPECT_EQ(bounds[2].capacity, uint64_t{1} << 22);
  EXPECT_EQ(table, int64_t{64} << 20);  // the hash table's keys and first positions
  const int64_t total = batch + workspace;
  RecordProperty("bound_bytes", std::to_string(total));
  std::printf("bounds of 1024 seeds, fanouts [15, 10, 5]: batch arrays %.1f MiB, workspace %.1f MiB (hash table %.0f MiB)\n",
              static_cast<double>(batch) / (1 << 20), static_cast<double>(workspace) / (1 << 20),
              static_cast<double>(table) / (1 << 20));
  EXPECT_LT(total, int64_t{160} << 20);
}

}  // namespace
}  // namespace graphtier::sample
