// Throughput of the layer-wise samplers (LADIES, FastGCN) on an in-memory random graph: seeds per
// second and sampled block edges per second, per backend.
//
//   layer_sampler_bench [--nodes 1M] [--degree 16] [--batch 1024] [--sizes 512,512] [--batches 20]
//                       [--method ladies|fastgcn] [--threads 1] [--cuda]
//
// Prints one JSON object on stdout, after one untimed batch. The CUDA figure is the host wall time of the whole synchronous
// call (uploads of the seeds, kernels, copies of the blocks back), what a loader would wait for.
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/sample/layer_sampler.hpp"

namespace {

using namespace graphtier;

struct Graph {
  std::vector<int64_t> indptr;
  std::vector<int32_t> indices;
};

/// Uniform in-neighbours, degrees uniform in [0, 2 * degree]: enough to time the samplers.
Graph random_graph(int64_t nodes, int64_t degree) {
  Graph g;
  g.indptr.resize(static_cast<std::size_t>(nodes + 1), 0);
  for (int64_t v = 0; v < nodes; ++v) {
    g.indptr[v + 1] = g.indptr[v] + static_cast<int64_t>(bounded_u64(mix64(static_cast<uint64_t>(v)), 2 * degree + 1));
  }
  g.indices.resize(static_cast<std::size_t>(g.indptr.back()));
  for (std::size_t e = 0; e < g.indices.size(); ++e) {
    g.indices[e] = static_cast<int32_t>(bounded_u64(mix64(e ^ 0x5bd1e995ull), static_cast<uint64_t>(nodes)));
  }
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t nodes = 1'000'000, degree = 16, batch = 1024, batches = 20;
  int threads = 1;
  bool use_cuda = false;
  sample::LayerSamplerOptions o;
  o.layer_sizes = {512, 512};
  o.seed = 1;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const auto value = [&]() -> std::string {
        GRAPHTIER_EXPECTS(i + 1 < argc, InvalidArgument, arg, " needs a value");
        return argv[++i];
      };
      if (arg == "--nodes") nodes = parse_count(value());
      else if (arg == "--degree") degree = parse_count(value());
      else if (arg == "--batch") batch = parse_count(value());
      else if (arg == "--batches") batches = parse_count(value());
      else if (arg == "--sizes") o.layer_sizes = parse_int_list(value(), "--sizes");
      else if (arg == "--threads") threads = static_cast<int>(parse_count(value()));
      else if (arg == "--cuda") use_cuda = true;
      else if (arg == "--method") {
        const std::string m = value();
        GRAPHTIER_EXPECTS(m == "ladies" || m == "fastgcn", InvalidArgument, "--method is ladies or fastgcn, not ", m);
        o.method = m == "ladies" ? sample::LayerMethod::kLadies : sample::LayerMethod::kFastGcn;
      } else {
        throw InvalidArgument("unknown argument " + arg);
      }
    }
    const Graph g = random_graph(nodes, degree);
    const sample::SampleGraph sg{{g.indptr, graph::IndexSpan(std::span<const int32_t>(g.indices))}, {}};
    std::vector<int64_t> seeds(static_cast<std::size_t>(std::min(batch, nodes)));
    std::iota(seeds.begin(), seeds.end(), 0);
    ThreadPool pool(threads);

    using clock = std::chrono::steady_clock;
    const auto t_build = clock::now();
    const sample::LayerSampler cpu(sg, o);
    std::unique_ptr<sample::DeviceTopology> topology;  // the graph in device memory, read by `gpu`
    std::unique_ptr<sample::CudaLayerSampler> gpu;
    if (use_cuda) {
      topology = std::make_unique<sample::DeviceTopology>(sg);
      gpu = std::make_unique<sample::CudaLayerSampler>(*topology, sg, o);
    }
    const double build_s = std::chrono::duration<double>(clock::now() - t_build).count();

    const auto sample_one = [&](uint64_t b) {
      return gpu ? gpu->sample(seeds, b) : cpu.sample(seeds, b, threads > 1 ? &pool : nullptr);
    };
    // One untimed batch first: the CUDA sampler's memory pool and staging grow to their size there.
    sample_one(static_cast<uint64_t>(batches));
    int64_t edges = 0;
    const auto t0 = clock::now();
    for (int64_t b = 0; b < batches; ++b) edges += sample_one(static_cast<uint64_t>(b)).num_edges();
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    nlohmann::ordered_json j;
    j["backend"] = gpu ? "cuda" : "cpu";
    j["method"] = o.method == sample::LayerMethod::kLadies ? "ladies" : "fastgcn";
    j["nodes"] = nodes;
    j["edges"] = g.indptr.back();
    j["batch"] = seeds.size();
    j["layer_sizes"] = o.layer_sizes;
    j["threads"] = threads;
    j["build_seconds"] = build_s;
    j["ms_per_batch"] = 1e3 * s / static_cast<double>(batches);
    j["seeds_per_second"] = static_cast<double>(batches) * static_cast<double>(seeds.size()) / s;
    j["block_edges_per_second"] = static_cast<double>(edges) / s;
    std::cout << j.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "layer_sampler_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
