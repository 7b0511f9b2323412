// Writing the feature table in the new node order, in bounded memory even when it exceeds RAM.
//
// Rows are opaque byte strings of `row_stride` bytes (any dtype, padding included), copied whole.
// A table within the memory budget is read into memory sequentially and gathered; a larger one
// takes an external two-pass bucket permutation:
//   pass 1 reads the source sequentially with large preads (no mmap, so RSS stays bounded) and
//          appends each row to the bucket of its destination, where bucket b holds the contiguous
//          new ids [b * R, (b + 1) * R) and R rows fit the budget; buckets are regions of one
//          scratch file, filled through per-bucket buffers;
//   pass 2 loads one bucket at a time, releases its disk blocks (hole punching), places its rows
//          in new order and appends them to the output.
// Disk traffic: the table is read twice and written twice; scratch space is one table, freed as
// pass 2 goes. The output is byte-identical either way.
#pragma once

#include <cstdint>
#include <string>

#include "graphtier/core/file.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/prep/reorder.hpp"

namespace graphtier::prep {

/// min(25% of physical memory, 1 GiB). Larger buckets were slower, not faster: every bucket byte
/// is first-touched memory, and pass 2 gathers from it at random (docs/benchmarks.md).
int64_t default_memory_budget();

struct FeaturePermuteOptions {
  /// Bytes of feature rows held in memory at once (the whole table, or one bucket); 0: the
  /// default. I/O buffers of at most 64 MiB (or one row per bucket, if more) come on top, as do
  /// the int64 [N] position array of the external path and the permutation itself.
  int64_t memory_budget = 0;
  /// Directory for the scratch file of the external path (e.g. DatasetWriter::temp_dir()); the
  /// file is removed before returning, also on error.
  std::string scratch_dir;
};

struct FeaturePermuteReport {
  bool external = false;
  int64_t buckets = 0;       // external path only
  int64_t bytes = 0;         // table size
  double pass1_seconds = 0;  // read (in memory) or bucketing (external)
  double pass2_seconds = 0;  // gather and write
};

/// Writes the rows of the file `source_path` (perm.size() rows of `row_stride` bytes) to `out` so
/// that out row n is source row perm.new_to_old[n]. Throws FormatError if the file is shorter,
/// IoError on I/O failure.
FeaturePermuteReport permute_feature_rows(const std::string& source_path, int64_t row_stride, const Permutation& perm,
                                          OutputFile& out, const FeaturePermuteOptions& options, ThreadPool& pool);

}  // namespace graphtier::prep
