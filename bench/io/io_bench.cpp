// Random 4 KiB reads of a large file: the read engine against a bare io_uring loop at the same
// queue depth, in the same run.
//
//   io_bench --dir DIR [--file-bytes 4GiB] [--file PATH] [--depth 0] [--seconds 3] [--rounds 2]
//            [--row-bytes 4096] [--row-stride 4096] [--batch-rows 4096] [--backend auto]
//
//   (a) raw:    one io_uring ring, `depth` O_DIRECT reads of one random 4 KiB block in flight;
//               each completion is replaced by a new read at once (the device's random-read limit)
//   (b) engine: ReadEngine::read_rows on batches of random row ids (rows of row_bytes at
//               row_stride), the feature store's access pattern
// The depth is the calibrated one (calibrate(): depth-1 latency, IOPS at depths 1..128, smallest
// depth at 95% of the peak) unless --depth is given. Raw and engine runs alternate for --rounds
// rounds, so that drift of a virtual disk hits both alike. O_DIRECT reads bypass the page cache,
// so the figures hold for a file larger than RAM whatever the file's size.
//
// Without --file, DIR/io_bench.<bytes>.bin is created (after checking free space) and kept for the
// next run. Prints one JSON object on stdout.
#include <fcntl.h>
#include <liburing.h>
#include <sys/statvfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/io/calibrate.hpp"
#include "graphtier/io/read_device.hpp"
#include "graphtier/io/read_engine.hpp"
#include "graphtier/io/read_file.hpp"
#include "common/io_rates.hpp"

namespace {

using namespace graphtier;
using namespace graphtier::io;
using namespace graphtier::bench;

/// Creates `path` of `bytes` bytes unless it already has that size. The content is a random 4 MiB
/// pattern with each 4 KiB block stamped with its index, so that no two blocks are alike.
void ensure_file(const std::string& path, int64_t bytes) {
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) == static_cast<uintmax_t>(bytes)) return;
  const std::string dir = std::filesystem::path(path).parent_path().string();
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) GRAPHTIER_THROW_ERRNO(dir, ": cannot statvfs: ", std::strerror(errno));
  const auto free_bytes = static_cast<int64_t>(vfs.f_bavail) * static_cast<int64_t>(vfs.f_frsize);
  GRAPHTIER_EXPECTS(free_bytes >= bytes + (int64_t{1} << 30), InvalidArgument, dir, ": ", format_bytes(free_bytes),
                    " free, need ", format_bytes(bytes), " plus 1 GiB to spare for the benchmark file");
  constexpr std::size_t kChunk = std::size_t{4} << 20;
  std::vector<uint64_t> pattern(kChunk / 8);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = philox_u64(42, 0, i);
  OutputFile out(path, kChunk);
  Progress progress("writing " + path, bytes, "B");
  for (int64_t written = 0; written < bytes;) {
    const std::size_t n = static_cast<std::size_t>(std::min<int64_t>(kChunk, bytes - written));
    for (std::size_t b = 0; b < kChunk / kBlock; ++b) pattern[b * kBlock / 8] = static_cast<uint64_t>(written) / kBlock + b;
    out.write(pattern.data(), n);
    written += static_cast<int64_t>(n);
    progress.add(static_cast<int64_t>(n));
  }
  out.close();
  progress.finish();
}

/// The engine: read_rows on batches of random ids until `seconds` have passed.
Rate engine_rows(ReadEngine& engine, const ReadFile& file, const RowLayout& layout, std::size_t batch_rows,
                 double seconds, uint64_t seed) {
  std::vector<int64_t> ids(batch_rows);
  std::vector<std::byte> out(batch_rows * static_cast<std::size_t>(layout.row_bytes));
  engine.reset_stats();
  int64_t rows = 0;
  uint64_t draw = 0;
  const auto start = Clock::now();
  while (seconds_since(start) < seconds) {
    for (int64_t& id : ids) {
      id = static_cast<int64_t>(bounded_u64(philox_u64(seed, 1, draw++), static_cast<uint64_t>(layout.num_rows)));
    }
    engine.read_rows(file, layout, ids, out, static_cast<std::size_t>(layout.row_bytes));
    rows += static_cast<int64_t>(batch_rows);
  }
  const double elapsed = seconds_since(start);
  Rate r;
  r.iops = static_cast<double>(engine.total().reads) / elapsed;
  r.bytes_per_second = static_cast<double>(engine.total().bytes) / elapsed;
  r.mean_latency_seconds = engine.total().mean_latency_seconds();
  r.rows_per_second = static_cast<double>(rows) / elapsed;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  std::string path;
  int64_t file_bytes = int64_t{4} << 30;
  int depth = 0;
  double seconds = 3;
  int rounds = 2;
  int64_t row_bytes = 4096;
  int64_t row_stride = 4096;
  int64_t batch_rows = 4096;
  IoBackend backend = IoBackend::kAuto;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      GRAPHTIER_EXPECTS(i + 1 < argc, InvalidArgument, arg, " needs a value");
      const std::string value = argv[++i];
      if (arg == "--dir") dir = value;
      else if (arg == "--file") path = value;
      else if (arg == "--file-bytes") file_bytes = parse_bytes(value);
      else if (arg == "--depth") depth = std::stoi(value);
      else if (arg == "--seconds") seconds = std::stod(value);
      else if (arg == "--rounds") rounds = std::stoi(value);
      else if (arg == "--row-bytes") row_bytes = parse_bytes(value);
      else if (arg == "--row-stride") row_stride = parse_bytes(value);
      else if (arg == "--batch-rows") batch_rows = parse_count(value);
      else if (arg == "--backend") backend = parse_io_backend(value);
      else GRAPHTIER_EXPECTS(false, InvalidArgument, "unknown option ", arg);
    }
    GRAPHTIER_EXPECTS(!dir.empty() || !path.empty(), InvalidArgument, "--dir or --file is required");
    GRAPHTIER_EXPECTS(rounds >= 1 && seconds > 0 && batch_rows >= 1 && row_bytes >= 1 && row_stride >= row_bytes,
                      InvalidArgument, "bad --rounds, --seconds, --batch-rows, --row-bytes or --row-stride");
    if (path.empty()) {
      path = dir + "/io_bench." + std::to_string(file_bytes) + ".bin";
      ensure_file(path, file_bytes);
    }
    const ReadFile file = ReadFile::open(path);
    GRAPHTIER_EXPECTS(file.size() >= kBlock, InvalidArgument, path, ": too small");
    if (!file.direct()) log_warn(path, ": no O_DIRECT on this file system; reads go through the page cache");
    constexpr int kMaxDepth = 128;
    const auto device = make_read_device(backend, kMaxDepth);
    ReadEngine engine(*device);
    CalibrationOptions options;
    options.max_depth = kMaxDepth;
    options.seconds_per_depth = 0.25;
    const Calibration calibration = calibrate(engine, file, options);
    if (depth > 0) engine.set_depth(depth);
    depth = engine.depth();

    const RowLayout layout{static_cast<int64_t>((file.size() - static_cast<uint64_t>(row_bytes)) / static_cast<uint64_t>(row_stride)) + 1,
                           row_stride, row_bytes};
    std::vector<Rate> raw, eng;
    for (int round = 0; round < rounds; ++round) {
      raw.push_back(raw_uring(file, depth, seconds, 100 + static_cast<uint64_t>(round)));
      eng.push_back(engine_rows(engine, file, layout, static_cast<std::size_t>(batch_rows), seconds,
                                200 + static_cast<uint64_t>(round)));
    }
    const Rate raw_mean = mean(raw);
    const Rate eng_mean = mean(eng);

    nlohmann::json j;
    j["file"] = path;
    j["file_bytes"] = file.size();
    j["o_direct"] = file.direct();
    j["backend"] = std::string(device->name());
    nlohmann::json samples = nlohmann::json::array();
    for (const DepthSample& s : calibration.samples) {
      samples.push_back({{"depth", s.depth}, {"iops", s.iops}, {"mean_latency_us", s.mean_latency_seconds * 1e6}});
    }
    j["calibration"] = {{"depth", calibration.depth},
                        {"peak_iops", calibration.peak_iops},
                        {"iops_at_depth", calibration.iops},
                        {"depth1_latency_us", calibration.depth1_latency_seconds * 1e6},
                        {"depth1_iops", calibration.samples.front().iops},
                        {"littles_law_depth", calibration.littles_law_depth},
                        {"samples", samples}};
    j["depth"] = depth;
    j["seconds_per_run"] = seconds;
    j["rounds"] = rounds;
    j["row_bytes"] = row_bytes;
    j["row_stride"] = row_stride;
    j["batch_rows"] = batch_rows;
    j["raw_uring_4k"] = to_json(raw_mean);
    j["engine_read_rows"] = to_json(eng_mean);
    nlohmann::json per_round = nlohmann::json::array();
    for (int r = 0; r < rounds; ++r) per_round.push_back({{"raw_iops", raw[r].iops}, {"engine_rows_per_second", eng[r].rows_per_second}});
    j["per_round"] = per_round;
    j["engine_over_raw_rows"] = eng_mean.rows_per_second / raw_mean.iops;
    j["engine_over_raw_iops"] = eng_mean.iops / raw_mean.iops;
    std::cout << j.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "io_bench: error: " << e.what() << "\n";
    return 1;
  }
}
