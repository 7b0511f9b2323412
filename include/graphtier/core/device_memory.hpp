// Device memory governance (docs/architecture.md, GPU budgets): what the stream-ordered pool may
// keep, the budget checks made when GPU-resident structures are created, and the trim the loader
// runs at the end of an epoch. The rules are inline functions of plain numbers, so that CPU tests
// check them; the queries of the device need a CUDA build (Unsupported otherwise).
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>

#include "graphtier/core/error.hpp"

namespace graphtier {

/// cudaMemGetInfo of one device.
struct DeviceMemory {
  int64_t free_bytes = 0;
  int64_t total_bytes = 0;
};

/// The environment variable that overrides pool_release_threshold's default: a byte count
/// ("8589934592", or with a K/M/G suffix: "8G") or a percent of the device's memory ("25%").
inline constexpr const char* kPoolKeepVariable = "GRAPHTIER_POOL_KEEP";

/// The default share of a device's memory the stream-ordered pool keeps mapped between
/// synchronisations: a quarter (20 GB of an 80 GB H100). The samplers' temporaries (a few hundred
/// MB per stream for [15, 10, 5] and 1024 seeds) and the loader's device outputs of the batches in
/// flight (merged gathers of up to a few GB each) stay below it, so steady state does not re-map;
/// a peak above it (a fanout -1 layer, an unusually large merge) is handed back to the driver at
/// the next synchronisation instead of being kept from PyTorch for the rest of the process.
inline constexpr int64_t kPoolKeepDivisor = 4;

/// The release threshold (cudaMemPoolAttrReleaseThreshold) of a device of `total_bytes`: the
/// setting of kPoolKeepVariable when given (empty: unset), else total_bytes / kPoolKeepDivisor.
/// Throws InvalidArgument naming the variable for a setting that is neither form, or a percent
/// above 100.
inline int64_t pool_release_threshold(int64_t total_bytes, std::string_view setting) {
  if (setting.empty()) return total_bytes / kPoolKeepDivisor;
  const auto bad = [&] {
    return InvalidArgument(detail::concat(kPoolKeepVariable, "='", setting,
                                          "': expected bytes (e.g. 8G, 512M) or a percent of the device's memory "
                                          "(e.g. 25%)"));
  };
  int64_t value = 0;
  const char* first = setting.data();
  const char* last = first + setting.size();
  const auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || value < 0) throw bad();
  const std::string_view suffix(end, static_cast<std::size_t>(last - end));
  if (suffix == "%") {
    if (value > 100) throw bad();
    return total_bytes / 100 * value + total_bytes % 100 * value / 100;  // no overflow
  }
  int shift = 0;
  if (suffix == "K" || suffix == "k") shift = 10;
  else if (suffix == "M" || suffix == "m") shift = 20;
  else if (suffix == "G" || suffix == "g") shift = 30;
  else if (!suffix.empty()) throw bad();
  if (value > (INT64_MAX >> shift)) throw bad();
  return value << shift;
}

/// Throws OutOfMemory when `bytes` of device memory for `what` exceed what `memory` has free: the
/// message names what asked, the budget, the free and total bytes and the device. Called before
/// the allocations it covers, so that a structure too large for the GPU fails at creation with a
/// message the user can act on instead of a bare cudaErrorMemoryAllocation part way through.
inline void check_device_budget(std::string_view what, int64_t bytes, const DeviceMemory& memory, int device) {
  if (bytes <= memory.free_bytes) return;
  throw OutOfMemory(detail::concat(what, " needs ", bytes, " bytes of device memory on device ", device, ", but only ",
                                   memory.free_bytes, " of its ", memory.total_bytes,
                                   " bytes are free (cudaMemGetInfo): lower the budget or free device memory"));
}

/// cudaMemGetInfo of `device` (its current device restored after).
DeviceMemory device_memory(int device);

/// check_device_budget against device_memory(device).
void require_device_memory(std::string_view what, int64_t bytes, int device);

/// Hands the memory the stream-ordered pool of `device` keeps but does not use back to the driver
/// (cudaMemPoolTrimTo 0): the loader's end of epoch, so that evaluation or the model can use it.
/// Memory still allocated is untouched. Nothing in a build without CUDA.
void trim_device_pool(int device);

}  // namespace graphtier
