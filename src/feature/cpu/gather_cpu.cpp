// HostTiers::gather: the host rows, the host cache and the storage tier serving one gather.
#include "host_tiers.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <utility>

#include "graphtier/core/log.hpp"

namespace graphtier::feature {

namespace {
using Clock = std::chrono::steady_clock;

// Rows copied per task: enough to amortise a task hand-off, few enough that two threads share
// a minibatch of a few thousand rows evenly.
constexpr int64_t kCopyBytesPerTask = int64_t{1} << 20;
// Smallest read chunk of a gather: below this the queue drains too often.
constexpr int64_t kMinRowsPerReadChunk = 2048;

}  // namespace

/// The host cache's slot and kind of every key (every key a bypass without a cache).
cache::LookupCounts HostTiers::lookup_cache() {
  Scratch& sc = scratch_;
  const std::size_t m = sc.keys.size();
  sc.slots.assign(m, -1);
  sc.kinds.assign(m, cache::LookupKind::kBypass);
  cache::LookupCounts counts{0, 0, static_cast<int64_t>(m)};
  if (cache_.num_lines() > 0 && m > 0) {
    // The policy's lock only for the lookup: the lines it hands out are this gather's until it
    // returns (gathers are serialised by the caller; window() only changes counts).
    const std::lock_guard lock(policy_mutex_);
    counts = cache_.policy().lookup(sc.keys, sc.slots, sc.kinds);
  }
  return counts;
}

/// One read per fill and per bypass (`read_ids`, `read_dst`): a fill's lands in its cache line
/// (aligned lines of whole blocks: read in place, so the row is copied once, to the output), a
/// bypass's in its output row (in place when that is aligned for the file, else the read engine
/// copies it there: no copy of ours). The hits served from a line (`hit_entries`), and the rows
/// copied from a read (`stage_row`) in read order (`scatter_order`), so that the rows of one read
/// chunk are one range of it. A hit on a line this gather fills is served after the fill's read:
/// the line holds nothing before it.
void HostTiers::plan_reads(std::byte* out) {
  Scratch& sc = scratch_;
  const auto row_bytes = static_cast<std::size_t>(layout_.row_bytes());
  const std::size_t m = sc.keys.size();
  sc.read_ids.clear();
  sc.read_dst.clear();
  sc.hit_entries.clear();
  sc.staged_slot.clear();
  sc.stage_row.assign(m, -1);
  for (std::size_t i = 0; i < m; ++i) {
    switch (sc.kinds[i]) {
      case cache::LookupKind::kFill:
        sc.staged_slot.emplace(sc.slots[i], static_cast<int64_t>(sc.read_ids.size()));
        sc.stage_row[i] = static_cast<int64_t>(sc.read_ids.size());
        sc.read_ids.push_back(sc.keys[i]);
        sc.read_dst.push_back(cache_.line(sc.slots[i]));
        break;
      case cache::LookupKind::kBypass:
        sc.read_ids.push_back(sc.keys[i]);
        sc.read_dst.push_back(out + static_cast<std::size_t>(sc.store_pos[i]) * row_bytes);
        break;
      case cache::LookupKind::kHit:
        if (const auto it = sc.staged_slot.find(sc.slots[i]); it != sc.staged_slot.end()) {
          sc.stage_row[i] = it->second;
        } else {
          sc.hit_entries.push_back(static_cast<int64_t>(i));
        }
        break;
    }
  }

  sc.scatter_order.clear();
  for (std::size_t i = 0; i < m; ++i) {
    if (sc.stage_row[i] >= 0) sc.scatter_order.push_back(static_cast<int64_t>(i));
  }
  std::stable_sort(sc.scatter_order.begin(), sc.scatter_order.end(), [&](int64_t a, int64_t b) {
    return sc.stage_row[static_cast<std::size_t>(a)] < sc.stage_row[static_cast<std::size_t>(b)];
  });
}

/// The copies of one planned gather on the store's pool, one job: task 0 (handed out first) reads
/// the rows chunk after chunk, never waiting for a copy, so the device's queue stays full from the
/// first read to the last; the copy tasks serve the host tier's rows and the cache hits; the
/// scatter tasks copy the read rows to the output in read order, each waiting until the chunks
/// holding its rows are read. Reads go in chunks so that copies start before the last read; each chunk
/// ends by draining the queue (about one read latency with fewer reads in flight), so a chunk
/// holds many times the queue depth. (Rounds of one read and the scatter of the chunk before,
/// with a barrier between rounds, made the reader wait for the slowest copy of each round: with
/// the cores busy, the device idled.)
class HostTiers::CopyRounds {
 public:
  CopyRounds(HostTiers& tiers, std::span<const int64_t> ids, std::byte* out)
      : tiers_(tiers),
        sc_(tiers.scratch_),
        ids_(ids),
        out_(out),
        row_bytes_(static_cast<std::size_t>(tiers.layout_.row_bytes())),
        rows_per_task_(std::max<int64_t>(1, kCopyBytesPerTask / static_cast<int64_t>(row_bytes_))),
        reads_(static_cast<int64_t>(sc_.read_ids.size())),
        // With no row to copy from a read (every read lands in the output) nothing waits for a
        // chunk: one read call, whose queue drains once.
        chunk_rows_(sc_.scatter_order.empty()
                        ? std::max<int64_t>(1, reads_)
                        : std::max<int64_t>(kMinRowsPerReadChunk, int64_t{32} * tiers.storage_->depth())) {}

  void run() {
    const int64_t host_tasks = tasks_for(sc_.host_pos.size());
    const int64_t copy_tasks = host_tasks + tasks_for(sc_.hit_entries.size());
    const int64_t scatter_tasks = tasks_for(sc_.scatter_order.size());
    tiers_.pool_.parallel_for(0, 1 + copy_tasks + scatter_tasks, 1, [&](int64_t task, int64_t) {
      if (task == 0) {
        read_all();
        return;
      }
      if (task <= copy_tasks) {
        const auto start = Clock::now();
        if (task <= host_tasks) {
          copy_host_rows(task - 1);
        } else {
          copy_hits(task - 1 - host_tasks);
        }
        add_seconds(task <= host_tasks ? host_seconds_ : hit_seconds_, start);
        return;
      }
      const auto [begin, end] = task_rows(task - 1 - copy_tasks, sc_.scatter_order.size());
      // scatter_order is in read order: its last entry's read is the task's last.
      if (!wait_read(sc_.stage_row[static_cast<std::size_t>(sc_.scatter_order[end - 1])])) return;
      const auto start = Clock::now();
      scatter(begin, end);
      add_seconds(scatter_seconds_, start);
    });
  }

  const io::IoStats& io() const noexcept { return io_; }
  double storage_seconds() const noexcept { return read_seconds_ + scatter_seconds_; }
  double host_seconds() const noexcept { return host_seconds_; }
  double hit_seconds() const noexcept { return hit_seconds_; }

 private:
  int64_t tasks_for(std::size_t rows) const { return (static_cast<int64_t>(rows) + rows_per_task_ - 1) / rows_per_task_; }

  /// The rows [begin, end) of task `task` over a list of `size` entries.
  std::pair<std::size_t, std::size_t> task_rows(int64_t task, std::size_t size) const {
    const auto begin = static_cast<std::size_t>(task * rows_per_task_);
    return {begin, std::min(size, begin + static_cast<std::size_t>(rows_per_task_))};
  }

  void add_seconds(double& seconds, Clock::time_point start) {
    const double elapsed = seconds_since(start);
    const std::lock_guard lock(seconds_mutex_);
    seconds += elapsed;
  }

  // One thread reads (task 0): its counters need no lock. A failed read wakes the waiting
  // scatter tasks before the job reports it.
  void read_all() {
    try {
      for (int64_t begin = 0; begin < reads_; begin += chunk_rows_) {
        const int64_t end = std::min(reads_, begin + chunk_rows_);
        const auto start = Clock::now();
        const auto b = static_cast<std::size_t>(begin), n = static_cast<std::size_t>(end - begin);
        io_ += tiers_.storage_->read(std::span<const int64_t>(sc_.read_ids).subspan(b, n),
                                     std::span<std::byte* const>(sc_.read_dst).subspan(b, n));
        read_seconds_ += seconds_since(start);
        const std::lock_guard lock(read_mutex_);
        rows_read_ = end;
        read_done_.notify_all();
      }
    } catch (...) {
      {
        const std::lock_guard lock(read_mutex_);
        read_failed_ = true;
      }
      read_done_.notify_all();
      throw;
    }
  }

  /// Waits until read `row` (in read_ids) is done; false when the reads failed first.
  bool wait_read(int64_t row) {
    std::unique_lock lock(read_mutex_);
    read_done_.wait(lock, [&] { return rows_read_ > row || read_failed_; });
    return rows_read_ > row;
  }

  void copy_host_rows(int64_t task) {
    const auto [begin, end] = task_rows(task, sc_.host_pos.size());
    for (std::size_t j = begin; j < end; ++j) {
      const auto k = static_cast<std::size_t>(sc_.host_pos[j]);
      std::memcpy(out_ + k * row_bytes_, tiers_.host_.row(ids_[k]), row_bytes_);
    }
  }

  void copy_hits(int64_t task) {
    const auto [begin, end] = task_rows(task, sc_.hit_entries.size());
    for (std::size_t j = begin; j < end; ++j) {
      const auto i = static_cast<std::size_t>(sc_.hit_entries[j]);
      std::memcpy(out_ + static_cast<std::size_t>(sc_.store_pos[i]) * row_bytes_, tiers_.cache_.line(sc_.slots[i]),
                  row_bytes_);
    }
  }

  /// The rows of scatter_order[begin, end), from the lines their reads filled, to the output.
  void scatter(int64_t begin, int64_t end) {
    for (auto j = static_cast<std::size_t>(begin); j < static_cast<std::size_t>(end); ++j) {
      const auto i = static_cast<std::size_t>(sc_.scatter_order[j]);
      std::memcpy(out_ + static_cast<std::size_t>(sc_.store_pos[i]) * row_bytes_,
                  sc_.read_dst[static_cast<std::size_t>(sc_.stage_row[i])], row_bytes_);
    }
  }

  HostTiers& tiers_;
  Scratch& sc_;
  std::span<const int64_t> ids_;
  std::byte* out_;
  std::size_t row_bytes_;
  int64_t rows_per_task_;
  int64_t reads_;
  int64_t chunk_rows_;
  io::IoStats io_;
  double read_seconds_ = 0;
  double scatter_seconds_ = 0;
  double host_seconds_ = 0;
  double hit_seconds_ = 0;
  std::mutex seconds_mutex_;
  std::mutex read_mutex_;  // guards rows_read_ and read_failed_
  std::condition_variable read_done_;
  int64_t rows_read_ = 0;  // reads [0, rows_read_) are done
  bool read_failed_ = false;
};

void HostTiers::gather(std::span<const int64_t> ids, std::byte* out, GatherStats& stats) {
  Scratch& sc = scratch_;
  const auto row_bytes = static_cast<std::size_t>(layout_.row_bytes());
  // Output positions served by the host rows (ids below cpu_end) and by storage, and the storage
  // positions' ids, the keys of the host cache.
  sc.host_pos.clear();
  sc.store_pos.clear();
  for (std::size_t k = 0; k < ids.size(); ++k) {
    (ids[k] < host_.end() ? sc.host_pos : sc.store_pos).push_back(static_cast<int64_t>(k));
  }
  sc.keys.resize(sc.store_pos.size());
  for (std::size_t i = 0; i < sc.keys.size(); ++i) sc.keys[i] = ids[static_cast<std::size_t>(sc.store_pos[i])];
  const cache::LookupCounts counts = lookup_cache();
  // From the lookup until every copy is done, a failure (an I/O error, or no memory for the
  // plan below) must leave no line claiming a row it never received.
  struct FillGuard {
    HostTiers& tiers;
    bool armed;
    ~FillGuard() {
      if (!armed) return;
      const std::lock_guard lock(tiers.policy_mutex_);
      tiers.cache_.policy().erase_fills(tiers.scratch_.keys, tiers.scratch_.kinds);
    }
  } fill_guard{*this, counts.fills > 0};
  plan_reads(out);
  CopyRounds rounds(*this, ids, out);
  rounds.run();
  fill_guard.armed = false;

  const auto rows_bytes = [&](std::size_t rows) {
    return TierStats{static_cast<int64_t>(rows), static_cast<int64_t>(rows * row_bytes), 0.0};
  };
  TierStats host = rows_bytes(sc.host_pos.size());
  TierStats hits = rows_bytes(sc.hit_entries.size());
  TierStats storage = rows_bytes(sc.keys.size() - sc.hit_entries.size());
  storage.seconds = rounds.storage_seconds();
  host.seconds = rounds.host_seconds();
  hits.seconds = rounds.hit_seconds();
  stats.host += host;
  stats.host_cache += hits;
  stats.storage += storage;
  stats.cache_fills += counts.fills;
  if (cache_.num_lines() > 0) stats.cache_bypasses += counts.bypasses;
  stats.io += rounds.io();
}

}  // namespace graphtier::feature
