// Out-of-core gather: random minibatch-sized id lists from a dataset whose features.bin may be
// larger than RAM, with a small host budget, against the raw random-read rate of the same file.
//
//   (a) raw:    a bare io_uring loop of random 4 KiB O_DIRECT reads of features.bin at the
//               store's queue depth (bench/common/io_rates.hpp, as io_bench);
//   (b) gather: FeatureStore::gather of `--batch-rows` uniform random ids per call.
// Rounds alternate (a) and (b), and a last (a) closes them: each (b) is compared with the mean of
// the two (a) around it, so that drift of the disk hits both alike. Peak RSS (ru_maxrss) shows
// what the store keeps in memory. Prints one JSON object.
//
//   feature_bench --dir DATASET [--cpu 0] [--host-cache 256MiB] [--batch-rows 8192] [--seconds 10]
//                 [--rounds 2] [--depth 0] [--threads 2] [--backend auto] [--only raw|gather]
//                 [--raw-area 0]
//
// --only runs one of the two (bench/feature/gather_py_bench.py times the raw loop through it
// beside its own gathers from Python). --raw-area lands the raw loop's reads in blocks drawn from
// an area of that size (e.g. the host cache's), not in one block per read in flight.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/feature/feature_store.hpp"
#include "graphtier/io/read_engine.hpp"
#include "graphtier/io/read_file.hpp"
#include "common/io_rates.hpp"

using namespace graphtier;
using namespace graphtier::bench;

namespace {

Rate gather_rows(feature::FeatureStore& store, std::size_t batch_rows, double seconds, uint64_t seed,
                 feature::GatherStats& stats) {
  std::vector<int64_t> ids(batch_rows);
  // A Buffer, as a loader's output (page aligned: the rows no cache keeps are read into it in place).
  Buffer out(MemoryKind::kHost, batch_rows * static_cast<std::size_t>(store.layout().row_bytes()));
  const TensorView view = TensorView::contiguous(out.data(), store.layout().dtype,
                                                 {static_cast<int64_t>(batch_rows), store.layout().dim});
  const feature::GatherStats before = store.total();
  uint64_t draw = 0;
  int64_t rows = 0;
  const auto start = Clock::now();
  while (seconds_since(start) < seconds) {
    for (int64_t& id : ids) id = static_cast<int64_t>(bounded_u64(philox_u64(seed, 1, draw++), static_cast<uint64_t>(store.num_nodes())));
    store.gather(ids, view);
    rows += static_cast<int64_t>(batch_rows);
  }
  const double elapsed = seconds_since(start);
  stats = store.total();
  const int64_t reads = stats.io.reads - before.io.reads;
  const double latency = stats.io.latency_seconds_sum - before.io.latency_seconds_sum;
  Rate r;
  r.iops = static_cast<double>(reads) / elapsed;
  r.rows_per_second = static_cast<double>(rows) / elapsed;
  r.bytes_per_second = static_cast<double>(stats.io.bytes - before.io.bytes) / elapsed;
  r.mean_latency_seconds = reads > 0 ? latency / static_cast<double>(reads) : 0;
  return r;
}

nlohmann::json to_json(const feature::TierStats& t) {
  return {{"rows", t.rows}, {"bytes", t.bytes}, {"seconds", t.seconds}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  feature::FeatureStoreOptions options;
  options.budgets.host_cache = Budget::bytes(int64_t{256} << 20);
  int64_t batch_rows = 8192;
  double seconds = 10;
  int rounds = 2;
  int threads = 2;
  std::string only;  // "raw", "gather" or empty: both
  std::size_t raw_area = 0;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      GRAPHTIER_EXPECTS(i + 1 < argc, InvalidArgument, arg, " needs a value");
      const std::string value = argv[++i];
      if (arg == "--dir") dir = value;
      else if (arg == "--cpu") options.budgets.cpu_buffer = Budget::parse(value);
      else if (arg == "--host-cache") options.budgets.host_cache = Budget::parse(value);
      else if (arg == "--batch-rows") batch_rows = parse_count(value);
      else if (arg == "--seconds") seconds = std::stod(value);
      else if (arg == "--rounds") rounds = std::stoi(value);
      else if (arg == "--depth") options.io_depth = std::stoi(value);
      else if (arg == "--threads") threads = std::stoi(value);
      else if (arg == "--backend") options.io_backend = io::parse_io_backend(value);
      else if (arg == "--only") only = value;
      else if (arg == "--raw-area") raw_area = static_cast<std::size_t>(parse_bytes(value));
      else GRAPHTIER_EXPECTS(false, InvalidArgument, "unknown option ", arg);
    }
    GRAPHTIER_EXPECTS(!dir.empty(), InvalidArgument, "--dir is required");
    GRAPHTIER_EXPECTS(only.empty() || only == "raw" || only == "gather", InvalidArgument,
                      "--only takes raw or gather, got '", only, "'");
    GRAPHTIER_EXPECTS(batch_rows >= 1 && seconds > 0 && rounds >= 1, InvalidArgument, "bad --batch-rows, --seconds or --rounds");
    ThreadPool pool(threads);
    const auto open_start = Clock::now();
    feature::FeatureStore store(graph::Dataset::open(dir), options, pool);
    const double open_seconds = seconds_since(open_start);
    const int64_t rss_after_open = peak_rss_bytes();
    const int depth = store.io_depth();

    const io::ReadFile file = io::ReadFile::open(dir + "/features.bin");
    std::vector<Rate> raw, gathered;
    feature::GatherStats stats;
    for (int round = 0; round < rounds; ++round) {
      if (only != "gather") raw.push_back(raw_uring(file, depth, seconds, 100 + static_cast<uint64_t>(round), raw_area));
      if (only != "raw") {
        gathered.push_back(
            gather_rows(store, static_cast<std::size_t>(batch_rows), seconds, 200 + static_cast<uint64_t>(round), stats));
      }
    }
    if (only.empty()) raw.push_back(raw_uring(file, depth, seconds, 100 + static_cast<uint64_t>(rounds), raw_area));

    nlohmann::json j;
    j["dir"] = dir;
    j["file_bytes"] = file.size();
    j["physical_memory_bytes"] = physical_memory_bytes();
    j["file_over_ram"] = static_cast<double>(file.size()) / static_cast<double>(physical_memory_bytes());
    j["o_direct"] = file.direct();
    j["raw_backend"] = "bare io_uring loop";
    j["row_bytes"] = store.layout().row_bytes();
    j["row_stride"] = store.layout().row_stride;
    j["cpu_budget"] = options.budgets.cpu_buffer.to_string();
    j["host_cache_budget"] = options.budgets.host_cache.to_string();
    j["host_tier_rows"] = store.tiers().ranges.cpu_end - store.tiers().ranges.gpu_end;
    j["host_cache_rows"] = store.tiers().host_cache_rows;
    j["depth"] = depth;
    j["threads"] = threads;
    j["batch_rows"] = batch_rows;
    j["seconds_per_run"] = seconds;
    j["rounds"] = rounds;
    j["open_seconds"] = open_seconds;
    const Rate raw_mean = raw.empty() ? Rate{} : mean(raw);
    const Rate gather_mean = gathered.empty() ? Rate{} : mean(gathered);
    if (!raw.empty()) j["raw_4k_reads"] = to_json(raw_mean);
    if (!gathered.empty()) j["gather"] = to_json(gather_mean);
    if (only.empty()) {
      j["gather_iops_over_raw"] = gather_mean.iops / raw_mean.iops;
      j["gather_rows_over_raw_iops"] = gather_mean.rows_per_second / raw_mean.iops;
    }
    nlohmann::json per_round = nlohmann::json::array();
    std::vector<double> ratios;
    for (int r = 0; r < rounds; ++r) {
      nlohmann::json round;
      if (!raw.empty()) round["raw_iops"] = only.empty() ? (raw[r].iops + raw[r + 1].iops) / 2 : raw[r].iops;
      if (!gathered.empty()) round["gather_iops"] = gathered[r].iops;
      if (only.empty()) {
        ratios.push_back(gathered[r].iops / round["raw_iops"].get<double>());
        round["gather_over_raw"] = ratios.back();
      }
      per_round.push_back(round);
    }
    j["per_round"] = per_round;
    if (only.empty()) {
      std::sort(ratios.begin(), ratios.end());
      j["gather_over_raw_median"] = ratios[ratios.size() / 2];  // of the rounds (the lower middle)
    }
    j["tiers"] = {{"host", to_json(stats.host)}, {"host_cache", to_json(stats.host_cache)},
                  {"storage", to_json(stats.storage)}, {"cache_fills", stats.cache_fills},
                  {"cache_bypasses", stats.cache_bypasses}};
    j["peak_rss_bytes_after_open"] = rss_after_open;
    j["peak_rss_bytes"] = peak_rss_bytes();
    std::cout << j.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "feature_bench: error: " << e.what() << "\n";
    return 1;
  }
}
