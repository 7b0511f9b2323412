// Helpers for the io tests: seeded random files, reference rows by pread, and a watchdog that
// turns a hang into a failure, and a read device whose reads a test can hold back.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "graphtier/core/file.hpp"
#include "graphtier/core/rng.hpp"
#include "graphtier/io/read_device.hpp"

namespace graphtier::test {

/// Writes `bytes` pseudo-random bytes (seeded) to `path`.
inline void write_random_file(const std::string& path, std::size_t bytes, uint64_t seed) {
  std::vector<uint64_t> words((bytes + 7) / 8);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = philox_u64(seed, 0, i);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(bytes));
  if (!out) throw std::runtime_error("cannot write " + path);
}

/// Row ids in [0, num_rows), seeded, with about a quarter repeating an earlier id.
inline std::vector<int64_t> random_ids(std::size_t n, int64_t num_rows, uint64_t seed) {
  std::vector<int64_t> ids(n);
  for (std::size_t k = 0; k < n; ++k) {
    const uint64_t bits = philox_u64(seed, 1, k);
    // A second draw for the row: bounded_u64 maps the high bits, so bits >> 2 would reach only
    // the first quarter of the rows.
    ids[k] = (k > 0 && bits % 4 == 0)
                 ? ids[bits % k]
                 : static_cast<int64_t>(bounded_u64(philox_u64(seed, 2, k), static_cast<uint64_t>(num_rows)));
  }
  return ids;
}

/// The rows by plain buffered pread, packed at `pitch` (the reference the engine must match).
inline std::vector<std::byte> pread_rows(const std::string& path, int64_t row_stride, int64_t row_bytes,
                                         std::span<const int64_t> ids, std::size_t pitch) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  std::vector<std::byte> rows(ids.size() * pitch);
  for (std::size_t k = 0; k < ids.size(); ++k) {
    pread_exact(fd, rows.data() + k * pitch, static_cast<std::size_t>(row_bytes),
                static_cast<uint64_t>(ids[k] * row_stride), path);
  }
  ::close(fd);
  return rows;
}

/// Aborts the test binary if not destroyed within `seconds`: a hung read must fail the test, and
/// a thread stuck in the kernel cannot be cancelled any other way.
class Watchdog {
 public:
  explicit Watchdog(double seconds)
      : thread_([this, seconds] {
          std::unique_lock lock(mutex_);
          if (!done_cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) {
            std::fprintf(stderr, "watchdog: test still running after %.0f s, aborting\n", seconds);
            std::abort();
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;  // last: starts once the members it uses exist
};

// A device in front of another that holds every read back while its gate is shut, so a test can
// keep a gather inside its storage reads for as long as it needs (never longer than 20 s).
class GatedDevice final : public io::ReadDevice {
 public:
  explicit GatedDevice(io::ReadDevice& inner) : inner_(inner) {}
  int max_in_flight() const noexcept override { return inner_.max_in_flight(); }
  std::string_view name() const noexcept override { return "gated"; }
  std::size_t submit_and_wait(std::span<const io::DeviceRead> reads, std::span<io::DeviceCompletion> out,
                              std::size_t min_complete) override {
    {
      std::unique_lock lock(mutex_);
      entered_ = true;
      cv_.notify_all();
      cv_.wait_for(lock, std::chrono::seconds(20), [this] { return open_; });
    }
    return inner_.submit_and_wait(reads, out, min_complete);
  }
  bool wait_entered(std::chrono::seconds limit) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, limit, [this] { return entered_; });
  }
  void open() {
    const std::lock_guard lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  io::ReadDevice& inner_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool entered_ = false;
  bool open_ = false;
};

}  // namespace graphtier::test
