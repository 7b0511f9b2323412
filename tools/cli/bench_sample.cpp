// `graphtier bench sample`: seeds/s and sampled edges/s of every sampler backend and topology
// location on a dataset, next to the machine's random-read rate measured in the same run.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <variant>

#include "bench.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/sample/cuda_neighbor_sampler.hpp"
#include "graphtier/sample/epoch.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"

namespace graphtier::cli {
namespace {

struct BenchSampleOptions {
  std::string dataset;
  std::string fanouts = "15,10,5";
  int64_t batch_size = 1024;
  double seconds = 5;
  uint64_t seed = 0;
};

struct Row {
  std::string backend;
  std::string topology;
  std::string note;  // placement details, or why the row was skipped
  int threads = 0;
  int64_t batches = 0;
  int64_t seeds = 0;
  int64_t edges = 0;
  double seconds = 0;
  double seeds_per_second() const { return seconds > 0 ? static_cast<double>(seeds) / seconds : 0; }
  double edges_per_second() const { return seconds > 0 ? static_cast<double>(edges) / seconds : 0; }
};

/// Independent random 8-byte reads per second over `bytes` of memory, all threads: the rate
/// that bounds a sampler on this machine (each sampled edge costs about one such read of the
/// indices array, plus the compaction's hash probes).
double random_read_rate(int64_t bytes, ThreadPool& pool) {
  const int64_t n = bytes / 8;
  std::vector<int64_t> table(static_cast<std::size_t>(n));
  pool.parallel_for(0, n, int64_t{1} << 20, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) table[i] = i;
  });
  const int64_t reads = 2 * n;
  std::atomic<int64_t> sink{0};
  const auto start = std::chrono::steady_clock::now();
  pool.parallel_for(0, reads, int64_t{1} << 22, [&](int64_t lo, int64_t hi) {
    int64_t sum = 0;
    for (int64_t i = lo; i < hi; ++i) sum += table[bounded_u64(mix64(static_cast<uint64_t>(i)), static_cast<uint64_t>(n))];
    sink += sum;
  });
  return static_cast<double>(reads) / seconds_since(start);
}

/// Runs `sample_batch(b)` (returning the sampled edge count) for b = 0, 1, ... over the pool, one
/// batch per task, in rounds until `seconds` have passed.
Row run_batches(const std::function<int64_t(int64_t)>& sample_batch, int64_t num_batches, int64_t batch_size,
                double seconds, ThreadPool& pool) {
  Row row;
  row.threads = pool.size();
  std::atomic<int64_t> edges{0};
  const auto start = std::chrono::steady_clock::now();
  const int64_t round = std::max<int64_t>(4 * pool.size(), 8);
  while (seconds_since(start) < seconds) {
    const int64_t first = row.batches;
    pool.parallel_for(first, first + round, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b) edges += sample_batch(b % num_batches);
    });
    row.batches += round;
  }
  row.seconds = seconds_since(start);
  row.edges = edges;
  row.seeds = row.batches * batch_size;
  return row;
}

/// Samples batch after batch on `streams` host threads, each with a non-blocking stream of its own
/// (the sampler waits on the host once per minibatch to read its sizes, so one stream leaves the
/// GPU idle during that wait; several overlap them): wall time over the whole run, each thread's
/// last batch synchronised.
Row run_gpu_batches(const sample::CudaNeighborSampler& sampler, const std::function<std::span<const int64_t>(int64_t)>& seeds_of,
                    int64_t num_batches, int64_t batch_size, double seconds, int streams) {
  const int device = sampler.topology().device();
  sampler.sample_device(seeds_of(0), 0);  // warm-up: module load, allocator pool
  device_synchronize(device);
  std::atomic<int64_t> next{0}, edges{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < streams; ++t) {
    threads.emplace_back([&] {
      try {
        const OwnedCudaStream stream(device);
        while (seconds_since(start) < seconds) {
          const int64_t b = next++;
          const sample::DeviceMiniBatch batch =
              sampler.sample_device(seeds_of(b % num_batches), static_cast<uint64_t>(b), stream.get());
          for (const sample::DeviceBlock& block : batch.blocks) edges += block.num_edges;
        }
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  device_synchronize(device);
  Row row;
  row.threads = streams;
  row.seconds = seconds_since(start);
  row.batches = next;
  row.edges = edges;
  row.seeds = row.batches * batch_size;
  return row;
}

/// GPU rows: topology pinned (zero-copy), hot prefix cached at a few budgets, and in device memory.
void add_gpu_rows(const sample::SampleGraph& graph, const sample::NeighborSamplerOptions& options,
                  const std::function<std::span<const int64_t>(int64_t)>& seeds_of, int64_t num_batches,
                  int64_t batch_size, double seconds, std::vector<Row>& rows) {
  struct Config {
    std::string name;
    sample::TopologyOptions topology;
  };
  const auto index_bytes = static_cast<int64_t>(std::visit([](auto s) { return sizeof(s[0]); }, graph.csc.indices));
  const int64_t edge_bytes = graph.csc.num_edges() * index_bytes;
  std::vector<Config> configs = {{"pinned", {.placement = sample::TopologyPlacement::kPinned}}};
  for (int percent : {10, 25, 50}) {
    configs.push_back({"cached " + std::to_string(percent) + "%",
                       {.placement = sample::TopologyPlacement::kCached, .cache_bytes = edge_bytes * percent / 100}});
  }
  configs.push_back({"device", {.placement = sample::TopologyPlacement::kDevice}});
  for (const Config& c : configs) {
    if (!cuda_available() || !graph.hetero.empty()) {
      rows.push_back({.backend = "gpu", .topology = c.name,
                      .note = cuda_available() ? "skipped: no GPU sampler for typed graphs yet" : "skipped: no GPU"});
      continue;
    }
    const sample::DeviceTopology topology(graph, c.topology);
    const sample::CudaNeighborSampler sampler(topology, options);
    for (const int streams : {1, 4, 8}) {
      Row r = run_gpu_batches(sampler, seeds_of, num_batches, batch_size, seconds, streams);
      r.backend = "gpu";
      r.topology = c.name;
      r.note = detail::concat("hot prefix ", topology.cached_nodes(), " nodes, ",
                              format_bytes(static_cast<double>(topology.device_bytes())), " device, ",
                              format_bytes(static_cast<double>(topology.pinned_bytes())), " pinned");
      rows.push_back(r);
    }
  }
}

void run_bench_sample(const BenchSampleOptions& c, const GlobalOptions& global) {
  const graph::Dataset dataset = graph::Dataset::open(c.dataset);
  ThreadPool pool(global.threads);
  sample::NeighborSamplerOptions o;
  o.fanouts = parse_int_list(c.fanouts, "--fanouts");
  o.seed = c.seed;
  o.edge_ids = false;
  // A typed dataset samples per relation, every relation taking the hop's fanout.
  const sample::SampleGraph graph{graph::CscView::of(dataset), {}, dataset.hetero()};
  // Seeds: the train split when there is one (as training samples), else every node.
  std::vector<int64_t> ids;
  const auto train = dataset.split(graph::Split::kTrain);
  if (!train.empty()) {
    ids.assign(train.begin(), train.end());
  } else {
    ids.resize(static_cast<std::size_t>(dataset.num_nodes()));
    for (int64_t v = 0; v < dataset.num_nodes(); ++v) ids[v] = v;
  }
  ids = sample::shuffled_ids(ids, c.seed, 0);
  const int64_t num_batches = std::max<int64_t>(1, static_cast<int64_t>(ids.size()) / c.batch_size);
  const std::function<std::span<const int64_t>(int64_t)> seeds_of = [&](int64_t b) {
    const int64_t begin = b * c.batch_size;
    return std::span<const int64_t>(ids.data() + begin,
                                    static_cast<std::size_t>(std::min<int64_t>(c.batch_size, static_cast<int64_t>(ids.size()) - begin)));
  };
  log_info("bench sample: ", dataset.num_nodes(), " nodes, ", dataset.num_edges(), " edges",
           graph.hetero.empty() ? "" : detail::concat(" (", graph.hetero.num_relations(), " relations)"), ", fanouts ", c.fanouts,
           ", batch ", c.batch_size, ", ", pool.size(), " threads");

  std::vector<Row> rows;
  const sample::NeighborSampler cpu(graph, o);
  Row r = run_batches([&](int64_t b) { return cpu.sample(seeds_of(b), static_cast<uint64_t>(b)).num_edges(); }, num_batches,
                      c.batch_size, c.seconds, pool);
  r.backend = "cpu";
  r.topology = "host";
  rows.push_back(r);
  add_gpu_rows(graph, o, seeds_of, num_batches, c.batch_size, c.seconds, rows);

  const double reads = random_read_rate(int64_t{1} << 30, pool);
  if (global.json) {
    nlohmann::ordered_json j;
    j["dataset"] = c.dataset;
    j["num_nodes"] = dataset.num_nodes();
    j["num_edges"] = dataset.num_edges();
    j["num_relations"] = graph.hetero.num_relations();
    j["fanouts"] = o.fanouts;
    j["batch_size"] = c.batch_size;
    j["random_reads_per_second"] = reads;
    j["rows"] = nlohmann::ordered_json::array();
    for (const Row& row : rows) {
      j["rows"].push_back({{"backend", row.backend}, {"topology", row.topology}, {"threads", row.threads},
                           {"batches", row.batches}, {"seconds", row.seconds}, {"seeds_per_second", row.seeds_per_second()},
                           {"edges_per_second", row.edges_per_second()},
                           {"edges_per_random_read", row.edges_per_second() / reads},
                           {"speedup_over_cpu", row.edges_per_second() / rows.front().edges_per_second()},
                           {"note", row.note}});
    }
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::printf("%-8s %-12s %7s %9s %12s %12s %11s %9s  %s\n", "backend", "topology", "threads", "batches", "seeds/s",
              "edges/s", "edges/read", "x cpu", "");
  for (const Row& row : rows) {
    if (row.batches == 0) {
      std::printf("%-8s %-12s %s\n", row.backend.c_str(), row.topology.c_str(), row.note.c_str());
      continue;
    }
    std::printf("%-8s %-12s %7d %9lld %12s %12s %11.3f %9.2f  %s\n", row.backend.c_str(), row.topology.c_str(), row.threads,
                static_cast<long long>(row.batches), format_count(row.seeds_per_second()).c_str(),
                format_count(row.edges_per_second()).c_str(), row.edges_per_second() / reads,
                row.edges_per_second() / rows.front().edges_per_second(), row.note.c_str());
  }
  std::printf("limit: %s random 8-byte reads/s over 1 GiB with %d threads (edges/read = edges/s over it)\n",
              format_count(reads).c_str(), pool.size());
}

}  // namespace

void register_bench_sample(CLI::App& bench, const GlobalOptions& global) {
  auto opt = std::make_shared<BenchSampleOptions>();
  auto* cmd = bench.add_subcommand("sample", "Seeds/s and sampled edges/s per sampler backend and topology location (a typed dataset per relation)");
  cmd->add_option("-d,--dataset", opt->dataset, "Dataset directory")->required();
  cmd->add_option("--fanouts", opt->fanouts, "Per-layer fanouts, seeds' hop first")->capture_default_str();
  cmd->add_option("--batch-size", opt->batch_size, "Seeds per minibatch")->check(kPositive)->capture_default_str();
  cmd->add_option("--seconds", opt->seconds, "Time per backend")->check(kPositive)->capture_default_str();
  cmd->add_option("--seed", opt->seed, "Random seed")->check(kNonNegative)->capture_default_str();
  cmd->callback([opt, &global] { run_bench_sample(*opt, global); });
}

}  // namespace graphtier::cli
