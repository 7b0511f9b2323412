// GraphSAGE neighbour sampling throughput, CPU against GPU: fanouts [15, 10, 5], batches of 1024
// seeds, unique-and-compact included. Rows: the CPU sampler (one batch per thread of a pool over
// all cores), the GPU reading the topology through zero-copy (pinned), through the hot-prefix
// adjacency cache at a few budgets, and from device memory. GPU time is taken with CUDA events.
//
//   sample_cuda_bench [--nodes 2M] [--edges 40M] [--batches 200] [--batch 1024] [--threads 0]
//                     [--fanouts 15,10,5] [--dataset DIR]
//
// Without --dataset the graph is generated in memory: in-degrees fall with the node id and
// sources are drawn with a bias to low ids, so (as after `prepare`) the hottest nodes form a
// prefix. At 20M nodes / 400M edges it needs about 2 GB of host memory (int32 indices).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#if GRAPHTIER_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/sample/cuda_neighbor_sampler.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"

namespace {

using namespace graphtier;
using namespace graphtier::sample;

struct Graph {
  std::vector<int64_t> indptr;
  std::vector<int32_t> indices;
};

Graph generate(int64_t n, int64_t e, ThreadPool& pool) {
  Graph g;
  g.indptr.assign(static_cast<std::size_t>(n + 1), 0);
  // Degree of v proportional to (v + 1)^-0.5, scaled to about e edges in all.
  double norm = 0;
  for (int64_t v = 0; v < n; ++v) norm += 1.0 / std::sqrt(static_cast<double>(v + 1));
  for (int64_t v = 0; v < n; ++v) {
    g.indptr[v + 1] = g.indptr[v] + static_cast<int64_t>(static_cast<double>(e) / norm / std::sqrt(static_cast<double>(v + 1)) + 0.5);
  }
  g.indices.resize(static_cast<std::size_t>(g.indptr.back()));
  pool.parallel_for(0, n, 4096, [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) {
      for (int64_t p = g.indptr[v]; p < g.indptr[v + 1]; ++p) {
        const double x = u64_to_unit_double(mix64(static_cast<uint64_t>(p) * 0x9E3779B97F4A7C15ull + 1));
        g.indices[p] = static_cast<int32_t>(static_cast<double>(n) * x * x * x);  // biased to low ids
      }
    }
  });
  return g;
}

std::vector<int64_t> parse_fanouts(const std::string& text) {
  std::vector<int64_t> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    out.push_back(std::stoll(text.substr(start, comma - start)));
    start = comma + 1;
  }
  return out;
}

struct Rate {
  double seconds;
  int64_t seeds;
  int64_t edges;
};

void print_row(const std::string& name, const Rate& r, const std::optional<Rate>& cpu, const std::string& extra = "") {
  const double seeds_s = static_cast<double>(r.seeds) / r.seconds, edges_s = static_cast<double>(r.edges) / r.seconds;
  std::printf("%-28s %12.3e seeds/s %12.3e edges/s", name.c_str(), seeds_s, edges_s);
  if (cpu) std::printf("   x%.2f vs CPU", seeds_s / (static_cast<double>(cpu->seeds) / cpu->seconds));
  std::printf("%s\n", extra.c_str());
}

#if GRAPHTIER_WITH_CUDA
void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

Rate time_gpu(const CudaNeighborSampler& sampler, const std::vector<std::vector<int64_t>>& batches) {
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  const CudaStream s{stream};
  sampler.sample_device(batches[0], 0, s);  // warm-up: allocator pool, module load
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  Rate r{0, 0, 0};
  check(cudaEventRecord(start, stream), "cudaEventRecord");
  for (std::size_t b = 0; b < batches.size(); ++b) {
    const DeviceMiniBatch mb = sampler.sample_device(batches[b], b, s);
    r.seeds += static_cast<int64_t>(batches[b].size());
    for (const DeviceBlock& block : mb.blocks) r.edges += block.num_edges;
  }
  check(cudaEventRecord(stop, stream), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  r.seconds = ms / 1e3;
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  return r;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  int64_t nodes = 2'000'000, edges = 40'000'000, num_batches = 200, batch = 1024;
  int threads = 0;
  std::string dataset_dir, fanout_text = "15,10,5";
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const auto value = [&]() -> std::string {
        GRAPHTIER_EXPECTS(i + 1 < argc, InvalidArgument, arg, " needs a value");
        return argv[++i];
      };
      if (arg == "--nodes") nodes = parse_count(value());
      else if (arg == "--edges") edges = parse_count(value());
      else if (arg == "--batches") num_batches = parse_count(value());
      else if (arg == "--batch") batch = parse_count(value());
      else if (arg == "--threads") threads = static_cast<int>(parse_count(value()));
      else if (arg == "--fanouts") fanout_text = value();
      else if (arg == "--dataset") dataset_dir = value();
      else throw InvalidArgument("unknown argument " + arg);
    }
    ThreadPool pool(threads);
    Graph generated;
    std::optional<graph::Dataset> dataset;
    SampleGraph sg;
    const auto t0 = std::chrono::steady_clock::now();
    if (!dataset_dir.empty()) {
      dataset.emplace(graph::Dataset::open(dataset_dir));
      sg.csc = prep::CscView::of(*dataset);
    } else {
      generated = generate(nodes, edges, pool);
      sg.csc = prep::CscView{generated.indptr, graph::IndexSpan(std::span<const int32_t>(generated.indices))};
    }
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int64_t n = sg.csc.num_nodes();
    std::printf("graph: %lld nodes, %lld edges (%s in %.1f s); fanouts [%s], %lld batches of %lld seeds, %d CPU threads\n",
                static_cast<long long>(n), static_cast<long long>(sg.csc.num_edges()),
                dataset_dir.empty() ? "generated" : dataset_dir.c_str(), load_s, fanout_text.c_str(),
                static_cast<long long>(num_batches), static_cast<long long>(batch), pool.size());

    std::vector<int64_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(1));
    std::vector<std::vector<int64_t>> batches;
    for (int64_t b = 0; b < num_batches; ++b) {
      const int64_t lo = (b * batch) % n, hi = std::min(lo + batch, n);
      batches.emplace_back(order.begin() + lo, order.begin() + hi);
    }
    const NeighborSamplerOptions options{.fanouts = parse_fanouts(fanout_text), .replace = false, .edge_ids = true, .seed = 1};

    // CPU: one whole batch per thread, as a loader with one sampling thread per core does.
    const NeighborSampler cpu(sg, options);
    std::vector<int64_t> cpu_edges(batches.size());
    const auto c0 = std::chrono::steady_clock::now();
    pool.parallel_for(0, static_cast<int64_t>(batches.size()), 1, [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b) cpu_edges[b] = cpu.sample(batches[b], static_cast<uint64_t>(b)).num_edges();
    });
    Rate cpu_rate{std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count(), 0,
                  std::accumulate(cpu_edges.begin(), cpu_edges.end(), int64_t{0})};
    for (const auto& b : batches) cpu_rate.seeds += static_cast<int64_t>(b.size());
    print_row("cpu (" + std::to_string(pool.size()) + " threads)", cpu_rate, std::nullopt);

    if (!cuda_available()) {
      for (const char* row : {"gpu pinned (zero-copy)", "gpu cached", "gpu device"}) std::printf("%-28s skipped: no GPU\n", row);
      return 0;
    }
#if GRAPHTIER_WITH_CUDA
    const auto index_bytes = static_cast<int64_t>(std::visit([](auto s) { return sizeof(s[0]); }, sg.csc.indices));
    const int64_t all_bytes = sg.csc.num_edges() * index_bytes;
    struct Config {
      std::string name;
      TopologyOptions options;
    };
    std::vector<Config> configs = {{"gpu pinned (zero-copy)", {.placement = TopologyPlacement::kPinned}}};
    for (int percent : {10, 25, 50}) {
      configs.push_back({"gpu cached " + std::to_string(percent) + "% of edges",
                         {.placement = TopologyPlacement::kCached, .cache_bytes = all_bytes * percent / 100}});
    }
    configs.push_back({"gpu device", {.placement = TopologyPlacement::kDevice}});
    for (const Config& c : configs) {
      const DeviceTopology topology(sg, c.options);
      const CudaNeighborSampler gpu(topology, options);
      char extra[160];
      std::snprintf(extra, sizeof extra, "   (H = %lld nodes, %.2f GB device, %.2f GB pinned)",
                    static_cast<long long>(topology.cached_nodes()), static_cast<double>(topology.device_bytes()) / 1e9,
                    static_cast<double>(topology.pinned_bytes()) / 1e9);
      print_row(c.name, time_gpu(gpu, batches), cpu_rate, extra);
    }
#endif
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sample_cuda_bench: %s\n", e.what());
    return 1;
  }
}
