// What the storage benchmarks share: a read rate, the bare io_uring loop that is their raw
// limit, and peak RSS. Header-only, for the bench targets (liburing is linked to them).
#pragma once

#include <liburing.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/io/read_file.hpp"

namespace graphtier::bench {

using Clock = std::chrono::steady_clock;

inline constexpr std::size_t kBlock = 4096;

inline int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

struct Rate {
  double iops = 0;
  double bytes_per_second = 0;
  double mean_latency_seconds = 0;
  double rows_per_second = 0;
};

/// The raw limit: a bare liburing loop keeping `depth` random 4 KiB reads in flight, each into its
/// slot's block; with `area_bytes` above depth blocks, each read lands in a block drawn at random
/// from an area of that size (touched once before the loop), as a cache's fills land in its lines.
inline Rate raw_uring(const io::ReadFile& file, int depth, double seconds, uint64_t seed, std::size_t area_bytes = 0) {
  io_uring ring{};
  if (const int rc = io_uring_queue_init(static_cast<unsigned>(depth), &ring, 0); rc < 0) {
    throw Unsupported(detail::concat("io_uring_queue_init failed: ", std::strerror(-rc)));
  }
  const uint64_t blocks = file.size() / kBlock;
  const std::size_t area_blocks = std::max<std::size_t>(static_cast<std::size_t>(depth), area_bytes / kBlock);
  const DirectIoBuffer buffers = allocate_direct_io_buffer(area_blocks * kBlock);
  std::memset(buffers.get(), 0, area_blocks * kBlock);
  std::vector<Clock::time_point> submitted(static_cast<std::size_t>(depth));
  uint64_t draw = 0;
  const auto submit = [&](int slot, Clock::time_point now) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    const uint64_t block = bounded_u64(philox_u64(seed, 0, draw++), blocks);
    // Distinct destinations for the reads in flight: slot s takes blocks s, s + depth, ...
    const std::size_t line = area_blocks == static_cast<std::size_t>(depth)
                                 ? static_cast<std::size_t>(slot)
                                 : static_cast<std::size_t>(slot) +
                                       static_cast<std::size_t>(depth) *
                                           bounded_u64(philox_u64(seed, 1, draw), area_blocks / static_cast<std::size_t>(depth));
    io_uring_prep_read(sqe, file.fd(), buffers.get() + line * kBlock, kBlock, block * kBlock);
    io_uring_sqe_set_data64(sqe, static_cast<uint64_t>(slot));
    submitted[static_cast<std::size_t>(slot)] = now;
  };
  const auto start = Clock::now();
  for (int s = 0; s < depth; ++s) submit(s, start);
  int64_t reads = 0;
  double latency_sum = 0;
  bool stopping = false;
  int in_flight = depth;
  while (in_flight > 0) {
    const int rc = io_uring_submit_and_wait(&ring, 1);
    if (rc < 0 && rc != -EINTR) throw IoError(-rc, detail::concat("io_uring_submit_and_wait: ", std::strerror(-rc)));
    const auto now = Clock::now();
    stopping = stopping || std::chrono::duration<double>(now - start).count() >= seconds;
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_cqe* cqe = nullptr;
    io_uring_for_each_cqe(&ring, head, cqe) {
      ++seen;
      const int slot = static_cast<int>(io_uring_cqe_get_data64(cqe));
      if (cqe->res != static_cast<int>(kBlock)) {
        throw IoError(cqe->res < 0 ? -cqe->res : EIO, detail::concat(file.path(), ": raw read returned ", cqe->res));
      }
      ++reads;
      latency_sum += std::chrono::duration<double>(now - submitted[static_cast<std::size_t>(slot)]).count();
      if (stopping) {
        --in_flight;
      } else {
        submit(slot, now);
      }
    }
    io_uring_cq_advance(&ring, seen);
  }
  const double elapsed = seconds_since(start);
  io_uring_queue_exit(&ring);
  Rate r;
  r.iops = r.rows_per_second = static_cast<double>(reads) / elapsed;
  r.bytes_per_second = r.iops * kBlock;
  r.mean_latency_seconds = latency_sum / static_cast<double>(reads);
  return r;
}

inline nlohmann::json to_json(const Rate& r) {
  return {{"iops", r.iops},
          {"rows_per_second", r.rows_per_second},
          {"gb_per_second", r.bytes_per_second / 1e9},
          {"mean_latency_us", r.mean_latency_seconds * 1e6}};
}

inline Rate mean(const std::vector<Rate>& rates) {
  Rate m;
  for (const Rate& r : rates) {
    m.iops += r.iops / static_cast<double>(rates.size());
    m.bytes_per_second += r.bytes_per_second / static_cast<double>(rates.size());
    m.mean_latency_seconds += r.mean_latency_seconds / static_cast<double>(rates.size());
    m.rows_per_second += r.rows_per_second / static_cast<double>(rates.size());
  }
  return m;
}

}  // namespace graphtier::bench
