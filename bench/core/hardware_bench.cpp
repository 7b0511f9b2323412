// The limits the host-side stages are measured against, taken on the machine that runs them:
//   memory copy bandwidth    (memcpy of large buffers, all threads)   -> streaming gathers
//   random update rate       (relaxed atomic ++ on a node-sized array) -> degree counting, placing
//   disk sequential write    (O_DIRECT, 16 MiB requests, then fdatasync) -> writing a dataset
//   disk sequential read     (O_DIRECT, 16 MiB requests, 4 in flight)  -> reading one back
//
//   hardware_bench --dir DIR [--disk-bytes 4GiB] [--nodes 10M] [--threads 0]
//
// Prints one JSON object on stdout; the scratch file in DIR is removed.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/core/units.hpp"

namespace {

using namespace graphtier;
using Clock = std::chrono::steady_clock;

/// Best of three copies of `bytes` split across the pool: bytes read + bytes written per second.
double memory_copy_bandwidth(int64_t bytes, ThreadPool& pool) {
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    const auto start = Clock::now();
    pool.parallel_for(0, bytes, int64_t{64} << 20,
                      [&](int64_t lo, int64_t hi) { std::memcpy(dst.data() + lo, src.data() + lo, hi - lo); });
    best = std::max(best, 2.0 * static_cast<double>(bytes) / seconds_since(start));
  }
  return best;
}

/// Relaxed atomic increments of random entries of an int32 [nodes] array, as degree counting does.
double random_update_rate(int64_t nodes, ThreadPool& pool) {
  const int64_t updates = 4 * nodes;
  std::vector<uint32_t> targets(updates);
  pool.parallel_for(0, updates, int64_t{1} << 20, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) targets[i] = static_cast<uint32_t>(bounded_u64(philox_u64(7, 0, i), nodes));
  });
  std::vector<std::atomic<int32_t>> counts(nodes);
  const auto start = Clock::now();
  pool.parallel_for(0, updates, int64_t{1} << 20, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) counts[targets[i]].fetch_add(1, std::memory_order_relaxed);
  });
  return static_cast<double>(updates) / seconds_since(start);
}

struct DiskRates {
  double write = 0;
  double read = 0;
};

DiskRates disk_sequential(const std::string& dir, int64_t bytes) {
  constexpr int64_t kRequest = int64_t{16} << 20;
  bytes = std::max(kRequest, bytes / kRequest * kRequest);
  const std::string path = dir + "/.hardware_bench.scratch";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
  if (fd < 0) GRAPHTIER_THROW_ERRNO(path, ": cannot open with O_DIRECT: ", std::strerror(errno));
  ::unlink(path.c_str());
  const DirectIoBuffer buffer = allocate_direct_io_buffer(kRequest);
  std::memset(buffer.get(), 0x5a, kRequest);
  DiskRates rates;
  auto start = Clock::now();
  for (int64_t off = 0; off < bytes; off += kRequest) {
    if (::pwrite(fd, buffer.get(), kRequest, off) != kRequest) GRAPHTIER_THROW_ERRNO(path, ": write failed: ", std::strerror(errno));
  }
  if (::fdatasync(fd) != 0) GRAPHTIER_THROW_ERRNO(path, ": fdatasync failed: ", std::strerror(errno));
  rates.write = static_cast<double>(bytes) / seconds_since(start);
  // Reads keep kReadDepth requests in flight, as kernel readahead and the parallel preads of the
  // feature permutation do; one at a time would understate what the disk gives them.
  constexpr int kReadDepth = 4;
  const DirectIoBuffer read_buffers = allocate_direct_io_buffer(kReadDepth * kRequest);
  std::atomic<int64_t> next_offset{0};
  std::atomic<int> read_errno{0};
  start = Clock::now();
  std::vector<std::thread> readers;
  for (int r = 0; r < kReadDepth; ++r) {
    readers.emplace_back([&, r] {
      for (int64_t off; (off = next_offset.fetch_add(kRequest)) < bytes;) {
        if (::pread(fd, read_buffers.get() + r * kRequest, kRequest, off) != kRequest) read_errno = errno ? errno : EIO;
      }
    });
  }
  for (auto& t : readers) t.join();
  if (const int err = read_errno.load(); err != 0) {
    throw IoError(err, detail::concat(path, ": read failed: ", std::strerror(err)));
  }
  rates.read = static_cast<double>(bytes) / seconds_since(start);
  ::close(fd);
  return rates;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  int64_t disk_bytes = int64_t{4} << 30;
  int64_t nodes = 10'000'000;
  int threads = 0;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      GRAPHTIER_EXPECTS(i + 1 < argc, InvalidArgument, arg, " needs a value");
      const std::string value = argv[++i];
      if (arg == "--dir") dir = value;
      else if (arg == "--disk-bytes") disk_bytes = parse_bytes(value);
      else if (arg == "--nodes") nodes = parse_count(value);
      else if (arg == "--threads") threads = std::stoi(value);
      else GRAPHTIER_EXPECTS(false, InvalidArgument, "unknown option ", arg);
    }
    GRAPHTIER_EXPECTS(!dir.empty(), InvalidArgument, "--dir is required");
    ThreadPool pool(threads);
    const DiskRates disk = disk_sequential(dir, disk_bytes);
    nlohmann::json j;
    j["threads"] = pool.size();
    j["memory_copy_bytes_per_second"] = memory_copy_bandwidth(int64_t{1} << 30, pool);
    j["random_updates_per_second"] = random_update_rate(nodes, pool);
    j["disk_write_bytes_per_second"] = disk.write;
    j["disk_read_bytes_per_second"] = disk.read;
    std::cout << j.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "hardware_bench: error: " << e.what() << "\n";
    return 1;
  }
}
