// The dynamic storage-access accumulator (§3.2 of GIDS, docs/references.md): how many upcoming
// minibatches one gather should serve so that the storage reads it issues reach the queue depth
// the device needs.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "graphtier/feature/feature_stats.hpp"

namespace graphtier::loader {

class Accumulator {
 public:
  /// `storage_begin`: the first id of the storage tier (ids below it are served by the GPU and
  /// host tiers and cost no read); `target_depth`: the reads to keep in flight (the store's
  /// io_depth); `max_merge`: the most minibatches one gather may serve.
  Accumulator(int64_t storage_begin, int target_depth, int max_merge)
      : storage_begin_(storage_begin), target_depth_(target_depth), max_merge_(max_merge) {}

  /// Reads expected of `input_nodes`: its ids in the storage range times the reads per such id
  /// observed so far (1 before the first gather): the share the dynamic caches absorb comes off.
  int64_t expected_reads(std::span<const int64_t> input_nodes) const;

  /// Accounts a finished gather of `ids` that issued `done.storage.rows` storage reads.
  void record(std::span<const int64_t> ids, const feature::GatherStats& done);

  /// True while another waiting minibatch should join a gather that already serves `merged`
  /// minibatches expecting `expected` reads: there are storage reads to batch (> 0), fewer than
  /// the depth, and room under max_merge.
  bool wants_more(int64_t expected, int merged) const noexcept {
    return expected > 0 && expected < target_depth_ && merged < max_merge_;
  }
  int target_depth() const noexcept { return target_depth_; }

 private:
  int64_t storage_begin_;
  int target_depth_;
  int max_merge_;
  int64_t storage_ids_ = 0;   // storage-range ids requested by the recorded gathers
  int64_t storage_reads_ = 0;  // rows those gathers read from storage
};

/// A typed dataset's accumulator: one Accumulator per node type with a feature table (each type's
/// store has its own storage tier and queue depth), since a merged gather reads the types one
/// after another. A gather grows while some type expects storage reads and none has reached its
/// store's depth: the type with the most reads fills its queue, and no type's is overrun.
class TypedAccumulator {
 public:
  /// types[t]: type t's accumulator (its ids local to it), or nullopt for a type without features.
  TypedAccumulator(std::vector<std::optional<Accumulator>> types, int max_merge)
      : types_(std::move(types)), max_merge_(max_merge) {}

  /// Adds to expected[t] (sized to the types) the reads expected of ids_by_type[t] (one list per
  /// type, ids local to it); types without features add nothing. Returns the sum added.
  int64_t add_expected(std::span<const std::vector<int64_t>> ids_by_type, std::span<int64_t> expected) const;

  /// Accounts type `type`'s finished gather (Accumulator::record).
  void record(int32_t type, std::span<const int64_t> ids, const feature::GatherStats& done);

  /// True while another waiting minibatch should join a gather that serves `merged` minibatches
  /// expecting expected[t] reads of each type.
  bool wants_more(std::span<const int64_t> expected, int merged) const noexcept;

 private:
  std::vector<std::optional<Accumulator>> types_;
  int max_merge_;
};

}  // namespace graphtier::loader
