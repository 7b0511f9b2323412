// A fixed pool of worker threads with a blocking parallel-for, handed to the code that uses it
// (docs/architecture.md, Conventions 4).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

namespace graphtier {

/// Threads per hardware thread that a count given by a user may start at most: more only adds
/// switching, and tens of thousands exhaust the machine's process limit for every other process.
inline constexpr int kMaxThreadsPerCore = 4;

/// kMaxThreadsPerCore x std::thread::hardware_concurrency() (at least kMaxThreadsPerCore).
int max_worker_threads() noexcept;

/// The cores the calling thread may run on (its affinity mask: taskset, a cpuset, a container's
/// CPU limit), at least 1; hardware_concurrency where the mask cannot be read. The pools' default
/// size: a job confined to 2 cores of a 64-core machine starts 2 threads, not 64.
int usable_cores() noexcept;

/// Threads that block in a read (the pread device's workers) wait on the storage device, not on a
/// core: their cap is a queue depth beyond what an NVMe SSD needs to saturate, not a core multiple.
inline constexpr int kMaxBlockingIoThreads = 256;

/// `requested` capped at `cap`; when capped, a warning names `what`, the request and the cap. For
/// every group of threads started from a user's count.
int cap_worker_threads(int requested, std::string_view what, int cap = max_worker_threads());

/// Throws IoError (EAGAIN) naming `what` and the thread count: for a std::system_error caught
/// from starting a thread (the process or user thread limit is reached).
[[noreturn]] void throw_thread_start_failed(std::string_view what, int started, int wanted,
                                            const std::system_error& error);

class ThreadPool {
 public:
  /// `num_threads` <= 0 uses usable_cores(); more than max_worker_threads()
  /// is capped there with a warning. The calling thread also works, so a pool of n threads starts
  /// n - 1 workers. A worker that cannot be started (the thread limit) is an IoError, after the
  /// workers already started are stopped.
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const noexcept { return num_threads_; }

  /// Runs fn(chunk_begin, chunk_end) over [begin, end) in chunks of `grain` items and returns when
  /// all chunks are done. The chunk boundaries depend only on (begin, end, grain), never on timing,
  /// so per-chunk results are deterministic. The first exception thrown by any chunk is rethrown
  /// here after the remaining chunks are skipped. Not reentrant: do not call from inside fn.
  void parallel_for(int64_t begin, int64_t end, int64_t grain,
                    const std::function<void(int64_t, int64_t)>& fn);

  /// Splits [begin, end) into exactly size() contiguous parts and runs fn(part, part_begin, part_end)
  /// for each: for per-thread scratch arrays indexed by part.
  void parallel_parts(int64_t begin, int64_t end,
                      const std::function<void(int, int64_t, int64_t)>& fn);

 private:
  struct Job;
  void worker_loop();
  void run_chunks(Job& job);
  void stop_workers() noexcept;

  int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  Job* job_ = nullptr;
  uint64_t generation_ = 0;
  int active_ = 0;
  bool stop_ = false;
};

}  // namespace graphtier
