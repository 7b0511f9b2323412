#include "graphtier/io/calibrate.hpp"

#include <algorithm>
#include <chrono>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/rng.hpp"

namespace graphtier::io {

namespace {

using Clock = std::chrono::steady_clock;

// Each timed round is this many reads per slot of depth: long enough that filling and draining the
// queue at the round's ends costs little of the measured rate.
constexpr int kReadsPerSlot = 16;

}  // namespace

Calibration calibrate(ReadEngine& engine, const ReadFile& file, const CalibrationOptions& options) {
  const std::size_t bytes = options.read_bytes;
  GRAPHTIER_EXPECTS(bytes >= 512 && bytes % 512 == 0, InvalidArgument,
                    "calibration read size must be a positive multiple of 512, got ", bytes);
  GRAPHTIER_EXPECTS(file.size() >= bytes, InvalidArgument, file.path(), ": ", file.size(),
                    " bytes are too few to calibrate reads of ", bytes, " bytes");
  GRAPHTIER_EXPECTS(options.seconds_per_depth > 0 && options.target_fraction > 0 && options.target_fraction <= 1,
                    InvalidArgument, "calibration needs seconds_per_depth > 0 and target_fraction in (0, 1]");
  const int max_depth = std::clamp(options.max_depth, 1, engine.device().max_in_flight());
  const uint64_t num_blocks = file.size() / bytes;
  const IoStats saved_total = engine.total();
  const int saved_depth = engine.depth();

  const std::size_t round = static_cast<std::size_t>(max_depth) * kReadsPerSlot;
  const DirectIoBuffer buffer = allocate_direct_io_buffer(round * bytes);
  std::vector<ReadRequest> requests(round);
  Calibration result;
  uint64_t draw = 0;
  try {
    for (int depth = 1;; depth = std::min(depth * 2, max_depth)) {
      engine.set_depth(depth);
      const std::size_t n = static_cast<std::size_t>(depth) * kReadsPerSlot;
      IoStats measured;
      const auto begin = Clock::now();
      do {
        for (std::size_t i = 0; i < n; ++i) {
          const uint64_t block = bounded_u64(philox_u64(options.seed, 0, draw++), num_blocks);
          requests[i] = ReadRequest{&file, block * bytes, bytes, buffer.get() + i * bytes};
        }
        engine.read(std::span(requests).first(n));
        measured += engine.last_batch();
      } while (std::chrono::duration<double>(Clock::now() - begin).count() < options.seconds_per_depth);
      result.samples.push_back(DepthSample{depth, measured.iops(), measured.mean_latency_seconds()});
      if (depth == max_depth) break;
    }
  } catch (...) {
    engine.set_depth(saved_depth);
    engine.reset_stats(saved_total);
    throw;
  }
  // Calibration reads are not the workload's: the caller's totals stay as they were.
  engine.reset_stats(saved_total);

  for (const DepthSample& s : result.samples) result.peak_iops = std::max(result.peak_iops, s.iops);
  for (const DepthSample& s : result.samples) {
    if (s.iops >= options.target_fraction * result.peak_iops) {
      result.depth = s.depth;
      result.iops = s.iops;
      break;
    }
  }
  result.depth1_latency_seconds = result.samples.front().mean_latency_seconds;
  result.littles_law_depth = result.peak_iops * result.depth1_latency_seconds;
  engine.set_depth(result.depth);
  return result;
}

}  // namespace graphtier::io
