#include "feature/cpu/gather_cpu.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "graphtier/core/log.hpp"

namespace graphtier::feature::cpu {

namespace {
// Rows copied per task: enough to amortise a task hand-off, few enough that two threads share
// a minibatch of a few thousand rows evenly.
constexpr int64_t kCopyBytesPerTask = int64_t{1} << 20;
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
    counts = store.host_cache->policy().lookup(sc.keys, sc.slots, sc.kinds);
  }

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

  const int64_t rows_per_task = std::max<int64_t>(1, kCopyBytesPerTask / static_cast<int64_t>(row_bytes));
  const auto tasks_for = [&](std::size_t rows) { return (static_cast<int64_t>(rows) + rows_per_task - 1) / rows_per_task; };
  const int64_t host_tasks = tasks_for(sc.host_pos.size());
  const int64_t hit_tasks = tasks_for(sc.hit_entries.size());
  const int64_t num_tasks = 1 + host_tasks + hit_tasks;
  sc.task_seconds.assign(static_cast<std::size_t>(num_tasks), 0.0);
  io::IoStats io_batch;

  const auto fail_fills = [&] {
    // No line may claim a row it never received.
    for (std::size_t i = 0; i < m; ++i) {
      if (sc.kinds[i] == cache::LookupKind::kFill) store.host_cache->policy().erase(sc.keys[i]);
    }
  };
  try {
    // Task 0 (handed out first) keeps the disk busy while the other threads copy.
    store.pool.parallel_for(0, num_tasks, 1, [&](int64_t task, int64_t) {
      const auto start = Clock::now();
      if (task == 0) {
        if (!sc.read_ids.empty()) {
          io_batch = store.storage->read(sc.read_ids, std::span<std::byte>(sc.staging.data(), sc.read_ids.size() * row_bytes));
        }
      } else if (task <= host_tasks) {
        const auto begin = static_cast<std::size_t>((task - 1) * rows_per_task);
        const std::size_t end = std::min(sc.host_pos.size(), begin + static_cast<std::size_t>(rows_per_task));
        for (std::size_t j = begin; j < end; ++j) {
          const auto k = static_cast<std::size_t>(sc.host_pos[j]);
          std::memcpy(out + k * row_bytes, store.host.row(ids[k]), row_bytes);
        }
      } else {
        const auto begin = static_cast<std::size_t>((task - 1 - host_tasks) * rows_per_task);
        const std::size_t end = std::min(sc.hit_entries.size(), begin + static_cast<std::size_t>(rows_per_task));
        for (std::size_t j = begin; j < end; ++j) {
          const auto i = static_cast<std::size_t>(sc.hit_entries[j]);
          std::memcpy(out + static_cast<std::size_t>(sc.store_pos[i]) * row_bytes, store.host_cache->line(sc.slots[i]),
                      row_bytes);
        }
      }
      sc.task_seconds[static_cast<std::size_t>(task)] = seconds_since(start);
    });
  } catch (...) {
    if (counts.fills > 0) fail_fills();
    throw;
  }

  // Staged rows to their output positions and to the lines they fill.
  const auto scatter_start = Clock::now();
  if (!sc.read_ids.empty()) {
    store.pool.parallel_for(0, static_cast<int64_t>(m), rows_per_task, [&](int64_t begin, int64_t end) {
      for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
        if (sc.stage_row[i] < 0) continue;
        const std::byte* row = sc.staging.data() + static_cast<std::size_t>(sc.stage_row[i]) * row_bytes;
        std::memcpy(out + static_cast<std::size_t>(sc.store_pos[i]) * row_bytes, row, row_bytes);
        if (sc.kinds[i] == cache::LookupKind::kFill) std::memcpy(store.host_cache->line(sc.slots[i]), row, row_bytes);
      }
    });
  }
  const double scatter_seconds = seconds_since(scatter_start);

  const auto rows_bytes = [&](std::size_t rows) {
    return TierStats{static_cast<int64_t>(rows), static_cast<int64_t>(rows * row_bytes), 0.0};
  };
  TierStats host = rows_bytes(sc.host_pos.size());
  TierStats hits = rows_bytes(sc.hit_entries.size());
  TierStats storage = rows_bytes(m - sc.hit_entries.size());
  storage.seconds = sc.task_seconds[0] + scatter_seconds;
  for (int64_t t = 1; t <= host_tasks; ++t) host.seconds += sc.task_seconds[static_cast<std::size_t>(t)];
  for (int64_t t = 1 + host_tasks; t < num_tasks; ++t) hits.seconds += sc.task_seconds[static_cast<std::size_t>(t)];
  stats.host += host;
  stats.host_cache += hits;
  stats.storage += storage;
  stats.cache_fills += counts.fills;
  if (store.host_cache && store.host_cache->num_lines() > 0) stats.cache_bypasses += counts.bypasses;
  stats.io += io_batch;
}

}  // namespace graphtier::feature::cpu
