#include "cpu/gather_cpu.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <utility>

#include "graphtier/core/log.hpp"

namespace graphtier::feature::cpu {

namespace {
// Rows copied per task: enough to amortise a task hand-off, few enough that two threads share
// a minibatch of a few thousand rows evenly.
constexpr int64_t kCopyBytesPerTask = int64_t{1} << 20;
// Smallest read chunk of a gather: below this the queue drains too often.
constexpr int64_t kMinRowsPerReadChunk = 2048;
}  // namespace

void gather_host(FeatureStore::Impl& store, std::span<const int64_t> ids, std::byte* out, GatherStats& stats) {
  using Clock = std::chrono::steady_clock;
  HostGatherScratch& sc = store.scratch;
  const auto row_bytes = static_cast<std::size_t>(store.layout.row_bytes());
  const int64_t cpu_end = store.tiers.ranges.cpu_end;

  sc.host_pos.clear();
  sc.store_pos.clear();
  for (std::size_t k = 0; k < ids.size(); ++k) {
    (ids[k] < cpu_end ? sc.host_pos : sc.store_pos).push_back(static_cast<int64_t>(k));
  }
  const std::size_t m = sc.store_pos.size();
  sc.keys.resize(m);
  for (std::size_t i = 0; i < m; ++i) sc.keys[i] = ids[static_cast<std::size_t>(sc.store_pos[i])];
  sc.slots.assign(m, -1);
  sc.kinds.assign(m, cache::LookupKind::kBypass);
  cache::LookupCounts counts{0, 0, static_cast<int64_t>(m)};
  if (store.host_cache && store.host_cache->num_lines() > 0 && m > 0) {
    // The policy's lock only for the lookup: the lines it hands out are this gather's until it
    // returns (gathers are serialised by gather_mutex; announce/consume only change counts).
    const std::lock_guard lock(store.policy_mutex);
    counts = store.host_cache->policy().lookup(sc.keys, sc.slots, sc.kinds);
  }
  // From the lookup until every copy is done, a failure (an I/O error, or no memory for the
  // staging below) must leave no line claiming a row it never received.
  struct FillGuard {
    FeatureStore::Impl& store;
    const HostGatherScratch& sc;
    bool armed;
    ~FillGuard() {
      if (!armed) return;
      const std::lock_guard lock(store.policy_mutex);
      store.host_cache->policy().erase_fills(sc.keys, sc.kinds);
    }
  } fill_guard{store, sc, counts.fills > 0};

  // One staged row per fill and per bypass. A hit on a line this gather fills is served from the
  // fill's staged row: the line holds nothing yet while the copy tasks run.
  sc.read_ids.clear();
  sc.hit_entries.clear();
  sc.staged_slot.clear();
  sc.stage_row.assign(m, -1);
  for (std::size_t i = 0; i < m; ++i) {
    switch (sc.kinds[i]) {
      case cache::LookupKind::kFill:
        sc.staged_slot.emplace(sc.slots[i], static_cast<int64_t>(sc.read_ids.size()));
        [[fallthrough]];
      case cache::LookupKind::kBypass:
        sc.stage_row[i] = static_cast<int64_t>(sc.read_ids.size());
        sc.read_ids.push_back(sc.keys[i]);
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
  if (sc.staging.size() < sc.read_ids.size() * row_bytes) sc.staging.resize(sc.read_ids.size() * row_bytes);

  // Staged rows in stage order, so that the rows of one read chunk are one range of it.
  sc.scatter_order.clear();
  for (std::size_t i = 0; i < m; ++i) {
    if (sc.stage_row[i] >= 0) sc.scatter_order.push_back(static_cast<int64_t>(i));
  }
  std::stable_sort(sc.scatter_order.begin(), sc.scatter_order.end(),
                   [&](int64_t a, int64_t b) { return sc.stage_row[static_cast<std::size_t>(a)] < sc.stage_row[static_cast<std::size_t>(b)]; });

  const int64_t rows_per_task = std::max<int64_t>(1, kCopyBytesPerTask / static_cast<int64_t>(row_bytes));
  const auto tasks_for = [&](std::size_t rows) { return (static_cast<int64_t>(rows) + rows_per_task - 1) / rows_per_task; };
  const int64_t host_tasks = tasks_for(sc.host_pos.size());
  const int64_t hit_tasks = tasks_for(sc.hit_entries.size());
  // Reads go in chunks so that the rows of one chunk are scattered while the next is read. Each
  // chunk ends by draining the queue (about one read latency with fewer reads in flight), so a
  // chunk holds many times the queue depth.
  const auto reads = static_cast<int64_t>(sc.read_ids.size());
  const int64_t chunk_rows = std::max<int64_t>(kMinRowsPerReadChunk, int64_t{32} * store.storage->depth());
  const int64_t num_chunks = (reads + chunk_rows - 1) / chunk_rows;
  io::IoStats io_batch;
  double read_seconds = 0;
  double scatter_seconds = 0;
  double host_seconds = 0;
  double hit_seconds = 0;
  std::mutex seconds_mutex;

  const auto read_chunk = [&](int64_t c) {
    const int64_t begin = c * chunk_rows;
    const int64_t end = std::min(reads, begin + chunk_rows);
    const auto start = Clock::now();
    io_batch += store.storage->read(
        std::span<const int64_t>(sc.read_ids).subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin)),
        std::span<std::byte>(sc.staging.data() + static_cast<std::size_t>(begin) * row_bytes,
                             static_cast<std::size_t>(end - begin) * row_bytes));
    read_seconds += seconds_since(start);
  };
  // Entries of scatter_order whose staged row lies in chunk c.
  const auto chunk_entries = [&](int64_t c) {
    const auto by_row = [&](int64_t entry, int64_t row) { return sc.stage_row[static_cast<std::size_t>(entry)] < row; };
    const auto first = std::lower_bound(sc.scatter_order.begin(), sc.scatter_order.end(), c * chunk_rows, by_row);
    const auto last = std::lower_bound(first, sc.scatter_order.end(), (c + 1) * chunk_rows, by_row);
    return std::pair{first - sc.scatter_order.begin(), last - sc.scatter_order.begin()};
  };
  const auto scatter = [&](int64_t begin, int64_t end) {
    for (auto j = static_cast<std::size_t>(begin); j < static_cast<std::size_t>(end); ++j) {
      const auto i = static_cast<std::size_t>(sc.scatter_order[j]);
      const std::byte* row = sc.staging.data() + static_cast<std::size_t>(sc.stage_row[i]) * row_bytes;
      std::memcpy(out + static_cast<std::size_t>(sc.store_pos[i]) * row_bytes, row, row_bytes);
      if (sc.kinds[i] == cache::LookupKind::kFill) std::memcpy(store.host_cache->line(sc.slots[i]), row, row_bytes);
    }
  };

  // Round r reads chunk r on one thread (task 0, handed out first) while the others scatter
  // chunk r - 1; round 0 also copies the host tier's rows and the cache hits.
  for (int64_t round = 0; round <= num_chunks; ++round) {
    const bool reading = round < num_chunks;
    const auto [scatter_begin, scatter_end] = round > 0 ? chunk_entries(round - 1) : std::pair<std::ptrdiff_t, std::ptrdiff_t>{0, 0};
    const int64_t scatter_tasks = tasks_for(static_cast<std::size_t>(scatter_end - scatter_begin));
    const int64_t copy_tasks = round == 0 ? host_tasks + hit_tasks : 0;
    const int64_t num_tasks = 1 + copy_tasks + scatter_tasks;
    if (num_tasks == 1 && !reading) continue;
    store.pool.parallel_for(0, num_tasks, 1, [&](int64_t task, int64_t) {
      const auto start = Clock::now();
      double* seconds = nullptr;
      if (task == 0) {
        if (reading) read_chunk(round);
        return;
      }
      if (task <= copy_tasks) {
        const bool host_task = task <= host_tasks;
        const auto& list = host_task ? sc.host_pos : sc.hit_entries;
        const auto begin = static_cast<std::size_t>((host_task ? task - 1 : task - 1 - host_tasks) * rows_per_task);
        const std::size_t end = std::min(list.size(), begin + static_cast<std::size_t>(rows_per_task));
        for (std::size_t j = begin; j < end; ++j) {
          if (host_task) {
            const auto k = static_cast<std::size_t>(list[j]);
            std::memcpy(out + k * row_bytes, store.host.row(ids[k]), row_bytes);
          } else {
            const auto i = static_cast<std::size_t>(list[j]);
            std::memcpy(out + static_cast<std::size_t>(sc.store_pos[i]) * row_bytes,
                        store.host_cache->line(sc.slots[i]), row_bytes);
          }
        }
        seconds = host_task ? &host_seconds : &hit_seconds;
      } else {
        const int64_t begin = scatter_begin + (task - 1 - copy_tasks) * rows_per_task;
        scatter(begin, std::min<int64_t>(scatter_end, begin + rows_per_task));
        seconds = &scatter_seconds;
      }
      const double elapsed = seconds_since(start);
      const std::lock_guard lock(seconds_mutex);
      *seconds += elapsed;
    });
  }
  fill_guard.armed = false;

  const auto rows_bytes = [&](std::size_t rows) {
    return TierStats{static_cast<int64_t>(rows), static_cast<int64_t>(rows * row_bytes), 0.0};
  };
  TierStats host = rows_bytes(sc.host_pos.size());
  TierStats hits = rows_bytes(sc.hit_entries.size());
  TierStats storage = rows_bytes(m - sc.hit_entries.size());
  storage.seconds = read_seconds + scatter_seconds;
  host.seconds = host_seconds;
  hits.seconds = hit_seconds;
  stats.host += host;
  stats.host_cache += hits;
  stats.storage += storage;
  stats.cache_fills += counts.fills;
  if (store.host_cache && store.host_cache->num_lines() > 0) stats.cache_bypasses += counts.bypasses;
  stats.io += io_batch;
}

}  // namespace graphtier::feature::cpu
