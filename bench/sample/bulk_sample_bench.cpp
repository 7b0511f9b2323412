// What bulk matrix-based sampling (k minibatches per call) buys against one-at-a-time sampling:
// sampled edges per second on an in-memory R-MAT power-law graph, in two sections. GraphSAGE,
// fanouts [15, 10, 5]: NeighborSampler against BulkSampler. LADIES, layer sizes [512, 512]:
// LayerSampler against BulkSampler (kLadies). Each section times the one-at-a-time sampler with
// the pool and on one thread, then BulkSampler with k = 1, 4, 16, 64 (pool) and k = 1 on one
// thread, then the CUDA bulk sampler when a GPU is present. Every row samples the same
// `--batches` minibatches (the same seeds). The ratio column is the section's one-at-a-time
// time with the pool over the row's time: a speed-up for the same batches.
//
//   bulk_sample_bench [--nodes 1M] [--edges 20M] [--batch 1024] [--batches 64] [--threads 0]
//                     [--fanouts 15,10,5] [--ladies-sizes 512,512] [--ks 1,4,16,64] [--seed 1]
//
// Times are host wall-clock for the whole call (CUDA rows included: their results are MiniBatches
// on the host, as the loader consumes them). The samplers' outputs differ by design (bulk counts
// parallel edges once; bulk LADIES draws over A + I by multiplicity), so edge counts are reported
// per row.
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
#include "graphtier/sample/layer_sampler.hpp"
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

std::string join(const std::vector<int64_t>& values) {
  std::string out;
  for (int64_t v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t nodes = 1'000'000, edges = 20'000'000, batch = 1024, num_batches = 64;
  int threads = 0;
  uint64_t seed = 1;
  std::vector<int64_t> fanouts = {15, 10, 5}, ladies_sizes = {512, 512}, ks = {1, 4, 16, 64};
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
      else if (arg == "--ladies-sizes") ladies_sizes = parse_int_list(v, "--ladies-sizes");
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

  double baseline = 0;  // seconds of the section's first row, its one-at-a-time baseline
  const auto header = [&](const char* what) {
    std::printf("\n%s\n%-36s %12s %10s %12s %12s %8s\n", what, "sampler", "edges", "seconds", "seeds/s", "edges/s",
                "ratio");
    baseline = 0;
  };
  const auto row = [&](const std::string& name, int64_t sampled, double secs) {
    if (baseline == 0) baseline = secs;
    std::printf("%-36s %12lld %10.3f %12.4g %12.4g %8.3f\n", name.c_str(), static_cast<long long>(sampled), secs,
                static_cast<double>(batch * num_batches) / secs, static_cast<double>(sampled) / secs, baseline / secs);
    std::fflush(stdout);
  };
  const auto run_one = [&](const std::string& label, auto&& sample_one) {
    for (ThreadPool* p : {&pool, static_cast<ThreadPool*>(nullptr)}) {
      const auto start = std::chrono::steady_clock::now();
      int64_t sampled = 0;
      for (int64_t b = 0; b < num_batches; ++b) sampled += sample_one(seeds[b], static_cast<uint64_t>(b), p).num_edges();
      row(label + (p ? ", pool" : ", 1 thr"), sampled, seconds_since(start));
    }
  };
  const auto run_bulk = [&](const std::string& label, int64_t k, auto&& sample_k) {
    const auto start = std::chrono::steady_clock::now();
    int64_t sampled = 0;
    for (int64_t b = 0; b < num_batches; b += k) {
      const int64_t n = std::min(k, num_batches - b);
      sampled += count_edges(sample_k(std::span<const std::span<const int64_t>>(seeds.data() + b, static_cast<std::size_t>(n)),
                                      static_cast<uint64_t>(b)));
    }
    row(label + ", k=" + std::to_string(k), sampled, seconds_since(start));
  };
  const auto run_section = [&](const std::string& name, const BulkSamplerOptions& bo, auto&& sample_one) {
    header((name + " (" + (bo.algorithm == BulkAlgorithm::kLadies ? "layer sizes " : "fanouts ") +
            join(bo.fanouts) + ")").c_str());
    run_one("one-at-a-time " + name, sample_one);
    const auto built = std::chrono::steady_clock::now();
    const BulkSampler bulk(sg, bo, &pool);
    std::printf("bulk matrices built in %.2f s (once per graph, not counted below)\n", seconds_since(built));
    for (int64_t k : ks) {
      run_bulk("bulk " + name + " CPU, pool", k, [&](auto s, uint64_t first) { return bulk.sample(s, first, &pool); });
    }
    run_bulk("bulk " + name + " CPU, 1 thr", 1, [&](auto s, uint64_t first) { return bulk.sample(s, first); });
    if (!cuda_available()) {
      std::printf("%-36s skipped: no GPU\n", ("bulk " + name + " CUDA").c_str());
      return;
    }
    const CudaBulkSampler gpu(sg, bo, 0, &pool);
    run_bulk("bulk " + name + " CUDA (warm-up)", 1, [&](auto s, uint64_t first) { return gpu.sample(s, first, {}, &pool); });
    for (int64_t k : ks) {
      run_bulk("bulk " + name + " CUDA", k, [&](auto s, uint64_t first) { return gpu.sample(s, first, {}, &pool); });
    }
  };

  NeighborSamplerOptions no;
  no.fanouts = fanouts;
  no.seed = seed;
  const NeighborSampler sage(sg, no);
  BulkSamplerOptions bo;
  bo.fanouts = fanouts;
  bo.seed = seed;
  run_section("GraphSAGE", bo, [&](auto s, uint64_t stream, ThreadPool* p) { return sage.sample(s, stream, p); });

  LayerSamplerOptions lo;
  lo.method = LayerMethod::kLadies;
  lo.layer_sizes = ladies_sizes;
  lo.seed = seed;
  const LayerSampler ladies(sg, lo);
  bo.algorithm = BulkAlgorithm::kLadies;
  bo.fanouts = ladies_sizes;
  run_section("LADIES", bo, [&](auto s, uint64_t stream, ThreadPool* p) { return ladies.sample(s, stream, p); });
  return 0;
}
