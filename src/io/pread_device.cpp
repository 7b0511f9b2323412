#include "pread_device.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/thread_pool.hpp"

namespace graphtier::io {

namespace {

class PreadDevice final : public ReadDevice {
 public:
  explicit PreadDevice(int max_in_flight) : max_in_flight_(max_in_flight) {
    GRAPHTIER_EXPECTS(max_in_flight >= 1, InvalidArgument, "pread worker count must be >= 1, got ", max_in_flight);
    // One thread per read in flight, and the depth comes from the user: capped, so that
    // max_in_flight() reports what runs.
    max_in_flight_ = cap_worker_threads(max_in_flight, "pread read device", kMaxBlockingIoThreads);
    workers_.reserve(static_cast<std::size_t>(max_in_flight_));
    try {
      for (int i = 0; i < max_in_flight_; ++i) workers_.emplace_back([this] { worker_loop(); });
    } catch (const std::system_error& e) {
      const int started = static_cast<int>(workers_.size());
      stop_workers();
      throw_thread_start_failed("pread read device", started, max_in_flight_, e);
    } catch (...) {
      stop_workers();  // joinable threads must not be destroyed
      throw;
    }
  }

  ~PreadDevice() override { stop_workers(); }

  PreadDevice(const PreadDevice&) = delete;
  PreadDevice& operator=(const PreadDevice&) = delete;

  int max_in_flight() const noexcept override { return max_in_flight_; }
  std::string_view name() const noexcept override { return "pread"; }

  std::size_t submit_and_wait(std::span<const DeviceRead> reads, std::span<DeviceCompletion> out,
                              std::size_t min_complete) override {
    std::unique_lock lock(mutex_);
    GRAPHTIER_EXPECTS(in_flight_ + reads.size() <= static_cast<std::size_t>(max_in_flight_), InvalidArgument,
                      "pread: ", in_flight_ + reads.size(), " reads in flight exceed the ", max_in_flight_, " workers");
    pending_.insert(pending_.end(), reads.begin(), reads.end());
    in_flight_ += reads.size();
    if (reads.size() == 1) {
      work_ready_.notify_one();
    } else if (!reads.empty()) {
      work_ready_.notify_all();
    }
    const std::size_t wait_for = std::min({min_complete, in_flight_, out.size()});
    done_ready_.wait(lock, [&] { return completed_.size() >= wait_for; });
    const std::size_t count = std::min(completed_.size(), out.size());
    std::copy_n(completed_.begin(), count, out.begin());
    completed_.erase(completed_.begin(), completed_.begin() + static_cast<std::ptrdiff_t>(count));
    in_flight_ -= count;
    return count;
  }

 private:
  void stop_workers() noexcept {
    {
      // Workers finish the reads already queued before they stop: their buffers are still owned.
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    work_ready_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  void worker_loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      work_ready_.wait(lock, [&] { return stop_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stop_ and nothing left
      const DeviceRead r = pending_.front();
      pending_.pop_front();
      lock.unlock();
      const ssize_t n = ::pread(r.fd, r.dst, r.length, static_cast<off_t>(r.offset));
      const auto result = static_cast<int32_t>(n < 0 ? -errno : n);
      lock.lock();
      completed_.push_back(DeviceCompletion{r.tag, result});
      done_ready_.notify_one();
    }
  }

  int max_in_flight_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable done_ready_;
  std::deque<DeviceRead> pending_;
  std::vector<DeviceCompletion> completed_;
  std::size_t in_flight_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;  // last: started once everything above is initialised
};

}  // namespace

std::unique_ptr<ReadDevice> make_pread_device(int max_in_flight) {
  return std::make_unique<PreadDevice>(max_in_flight);
}

}  // namespace graphtier::io
