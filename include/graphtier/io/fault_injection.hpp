// A device that sits in front of another and corrupts the outcomes of its reads, for tests: short
// reads, EAGAIN, EINTR and EIO, drawn at random (seeded) or at a chosen file offset.
//
// Bytes a fault pretends were not read are overwritten in the destination, so an engine that used
// them anyway would produce a wrong row, not a lucky right one.
#pragma once

#include <cstdint>
#include <limits>
#include <unordered_map>

#include "graphtier/io/read_device.hpp"

namespace graphtier::io {

struct FaultPlan {
  double short_read_probability = 0;  // a completion of r > 1 bytes is cut to [1, r) bytes
  double eagain_probability = 0;      // a completion is replaced by -EAGAIN
  double eintr_probability = 0;       // a completion is replaced by -EINTR
  double eio_probability = 0;         // a completion is replaced by -EIO
  /// Every read whose range covers this file offset fails with -EIO (none by default).
  uint64_t eio_at_offset = std::numeric_limits<uint64_t>::max();
  uint64_t seed = 0;
};

struct FaultCounts {
  int64_t completions = 0;
  int64_t short_reads = 0;
  int64_t eagain = 0;
  int64_t eintr = 0;
  int64_t eio = 0;
};

class FaultInjectingDevice final : public ReadDevice {
 public:
  /// `inner` must outlive this device.
  FaultInjectingDevice(ReadDevice& inner, const FaultPlan& plan) : inner_(inner), plan_(plan) {}

  int max_in_flight() const noexcept override { return inner_.max_in_flight(); }
  std::string_view name() const noexcept override { return "fault-injecting"; }
  std::size_t submit_and_wait(std::span<const DeviceRead> reads, std::span<DeviceCompletion> out,
                              std::size_t min_complete) override;

  const FaultCounts& counts() const noexcept { return counts_; }

 private:
  ReadDevice& inner_;
  FaultPlan plan_;
  FaultCounts counts_;
  uint64_t draws_ = 0;
  std::unordered_map<uint64_t, DeviceRead> in_flight_;  // by tag
};

}  // namespace graphtier::io
