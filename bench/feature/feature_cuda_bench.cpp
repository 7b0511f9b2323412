// The GPU tiers against the machine's limits (docs/architecture.md, Performance floor),
// on generated datasets in --dir (removed afterwards). Prints one JSON object, or
// "skipped: no GPU" where no GPU is visible.
//
//   pinned:  the pinned tier (all rows in it) at 128 B .. 4 KiB rows: zero-copy alone, CPU gather
//            + copy alone, and the measured split, against the pinned host->device copy rate;
//   gpu:     the GPU hot tier against the device-to-device copy rate (1 GiB copies, and copies of
//            the gather's own size, one synchronous call each), with ids from the host and with ids
//            already on the device (a GPU-sampled minibatch's: no upload);
//   cache:   the GPU cache when every row hits (512 B rows), against the pinned tier's rows/s, with
//            ids from the host and from the device;
//   storage: the storage tier's read IOPS against raw 4 KiB reads of the same file (io engine);
//   all:     every tier on a hotness-ordered power-law workload, against PCIe (the pinned copy
//            rate) and the plain path (CPU index_select + .to(cuda), modelled as the CPU gather +
//            copy path over a table held wholly in host memory).
// Timing: host clock around synchronous gathers and copies of at least --seconds each (each
// gather ends with a stream synchronisation; the GPU-side per-tier times come from CUDA events
// and are reported in the tier statistics; the hot tier also reports its device time alone).
//
//   feature_cuda_bench --dir /scratch [--table-bytes 4GiB] [--batch-rows 65536] [--seconds 2] [--hot-only]
// --hot-only: the hot tier alone (its 1 KiB dataset, nothing else): for a profiler's run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/feature/feature_store.hpp"
#include "graphtier/graph_generate/generate.hpp"
#include "graphtier/io/read_engine.hpp"

using namespace graphtier;

namespace {

using Clock = std::chrono::steady_clock;

struct Run {
  double rows_per_second = 0;
  double bytes_per_second = 0;
  int64_t gathers = 0;
  feature::GatherStats stats;
  /// Microseconds per gather of `seconds` summed over the run's gathers.
  double per_gather_us(double seconds) const {
    return 1e6 * seconds / static_cast<double>(std::max<int64_t>(1, gathers));
  }
};

// Uniform ids (skew 1) or a power law over hotness order: id = floor(N * u^skew).
std::vector<int64_t> draw_ids(int64_t n, int64_t num_nodes, double skew, uint64_t seed) {
  std::vector<int64_t> ids(static_cast<std::size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    const double u = u64_to_unit_double(philox_u64(seed, 3, static_cast<uint64_t>(k)));
    ids[static_cast<std::size_t>(k)] =
        std::min(num_nodes - 1, static_cast<int64_t>(std::pow(u, skew) * static_cast<double>(num_nodes)));
  }
  return ids;
}

/// Gathers 8 fixed batches round robin for `seconds`. The first batch is gathered once before the
/// clock starts (first touch); `warm_all` gathers all 8 first (a cache large enough then only hits).
/// `device_ids`: the ids are handed in device memory too (a GPU-sampled minibatch's), so none go up.
Run run_gather(feature::FeatureStore& store, int64_t batch_rows, double skew, double seconds, bool warm_all = false,
               bool device_ids = false) {
  const int64_t row_bytes = store.layout().row_bytes();
  Buffer out(MemoryKind::kDevice, static_cast<std::size_t>(batch_rows * row_bytes));
  const TensorView view =
      TensorView::contiguous(out.data(), store.layout().dtype, {batch_rows, store.layout().dim}, MemoryKind::kDevice);
  std::vector<std::vector<int64_t>> batches;
  std::vector<Buffer> on_device;
  std::vector<feature::DeviceIds> ids_on_device;
  for (uint64_t b = 0; b < 8; ++b) {
    batches.push_back(draw_ids(batch_rows, store.num_nodes(), skew, 11 + b));
    if (device_ids) {
      const std::size_t bytes = batches.back().size() * sizeof(int64_t);
      on_device.emplace_back(MemoryKind::kDevice, bytes);
      copy_bytes(on_device.back().data(), MemoryKind::kDevice, batches.back().data(), MemoryKind::kHost, bytes);
      ids_on_device.push_back({static_cast<const int64_t*>(on_device.back().data()), 0});
    } else {
      ids_on_device.emplace_back();
    }
  }
  for (std::size_t b = 0; b < (warm_all ? batches.size() : 1); ++b) store.gather(batches[b], view, ids_on_device[b]);
  Run r;
  int64_t rows = 0;
  const auto start = Clock::now();
  for (std::size_t b = 0; seconds_since(start) < seconds; ++b) {
    r.stats += store.gather(batches[b % batches.size()], view, ids_on_device[b % batches.size()]);
    rows += batch_rows;
    ++r.gathers;
  }
  const double elapsed = seconds_since(start);
  r.rows_per_second = static_cast<double>(rows) / elapsed;
  r.bytes_per_second = r.rows_per_second * static_cast<double>(row_bytes);
  r.stats.io.seconds = elapsed;
  return r;
}

double copy_rate(MemoryKind dst_kind, MemoryKind src_kind, std::size_t bytes, double seconds) {
  Buffer dst(dst_kind, bytes), src(src_kind, bytes);
  copy_bytes(dst.data(), dst_kind, src.data(), src_kind, bytes);
  int64_t copies = 0;
  const auto start = Clock::now();
  while (seconds_since(start) < seconds) {
    copy_bytes(dst.data(), dst_kind, src.data(), src_kind, bytes);
    ++copies;
  }
  return static_cast<double>(copies) * static_cast<double>(bytes) / seconds_since(start);
}

nlohmann::json tiers_json(const feature::GatherStats& s) {
  const auto t = [](const feature::TierStats& x) { return nlohmann::json{{"rows", x.rows}, {"bytes", x.bytes}, {"seconds", x.seconds}}; };
  return {{"gpu_hot", t(s.gpu_hot)}, {"gpu_cache", t(s.gpu_cache)}, {"host", t(s.host)},
          {"host_cache", t(s.host_cache)}, {"storage", t(s.storage)}};
}

std::string make_dataset(const std::string& root, int64_t row_bytes, int64_t table_bytes, ThreadPool& pool) {
  const std::string dir = root + "/feature_cuda_bench_" + std::to_string(row_bytes);
  graph::GenerateOptions g;
  g.num_nodes = std::max<int64_t>(1024, table_bytes / row_bytes);
  g.num_edges = g.num_nodes * 4;
  g.feature_dim = row_bytes / 4;
  g.feature_dtype = DType::kFloat32;
  g.alignment = row_bytes >= 512 ? 4096 : 512;
  g.overwrite = true;
  graph::generate_dataset(dir, g, pool);
  return dir;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::cout << "skipped: no GPU\n";
    return 0;
  }
  std::string root;
  int64_t table_bytes = int64_t{4} << 30;
  int64_t batch_rows = 65536;
  double seconds = 2;
  bool hot_only = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--hot-only") {
        hot_only = true;
        continue;
      }
      GRAPHTIER_EXPECTS(i + 1 < argc, InvalidArgument, arg, " needs a value");
      const std::string value = argv[++i];
      if (arg == "--dir") root = value;
      else if (arg == "--table-bytes") table_bytes = parse_bytes(value);
      else if (arg == "--batch-rows") batch_rows = parse_count(value);
      else if (arg == "--seconds") seconds = std::stod(value);
      else GRAPHTIER_EXPECTS(false, InvalidArgument, "unknown option ", arg);
    }
    GRAPHTIER_EXPECTS(!root.empty(), InvalidArgument, "--dir (scratch space for datasets) is required");
    ThreadPool pool(0);
    nlohmann::json j;
    const double h2d = copy_rate(MemoryKind::kDevice, MemoryKind::kPinned, std::size_t{1} << 30, seconds);
    const double d2d = copy_rate(MemoryKind::kDevice, MemoryKind::kDevice, std::size_t{1} << 30, seconds);
    j["pinned_h2d_bytes_per_second"] = h2d;
    j["d2d_bytes_per_second"] = d2d;

    nlohmann::json pinned = nlohmann::json::array();
    // The pinned tier's paths alone and split (none with --hot-only).
    std::vector<std::pair<const char*, feature::PinnedPath>> pinned_paths;
    if (!hot_only) {
      pinned_paths = {{"zero_copy", feature::PinnedPath::kZeroCopy},
                      {"cpu_copy", feature::PinnedPath::kCpuCopy},
                      {"measured", feature::PinnedPath::kMeasured}};
    }
    for (const int64_t row_bytes : {128, 256, 512, 1024, 2048, 4096}) {
      if (hot_only && row_bytes != 1024) continue;
      const std::string dir = make_dataset(root, row_bytes, table_bytes, pool);
      const graph::Dataset dataset = graph::Dataset::open(dir);
      nlohmann::json row{{"row_bytes", row_bytes}};
      double best_alone = 0;
      for (const auto& [name, path] : pinned_paths) {
        feature::FeatureStoreOptions o;
        o.budgets.cpu_buffer = Budget::percent(100);
        o.pinned_path = path;
        feature::FeatureStore store(dataset, o, pool);
        const Run r = run_gather(store, batch_rows, 1.0, seconds);
        row[name] = r.bytes_per_second;
        if (path != feature::PinnedPath::kMeasured) best_alone = std::max(best_alone, r.bytes_per_second);
        if (path == feature::PinnedPath::kMeasured && row_bytes == 512) {
          feature::FeatureStoreOptions cached;  // the table fits the cache: after warm-up, all hits
          cached.budgets.gpu_cache = Budget::percent(100);
          feature::FeatureStore cache_store(dataset, cached, pool);
          const Run hits = run_gather(cache_store, batch_rows, 1.0, seconds, /*warm_all=*/true);
          const Run hits_device_ids = run_gather(cache_store, batch_rows, 1.0, seconds, true, /*device_ids=*/true);
          j["gpu_cache_hits"] = {{"row_bytes", row_bytes}, {"rows_per_second", hits.rows_per_second},
                                 {"hit_rows", hits.stats.gpu_cache.rows}, {"pinned_rows_per_second", r.rows_per_second},
                                 {"over_pinned", hits.rows_per_second / r.rows_per_second},
                                 {"device_ids_rows_per_second", hits_device_ids.rows_per_second},
                                 {"device_ids_over_pinned", hits_device_ids.rows_per_second / r.rows_per_second},
                                 // Per gather, as the hot tier's: host clock, then device events.
                                 {"microseconds_per_gather", hits.per_gather_us(hits.stats.io.seconds)},
                                 {"device_ids_microseconds_per_gather",
                                  hits_device_ids.per_gather_us(hits_device_ids.stats.io.seconds)},
                                 {"device_ids_serve_event_microseconds_per_gather",
                                  hits_device_ids.per_gather_us(hits_device_ids.stats.gpu_cache.seconds)}};
        }
        if (path == feature::PinnedPath::kMeasured) {
          // The start-up calibration the per-request split uses (feature/pinned_split.hpp).
          const feature::PinnedPaths& p = store.tiers().pinned_paths;
          row["zero_copy_fraction"] = p.zero_copy_fraction;  // at the whole tier's span
          row["calibrated_zero_copy_rows_per_second"] = p.zero_copy_rows_per_second;
          row["calibrated_near_span_bytes"] = p.near_span_bytes;
          row["calibrated_near_zero_copy_rows_per_second"] = p.near_zero_copy_rows_per_second;
          row["calibrated_cpu_copy_rows_per_second"] = p.cpu_copy_rows_per_second;
          row["calibrated_link_rows_per_second"] = p.link_rows_per_second;
          row["over_best_alone"] = r.bytes_per_second / best_alone;
          row["over_pinned_h2d"] = r.bytes_per_second / h2d;
        }
      }
      if (row_bytes == 1024) {
        feature::FeatureStoreOptions o;
        o.budgets.gpu_hot = Budget::percent(100);
        feature::FeatureStore store(dataset, o, pool);
        const Run r = run_gather(store, batch_rows, 1.0, seconds);
        const Run d = run_gather(store, batch_rows, 1.0, seconds, false, /*device_ids=*/true);
        // The copy at the gather's own size, one synchronous call each, as each gather is: what a
        // request of this size can reach at all (the 1 GiB copies above amortise the call).
        const double d2d_same = copy_rate(MemoryKind::kDevice, MemoryKind::kDevice,
                                          static_cast<std::size_t>(batch_rows * row_bytes), seconds);
        j["gpu_tier"] = {{"row_bytes", row_bytes}, {"bytes_per_second", r.bytes_per_second},
                         {"over_d2d", r.bytes_per_second / d2d},
                         {"device_ids_bytes_per_second", d.bytes_per_second},
                         {"device_ids_over_d2d", d.bytes_per_second / d2d},
                         {"d2d_same_size_bytes_per_second", d2d_same},
                         {"request_bytes", batch_rows * row_bytes},
                         {"over_d2d_same_size", r.bytes_per_second / d2d_same},
                         {"device_ids_over_d2d_same_size", d.bytes_per_second / d2d_same},
                         // Device time alone (CUDA events from the ids' upload to the serve
                         // kernel's end), without the host's part and the synchronisation.
                         {"device_time_bytes_per_second", static_cast<double>(r.stats.gpu_hot.bytes) /
                                                              std::max(1e-12, r.stats.gpu_hot.seconds)},
                         {"device_time_over_d2d", static_cast<double>(r.stats.gpu_hot.bytes) /
                                                      std::max(1e-12, r.stats.gpu_hot.seconds) / d2d},
                         // Per gather: the host's clock around the call, and the device's from
                         // before the ids' upload to the serve kernel's end (events).
                         {"microseconds_per_gather", r.per_gather_us(r.stats.io.seconds)},
                         {"device_ids_microseconds_per_gather", d.per_gather_us(d.stats.io.seconds)},
                         {"serve_event_microseconds_per_gather", r.per_gather_us(r.stats.gpu_hot.seconds)},
                         {"device_ids_serve_event_microseconds_per_gather", d.per_gather_us(d.stats.gpu_hot.seconds)}};
      }
      if (row_bytes == 4096) {
        feature::FeatureStoreOptions o;  // every row on storage
        feature::FeatureStore store(dataset, o, pool);
        const Run r = run_gather(store, std::min<int64_t>(batch_rows, 16384), 1.0, seconds);
        const io::ReadFile file = io::ReadFile::open(dir + "/features.bin");
        const auto device = io::make_read_device(io::IoBackend::kAuto, store.io_depth());
        io::ReadEngine engine(*device, store.io_depth());
        const std::size_t batch = static_cast<std::size_t>(store.io_depth()) * 16;
        const DirectIoBuffer buffer = allocate_direct_io_buffer(batch * io::ReadEngine::kBlockBytes);
        std::vector<io::ReadRequest> requests(batch);
        uint64_t draw = 0;
        const auto start = Clock::now();
        while (seconds_since(start) < seconds) {
          for (std::size_t i = 0; i < batch; ++i) {
            const uint64_t block = bounded_u64(philox_u64(5, 0, draw++), file.size() / io::ReadEngine::kBlockBytes);
            requests[i] = io::ReadRequest{&file, block * io::ReadEngine::kBlockBytes, io::ReadEngine::kBlockBytes,
                                          buffer.get() + i * io::ReadEngine::kBlockBytes};
          }
          engine.read(requests);
        }
        const double raw_iops = static_cast<double>(engine.total().reads) / seconds_since(start);
        const double iops = static_cast<double>(r.stats.io.reads) / r.stats.io.seconds;
        j["storage_tier"] = {{"depth", store.io_depth()}, {"iops", iops}, {"raw_4k_iops", raw_iops},
                             {"over_raw", iops / raw_iops}};
      }
      if (row_bytes == 512) {
        feature::FeatureStoreOptions all;
        all.budgets.gpu_hot = Budget::percent(10);
        all.budgets.gpu_cache = Budget::percent(5);
        all.budgets.cpu_buffer = Budget::percent(30);
        all.budgets.host_cache = Budget::percent(5);
        feature::FeatureStore store(dataset, all, pool);
        const Run r = run_gather(store, batch_rows, 3.0, seconds);
        feature::FeatureStoreOptions plain;
        plain.budgets.cpu_buffer = Budget::percent(100);
        plain.pinned_path = feature::PinnedPath::kCpuCopy;
        feature::FeatureStore plain_store(dataset, plain, pool);
        const Run p = run_gather(plain_store, batch_rows, 3.0, seconds);
        j["all_tiers"] = {{"row_bytes", row_bytes}, {"skew", 3.0}, {"bytes_per_second", r.bytes_per_second},
                          {"over_pcie", r.bytes_per_second / h2d}, {"plain_path_bytes_per_second", p.bytes_per_second},
                          {"over_plain", r.bytes_per_second / p.bytes_per_second}, {"tiers", tiers_json(r.stats)}};
      }
      if (!hot_only) pinned.push_back(row);
      graph::remove_tree(dir);
    }
    j["pinned_tier"] = pinned;
    std::cout << j.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "feature_cuda_bench: error: " << e.what() << "\n";
    return 1;
  }
}
