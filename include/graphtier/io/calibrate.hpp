// Choosing the queue depth on the actual file and device (GIDS §3.2, eq. 2-3).
//
// By Little's law the reads in flight needed for a target rate are rate x latency: GIDS's
// N_access = IOPS_achieved x T. Rather than trusting one latency figure (latency grows with depth
// as the device saturates), calibrate measures the curve: the latency and IOPS at depth 1, then
// IOPS at depths 1, 2, 4, ... up to the limit, and takes the smallest depth that reaches
// `target_fraction` of the peak (GIDS aims at 95% of the peak IOPS, Fig. 8).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graphtier/io/read_engine.hpp"
#include "graphtier/io/read_file.hpp"

namespace graphtier::io {

struct CalibrationOptions {
  int max_depth = 128;              // clamped to the engine's device limit
  double seconds_per_depth = 0.1;   // measuring time at each depth
  double target_fraction = 0.95;    // of the peak IOPS
  std::size_t read_bytes = ReadEngine::kBlockBytes;  // size of each random read
  uint64_t seed = 0;                // for the random offsets
};

struct DepthSample {
  int depth = 0;
  double iops = 0;
  double mean_latency_seconds = 0;
};

struct Calibration {
  int depth = 0;                          // the chosen depth
  double peak_iops = 0;                   // best IOPS over the depths tried
  double iops = 0;                        // IOPS at the chosen depth
  double depth1_latency_seconds = 0;      // mean latency of one read alone
  double littles_law_depth = 0;           // peak_iops x depth1_latency_seconds, for comparison
  std::vector<DepthSample> samples;       // one per depth tried, in increasing depth
};

/// Measures random reads of `read_bytes` over `file` (at least that big) and sets the engine's
/// depth to the one chosen. The engine's statistics are left as they were. Takes about
/// seconds_per_depth x (log2(max_depth) + 1).
Calibration calibrate(ReadEngine& engine, const ReadFile& file, const CalibrationOptions& options = {});

}  // namespace graphtier::io
