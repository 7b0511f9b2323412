// HostTiers::gather: the host rows, the host cache and the storage tier serving one gather.
#include "host_tiers.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
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
// Storage keys per part of a gather's lookup: the device's queue waits for the first part only.
constexpr int64_t kKeysPerLookup = 2048;

}  // namespace

/// Plans the storage keys [begin, end) of the gather after the host cache's lookup of them, a
/// part of the gather's one lookup (continued after the first part, so that no part evicts a line
/// an earlier one uses): one read per fill and per bypass (`read_ids`, `read_dst`), appended: a
/// fill's lands in its cache line (aligned lines of whole blocks: read in place, so the row is
/// copied once, to the output), a bypass's in its output row (in place when that is aligned for
/// the file, else the read engine copies it there: no copy of ours). The hits served from a line
/// (`hit_entries`), and the rows copied from a read (`stage_row`) in read order (`scatter_order`),
/// so that the rows of one read chunk are one range of it. A hit on a line this gather fills is
/// served after the fill's read: the line holds nothing before it. Returns the part's end marks.
HostTiers::PlannedPart HostTiers::plan_part(int64_t begin, int64_t end, std::byte* out, cache::LookupCounts& counts,
                                            const PlannedPart& before) {
  Scratch& sc = scratch_;
  const auto row_bytes = static_cast<std::size_t>(layout_.row_bytes());
  const auto b = static_cast<std::size_t>(begin), n = static_cast<std::size_t>(end - begin);
  if (cache_.num_lines() > 0) {
    // The policy's lock only for the lookup: the lines it hands out are this gather's until it
    // returns (gathers are serialised by the caller; window() only changes counts).
    const std::lock_guard lock(policy_mutex_);
    const cache::LookupCounts c = cache_.policy().lookup(std::span<const int64_t>(sc.keys).subspan(b, n),
                                                         std::span<int64_t>(sc.slots).subspan(b, n),
                                                         std::span<cache::LookupKind>(sc.kinds).subspan(b, n), begin > 0);
    counts.hits += c.hits;
    counts.fills += c.fills;
    counts.bypasses += c.bypasses;
  } else {
    counts.bypasses += end - begin;  // every key a bypass (the kinds' initial value)
  }
  PlannedPart p = before;
  for (auto i = b; i < b + n; ++i) {
    switch (sc.kinds[i]) {
      case cache::LookupKind::kFill:
        sc.staged_slot.emplace(sc.slots[i], p.reads);
        sc.stage_row[i] = p.reads;
        sc.read_ids[static_cast<std::size_t>(p.reads)] = sc.keys[i];
        sc.read_dst[static_cast<std::size_t>(p.reads++)] = cache_.line(sc.slots[i]);
        break;
      case cache::LookupKind::kBypass:
        sc.read_ids[static_cast<std::size_t>(p.reads)] = sc.keys[i];
        sc.read_dst[static_cast<std::size_t>(p.reads++)] = out + static_cast<std::size_t>(sc.store_pos[i]) * row_bytes;
        break;
      case cache::LookupKind::kHit:
        if (const auto it = sc.staged_slot.find(sc.slots[i]); it != sc.staged_slot.end()) {
          sc.stage_row[i] = it->second;
        } else {
          sc.hit_entries[static_cast<std::size_t>(p.hits++)] = static_cast<int64_t>(i);
        }
        break;
    }
  }
  for (auto i = b; i < b + n; ++i) {
    if (sc.stage_row[i] >= 0) sc.scatter_order[static_cast<std::size_t>(p.scatter++)] = static_cast<int64_t>(i);
  }
  std::stable_sort(sc.scatter_order.begin() + before.scatter, sc.scatter_order.begin() + p.scatter,
                   [&](int64_t x, int64_t y) {
                     return sc.stage_row[static_cast<std::size_t>(x)] < sc.stage_row[static_cast<std::size_t>(y)];
                   });
  return p;
}

/// One gather's lookup, reads and copies on the store's pool, one job whose tasks are handed out
/// in order. Task 0 looks the storage keys up in parts and plans each part's reads and copies;
/// task 1 reads the planned rows chunk after chunk, never waiting for a copy, so the device's queue
/// fills after the first part's lookup, not the whole gather's, and stays full to the last read;
/// the copy tasks serve the host tier's rows and the cache hits as their parts are planned; the
/// scatter tasks copy the read rows to the output in read order, each waiting until the chunks
/// holding its rows are read. Reads go in chunks so that copies start before the last read; each
/// chunk ends by draining the queue (about one read latency with fewer reads in flight), so a chunk
/// holds many times the queue depth. (Rounds of one read and the scatter of the chunk before,
/// with a barrier between rounds, made the reader wait for the slowest copy of each round: with
/// the cores busy, the device idled.) With one thread the tasks run in order and wait for nothing.
class HostTiers::CopyRounds {
 public:
  CopyRounds(HostTiers& tiers, std::span<const int64_t> ids, std::byte* out, const std::function<void()>& after_lookup)
      : tiers_(tiers),
        sc_(tiers.scratch_),
        ids_(ids),
        out_(out),
        after_lookup_(after_lookup),
        row_bytes_(static_cast<std::size_t>(tiers.layout_.row_bytes())),
        rows_per_task_(std::max<int64_t>(1, kCopyBytesPerTask / static_cast<int64_t>(row_bytes_))),
        keys_(static_cast<int64_t>(sc_.keys.size())),
        // Without a cache every key is a bypass read into the output: one part.
        keys_per_part_(tiers.cache_.num_lines() > 0 ? kKeysPerLookup : std::max<int64_t>(1, keys_)),
        parts_((keys_ + keys_per_part_ - 1) / keys_per_part_),
        tasks_per_part_((std::min(keys_, keys_per_part_) + rows_per_task_ - 1) / rows_per_task_),
        chunk_rows_(std::max<int64_t>(kMinRowsPerReadChunk, int64_t{32} * tiers.storage_->depth())),
        planned_(static_cast<std::size_t>(parts_)) {}

  void run() {
    const int64_t host_tasks = tasks_for(sc_.host_pos.size());
    const int64_t part_tasks = parts_ * tasks_per_part_;
    // plan, read, host rows, hits of every part, then scatters of every part.
    tiers_.pool_.parallel_for(0, 2 + host_tasks + 2 * part_tasks, 1, [&](int64_t task, int64_t) {
      if (task == 0) return plan_all();
      if (task == 1) return read_all();
      task -= 2;
      if (task < host_tasks) {
        const auto start = Clock::now();
        copy_host_rows(task);
        return add_seconds(host_seconds_, start);
      }
      task -= host_tasks;
      const bool scatter = task >= part_tasks;
      if (scatter) task -= part_tasks;
      const int64_t part = task / tasks_per_part_;
      if (!wait_planned(part)) return;
      const PlannedPart& from = part == 0 ? PlannedPart{} : planned_[static_cast<std::size_t>(part - 1)];
      const PlannedPart& to = planned_[static_cast<std::size_t>(part)];
      const int64_t begin = (scatter ? from.scatter : from.hits) + (task % tasks_per_part_) * rows_per_task_;
      const int64_t end = std::min(scatter ? to.scatter : to.hits, begin + rows_per_task_);
      if (begin >= end) return;
      // scatter_order is in read order within a part: its last entry's read is the task's last.
      if (scatter && !wait_read(sc_.stage_row[static_cast<std::size_t>(sc_.scatter_order[end - 1])])) return;
      const auto start = Clock::now();
      scatter ? this->scatter(begin, end) : copy_hits(begin, end);
      add_seconds(scatter ? scatter_seconds_ : hit_seconds_, start);
    });
  }

  const io::IoStats& io() const noexcept { return io_; }
  const cache::LookupCounts& counts() const noexcept { return counts_; }
  /// Entries served from lines the gather did not fill (valid once run() returned).
  int64_t hits() const noexcept { return parts_ == 0 ? 0 : planned_.back().hits; }
  double storage_seconds() const noexcept { return read_seconds_ + scatter_seconds_; }
  double host_seconds() const noexcept { return host_seconds_; }
  double hit_seconds() const noexcept { return hit_seconds_; }

 private:
  int64_t tasks_for(std::size_t rows) const { return (static_cast<int64_t>(rows) + rows_per_task_ - 1) / rows_per_task_; }

  void add_seconds(double& seconds, Clock::time_point start) {
    const double elapsed = seconds_since(start);
    const std::lock_guard lock(seconds_mutex_);
    seconds += elapsed;
  }

  /// Marks the job failed and wakes every task waiting for a part or a read, then rethrows.
  [[noreturn]] void fail() {
    {
      const std::lock_guard lock(progress_mutex_);
      failed_ = true;
    }
    progress_.notify_all();
    throw;
  }

  // One thread plans (task 0), in parts; each part's marks are published under the progress lock.
  void plan_all() {
    try {
      PlannedPart marks;
      for (int64_t part = 0; part < parts_; ++part) {
        const int64_t begin = part * keys_per_part_;
        marks = tiers_.plan_part(begin, std::min(keys_, begin + keys_per_part_), out_, counts_, marks);
        {
          const std::lock_guard lock(progress_mutex_);
          planned_[static_cast<std::size_t>(part)] = marks;
          parts_planned_ = part + 1;
        }
        progress_.notify_all();
      }
      if (after_lookup_) after_lookup_();
    } catch (...) {
      fail();
    }
  }

  // One thread reads (task 1): its counters need no lock. It reads what is planned, a chunk at a
  // time; a failed read wakes the waiting tasks before the job reports it.
  void read_all() {
    try {
      int64_t done = 0;
      for (;;) {
        int64_t planned = 0;
        bool nothing_waits = false;  // every part planned, and no row copied from a read
        {
          std::unique_lock lock(progress_mutex_);
          progress_.wait(lock, [&] { return failed_ || parts_planned_ == parts_ || planned_reads() > done; });
          if (failed_) return;  // the planner's error is the job's
          planned = planned_reads();
          if (planned == done) return;  // every part planned and read
          nothing_waits = parts_planned_ == parts_ && planned_.back().scatter == 0;
        }
        // Every read lands where it is used (no cache, or every line pinned): one read call, whose
        // queue drains once.
        const int64_t end = nothing_waits ? planned : std::min(planned, done + chunk_rows_);
        const auto start = Clock::now();
        const auto b = static_cast<std::size_t>(done), n = static_cast<std::size_t>(end - done);
        io_ += tiers_.storage_->read(std::span<const int64_t>(sc_.read_ids).subspan(b, n),
                                     std::span<std::byte* const>(sc_.read_dst).subspan(b, n));
        read_seconds_ += seconds_since(start);
        {
          const std::lock_guard lock(progress_mutex_);
          rows_read_ = done = end;
        }
        progress_.notify_all();
      }
    } catch (...) {
      fail();
    }
  }

  /// Reads planned so far (under progress_mutex_).
  int64_t planned_reads() const { return parts_planned_ == 0 ? 0 : planned_[static_cast<std::size_t>(parts_planned_ - 1)].reads; }

  /// Waits until part `part` is planned; false when the job failed first.
  bool wait_planned(int64_t part) {
    std::unique_lock lock(progress_mutex_);
    progress_.wait(lock, [&] { return parts_planned_ > part || failed_; });
    return parts_planned_ > part;
  }

  /// Waits until read `row` (in read_ids) is done; false when the job failed first.
  bool wait_read(int64_t row) {
    std::unique_lock lock(progress_mutex_);
    progress_.wait(lock, [&] { return rows_read_ > row || failed_; });
    return rows_read_ > row;
  }

  void copy_host_rows(int64_t task) {
    const auto begin = static_cast<std::size_t>(task * rows_per_task_);
    const std::size_t end = std::min(sc_.host_pos.size(), begin + static_cast<std::size_t>(rows_per_task_));
    for (std::size_t j = begin; j < end; ++j) {
      const auto k = static_cast<std::size_t>(sc_.host_pos[j]);
      std::memcpy(out_ + k * row_bytes_, tiers_.host_.row(ids_[k]), row_bytes_);
    }
  }

  /// The hits hit_entries[begin, end), from their lines to the output.
  void copy_hits(int64_t begin, int64_t end) {
    for (auto j = static_cast<std::size_t>(begin); j < static_cast<std::size_t>(end); ++j) {
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
  const std::function<void()>& after_lookup_;
  std::size_t row_bytes_;
  int64_t rows_per_task_;
  int64_t keys_;
  int64_t keys_per_part_;
  int64_t parts_;
  int64_t tasks_per_part_;
  int64_t chunk_rows_;
  cache::LookupCounts counts_;  // the planner's
  io::IoStats io_;              // the reader's
  double read_seconds_ = 0;
  double scatter_seconds_ = 0;
  double host_seconds_ = 0;
  double hit_seconds_ = 0;
  std::mutex seconds_mutex_;
  std::mutex progress_mutex_;  // guards planned_, parts_planned_, rows_read_ and failed_
  std::condition_variable progress_;
  std::vector<PlannedPart> planned_;  // each part's end marks, once planned
  int64_t parts_planned_ = 0;
  int64_t rows_read_ = 0;  // reads [0, rows_read_) are done
  bool failed_ = false;
};

void HostTiers::gather(std::span<const int64_t> ids, std::byte* out, GatherStats& stats,
                       const std::function<void()>& after_lookup) {
  Scratch& sc = scratch_;
  const auto row_bytes = static_cast<std::size_t>(layout_.row_bytes());
  // Output positions served by the host rows (ids below cpu_end) and by storage, and the storage
  // positions' ids, the keys of the host cache.
  sc.host_pos.clear();
  sc.store_pos.clear();
  for (std::size_t k = 0; k < ids.size(); ++k) {
    (ids[k] < host_.end() ? sc.host_pos : sc.store_pos).push_back(static_cast<int64_t>(k));
  }
  const std::size_t m = sc.store_pos.size();
  sc.keys.resize(m);
  for (std::size_t i = 0; i < m; ++i) sc.keys[i] = ids[static_cast<std::size_t>(sc.store_pos[i])];
  // Sized once, written by the planner part after part while the other tasks read the parts
  // planned before (a part's marks are published under the job's lock): no reallocation.
  sc.slots.assign(m, -1);
  sc.kinds.assign(m, cache::LookupKind::kBypass);  // until looked up: erase_fills skips them
  sc.stage_row.assign(m, -1);
  sc.read_ids.resize(m);
  sc.read_dst.resize(m);
  sc.hit_entries.resize(m);
  sc.scatter_order.resize(m);
  sc.staged_slot.clear();
  // From the first lookup until every copy is done, a failure (an I/O error, or no memory for
  // the plan) must leave no line claiming a row it never received.
  struct FillGuard {
    HostTiers& tiers;
    bool armed;
    ~FillGuard() {
      if (!armed) return;
      const std::lock_guard lock(tiers.policy_mutex_);
      tiers.cache_.policy().erase_fills(tiers.scratch_.keys, tiers.scratch_.kinds);
    }
  } fill_guard{*this, cache_.num_lines() > 0 && m > 0};
  CopyRounds rounds(*this, ids, out, after_lookup);
  rounds.run();
  fill_guard.armed = false;

  const auto rows_bytes = [&](std::size_t rows) {
    return TierStats{static_cast<int64_t>(rows), static_cast<int64_t>(rows * row_bytes), 0.0};
  };
  const auto hit_rows = static_cast<std::size_t>(rounds.hits());
  TierStats host = rows_bytes(sc.host_pos.size());
  TierStats hits = rows_bytes(hit_rows);
  TierStats storage = rows_bytes(m - hit_rows);
  storage.seconds = rounds.storage_seconds();
  host.seconds = rounds.host_seconds();
  hits.seconds = rounds.hit_seconds();
  stats.host += host;
  stats.host_cache += hits;
  stats.storage += storage;
  stats.cache_fills += rounds.counts().fills;
  if (cache_.num_lines() > 0) stats.cache_bypasses += rounds.counts().bypasses;
  stats.io += rounds.io();
}

}  // namespace graphtier::feature
