// What bulk matrix-based sampling (k minibatches per call) buys against one-at-a-time neighbour
// sampling: sampled edges per second on an in-memory R-MAT power-law graph, fanouts [15, 10, 5],
// for NeighborSampler (1 thread, pool) and BulkSampler with k = 1, 4, 16, 64 (pool), plus the
// CUDA bulk sampler when a GPU is present. Each row samples the same `--batches` minibatches
// (the same seeds), and the ratio column is edges/s over NeighborSampler's with the pool.
//
//   bulk_sample_bench [--nodes 1M] [--edges 20M] [--batch 1024] [--batches 64] [--threads 0]
//                     [--fanouts 15,10,5] [--ks 1,4,16,64] [--seed 1]
//
// Times are host wall-clock for the whole call (CUDA rows included: their results are MiniBatches
// on the host, as the loader consumes them). The two samplers' outputs differ by design (bulk
// counts parallel edges once); edge counts are reported per row.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/sample/bulk_sampler.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"

namespace {

using namespace graphtier;
using namespace graphtier::sample;

struct Graph {
  std::vector<int64_t> indptr;
  std::vector<int32_t> indices;
};

/// R-MAT (a, b, c) = (0.57, 0.19, 0.19) over ceil(log2 n) bits, ids >= n folded by modulo, then
/// scrambled by a multiplicative bijection so id order carries no degree information.
Graph rmat(int64_t n, int64_t m, uint64_t seed, ThreadPool& pool) {
  int bits = 0;
  while ((int64_t{1} << bits) < n) ++bits;
  std::vector<int64_t> src(static_cast<std::size_t>(m)), dst(static_cast<std::size_t>(m));
  pool.parallel_for(0, m, 1 << 16, [&](int64_t lo, int64_t hi) {
    for (int64_t e = lo; e < hi; ++e) {
      uint64_t s = 0, d = 0;
      PhiloxBlock block{};
      for (int b = 0; b < bits; ++b) {
        if (b % 4 == 0) block = philox_block(seed, static_cast<uint64_t>(e), static_cast<uint64_t>(b));
        const float u = u32_to_unit_float(block.v[b % 4]);
        const int q = u < 0.57f ? 0 : u < 0.76f ? 1 : u < 0.95f ? 2 : 3;
        s = s << 1 | static_cast<uint64_t>(q >> 1);
        d = d << 1 | static_cast<uint64_t>(q & 1);
      }
      const auto scramble = [&](uint64_t x) { return static_cast<int64_t>((x % static_cast<uint64_t>(n)) * 0x9E3779B1ull % static_cast<uint64_t>(n)); };
      src[e] = scramble(s);
      dst[e] = scramble(d);
    }
  });
  Graph g;
  g.indptr.assign(static_cast<std::size_t>(n + 1), 0);
  for (int64_t e = 0; e < m; ++e) ++g.indptr[dst[e] + 1];
  std::partial_sum(g.indptr.begin(), g.indptr.end(), g.indptr.begin());
  std::vector<int64_t> fill(g.indptr.begin(), g.indptr.end() - 1);
  g.indices.resize(static_cast<std::size_t>(m));
  for (int64_t e = 0; e < m; ++e) g.indices[fill[dst[e]]++] = static_cast<int32_t>(src[e]);
  return g;
}

int64_t count_edges(const std::vector<MiniBatch>& batches) {
  int64_t e = 0;
  for (const MiniBatch& b : batches) e += b.num_edges();
  return e;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t nodes = 1'000'000, edges = 20'000'000, batch = 1024, num_batches = 64;
  int threads = 0;
  uint64_t seed = 1;
  std::vector<int64_t> fanouts = {15, 10, 5}, ks = {1, 4, 16, 64};
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      GRAPHTIER_EXPECTS(i + 1 < argc, InvalidArgument, arg, " needs a value");
      const std::string v = argv[++i];
      if (arg == "--nodes") nodes = parse_count(v);
      else if (arg == "--edges") edges = parse_count(v);
      else if (arg == "--batch") batch = std::stoll(v);
      else if (arg == "--batches") num_batches = std::stoll(v);
      else if (arg == "--threads") threads = std::stoi(v);
      else if (arg == "--fanouts") fanouts = parse_int_list(v, "--fanouts");
      else if (arg == "--ks") ks = parse_int_list(v, "--ks");
      else if (arg == "--seed") seed = std::stoull(v);
      else throw InvalidArgument("unknown flag " + arg);
    }
    GRAPHTIER_EXPECTS(batch * num_batches <= nodes, InvalidArgument, "batch x batches exceeds the node count");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bulk_sample_bench: %s\n", e.what());
    return 2;
  }
  ThreadPool pool(threads);
  auto t0 = std::chrono::steady_clock::now();
  const Graph g = rmat(nodes, edges, seed, pool);
  std::printf("graph: R-MAT %lld nodes, %lld edges, max in-degree %lld, built in %.2f s; pool %d threads\n",
              static_cast<long long>(nodes), static_cast<long long>(edges),
              static_cast<long long>([&] {
                int64_t d = 0;
                for (int64_t v = 0; v < nodes; ++v) d = std::max(d, g.indptr[v + 1] - g.indptr[v]);
                return d;
              }()),
              seconds_since(t0), pool.size());
  const SampleGraph sg{{g.indptr, graph::IndexSpan(std::span<const int32_t>(g.indices))}, {}};

  // The same seeds for every row: a shuffled prefix of the ids cut into batches.
  std::vector<int64_t> ids(static_cast<std::size_t>(nodes));
  std::iota(ids.begin(), ids.end(), 0);
  for (int64_t i = nodes - 1; i > 0; --i) {
    std::swap(ids[i], ids[static_cast<int64_t>(bounded_u64(philox_u64(seed, 99, static_cast<uint64_t>(i)), static_cast<uint64_t>(i + 1)))]);
  }
  std::vector<std::span<const int64_t>> seeds;
  for (int64_t b = 0; b < num_batches; ++b) seeds.emplace_back(ids.data() + b * batch, static_cast<std::size_t>(batch));

  std::printf("%-34s %12s %10s %14s %8s\n", "sampler", "edges", "seconds", "edges/s", "ratio");
  double baseline = 0;
  const auto row = [&](const std::string& name, int64_t sampled, double secs) {
    const double rate = static_cast<double>(sampled) / secs;
    if (baseline == 0) baseline = rate;
    std::printf("%-34s %12lld %10.3f %14.4g %8.3f\n", name.c_str(), static_cast<long long>(sampled), secs, rate, rate / baseline);
    std::fflush(stdout);
  };
  NeighborSamplerOptions no;
  no.fanouts = fanouts;
  no.seed = seed;
  const NeighborSampler one(sg, no);
  for (ThreadPool* p : {&pool, static_cast<ThreadPool*>(nullptr)}) {
    t0 = std::chrono::steady_clock::now();
    int64_t sampled = 0;
    for (int64_t b = 0; b < num_batches; ++b) sampled += one.sample(seeds[b], static_cast<uint64_t>(b), p).num_edges();
    row(p ? "one-at-a-time NeighborSampler, pool" : "one-at-a-time NeighborSampler, 1 thr", sampled, seconds_since(t0));
  }

  BulkSamplerOptions bo;
  bo.fanouts = fanouts;
  bo.seed = seed;
  t0 = std::chrono::steady_clock::now();
  const BulkSampler bulk(sg, bo, &pool);
  std::printf("bulk matrices built in %.2f s (once per graph, not counted below)\n", seconds_since(t0));
  const auto run_bulk = [&](const std::string& label, int64_t k, auto&& sample_k) {
    t0 = std::chrono::steady_clock::now();
    int64_t sampled = 0;
    for (int64_t b = 0; b < num_batches; b += k) {
      const int64_t n = std::min(k, num_batches - b);
      sampled += count_edges(sample_k(std::span<const std::span<const int64_t>>(seeds.data() + b, static_cast<std::size_t>(n)),
                                      static_cast<uint64_t>(b)));
    }
    row(label + ", k=" + std::to_string(k), sampled, seconds_since(t0));
  };
  for (int64_t k : ks) {
    run_bulk("bulk GraphSAGE CPU, pool", k, [&](auto s, uint64_t first) { return bulk.sample(s, first, &pool); });
  }
  run_bulk("bulk GraphSAGE CPU, 1 thr", 1, [&](auto s, uint64_t first) { return bulk.sample(s, first); });

  if (!cuda_available()) {
    std::printf("%-34s skipped: no GPU\n", "bulk GraphSAGE CUDA");
    return 0;
  }
  const CudaBulkSampler gpu(sg, bo, 0, &pool);
  run_bulk("bulk GraphSAGE CUDA (warm-up)", 1, [&](auto s, uint64_t first) { return gpu.sample(s, first, nullptr, &pool); });
  for (int64_t k : ks) {
    run_bulk("bulk GraphSAGE CUDA", k, [&](auto s, uint64_t first) { return gpu.sample(s, first, nullptr, &pool); });
  }
  return 0;
}
