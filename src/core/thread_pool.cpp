#include "graphtier/core/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>

#include <sched.h>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"

namespace graphtier {

int max_worker_threads() noexcept {
  return kMaxThreadsPerCore * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int usable_cores() noexcept {
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) return std::max(1, CPU_COUNT(&mask));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int cap_worker_threads(int requested, std::string_view what, int cap) {
  if (requested <= cap) return requested;
  log_warn(what, ": ", requested, " threads requested, capped at ", cap);
  return cap;
}

void throw_thread_start_failed(std::string_view what, int started, int wanted, const std::system_error& error) {
  const int err = error.code().category() == std::generic_category() || error.code().category() == std::system_category()
                      ? error.code().value()
                      : EAGAIN;
  throw IoError(err, detail::concat(what, ": cannot start thread ", started + 1, " of ", wanted, " (", error.what(),
                                    "): the process or user thread limit is reached; ask for fewer threads"));
}

struct ThreadPool::Job {
  int64_t begin;
  int64_t end;
  int64_t grain;
  int64_t num_chunks;
  const std::function<void(int64_t, int64_t)>* fn;
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
};

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = usable_cores();
  num_threads_ = cap_worker_threads(num_threads, "thread pool");
  workers_.reserve(num_threads_ - 1);
  try {
    for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
  } catch (const std::system_error& e) {
    const int started = static_cast<int>(workers_.size()) + 1;
    stop_workers();
    throw_thread_start_failed("thread pool", started, num_threads_, e);
  } catch (...) {
    stop_workers();  // joinable threads must not be destroyed
    throw;
  }
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() noexcept {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunks(Job& job) {
  for (;;) {
    const int64_t chunk = job.next.fetch_add(1, std::memory_order_relaxed);
    if (chunk >= job.num_chunks || job.failed.load(std::memory_order_relaxed)) return;
    const int64_t lo = job.begin + chunk * job.grain;
    const int64_t hi = std::min(job.end, lo + job.grain);
    try {
      (*job.fn)(lo, hi);
    } catch (...) {
      std::lock_guard lock(job.error_mutex);
      if (!job.error) job.error = std::current_exception();
      job.failed.store(true, std::memory_order_relaxed);
    }
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    Job* job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || (job_ != nullptr && generation_ != seen); });
      if (stop_) return;
      seen = generation_;
      job = job_;
      ++active_;
    }
    run_chunks(*job);
    {
      std::lock_guard lock(mutex_);
      if (--active_ == 0) done_.notify_all();
    }
  }
}

void ThreadPool::parallel_for(int64_t begin, int64_t end, int64_t grain,
                              const std::function<void(int64_t, int64_t)>& fn) {
  if (end <= begin) return;
  grain = std::max<int64_t>(grain, 1);
  Job job;
  job.begin = begin;
  job.end = end;
  job.grain = grain;
  job.num_chunks = (end - begin + grain - 1) / grain;
  job.fn = &fn;
  if (job.num_chunks == 1 || workers_.empty()) {
    run_chunks(job);
  } else {
    {
      std::lock_guard lock(mutex_);
      job_ = &job;
      ++generation_;
    }
    wake_.notify_all();
    run_chunks(job);
    std::unique_lock lock(mutex_);
    // Workers that woke for this job hold `active_`; once it drops to zero none touches `job`.
    job_ = nullptr;
    done_.wait(lock, [&] { return active_ == 0; });
  }
  if (job.error) std::rethrow_exception(job.error);
}

void ThreadPool::parallel_parts(int64_t begin, int64_t end,
                                const std::function<void(int, int64_t, int64_t)>& fn) {
  const int64_t n = std::max<int64_t>(end - begin, 0);
  const int parts = num_threads_;
  parallel_for(0, parts, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      fn(static_cast<int>(p), begin + n * p / parts, begin + n * (p + 1) / parts);
    }
  });
}

}  // namespace graphtier
