// What the read engine did: reads, bytes, time and latency, per batch and in total.
#pragma once

#include <cstdint>

namespace graphtier::io {

struct IoStats {
  int64_t reads = 0;                 // device reads completed (a resubmitted remainder counts again)
  int64_t bytes = 0;                 // bytes the device delivered
  double seconds = 0;                // wall time inside engine calls
  double latency_seconds_sum = 0;    // sum over reads of submission-to-completion time
  int depth = 0;                     // reads kept in flight (the last depth used, for totals)

  double iops() const { return seconds > 0 ? static_cast<double>(reads) / seconds : 0; }
  double bytes_per_second() const { return seconds > 0 ? static_cast<double>(bytes) / seconds : 0; }
  double mean_latency_seconds() const { return reads > 0 ? latency_seconds_sum / static_cast<double>(reads) : 0; }

  IoStats& operator+=(const IoStats& other) {
    reads += other.reads;
    bytes += other.bytes;
    seconds += other.seconds;
    latency_seconds_sum += other.latency_seconds_sum;
    depth = other.depth;
    return *this;
  }
};

}  // namespace graphtier::io
