// Per-node arrays of a converted dataset: features (streamed, converted to the output dtype and
// padded to the row stride), labels and split id lists, from .npy arrays or OGB-style CSV text.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "byte_source.hpp"
#include "npy_array.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/dataset.hpp"

namespace graphtier::graph::detail {

/// Streams rows [0, num_rows) of a 2-D C-order numeric array into `out` with `layout` (whose dim
/// must match the array's). Reading, converting and writing overlap; memory stays at a few
/// chunks of about `chunk_bytes`. Returns the bytes written.
int64_t write_features_npy(OutputFile& out, const NpyArray& array, int64_t num_rows, const FeatureLayout& layout,
                           int64_t chunk_bytes, ThreadPool& pool);

/// Parses comma-separated numbers, one row per line (OGB node-feat.csv), into `out`. The
/// dimension is the number of fields on the first line; every line must have as many, and there
/// must be exactly `num_rows` lines. Empty fields are NaN, as pandas reads them. Returns the layout.
/// `before_writing(layout)`, if given, sees the layout once the first line has set it, before
/// anything is written (for the free-space check).
FeatureLayout write_features_csv(OutputFile& out, const ByteSource& source, int64_t num_rows, DType dtype,
                                 int64_t alignment, ThreadPool& pool,
                                 const std::function<void(const FeatureLayout&)>& before_writing = {});

/// Labels from an array of shape [N] or [N, 1] of any numeric type (N = num_nodes): NaN or -1
/// is unlabeled (-1); other values must be integers in [0, 2^31).
std::vector<int32_t> read_labels_npy(const NpyArray& array, int64_t num_nodes);

/// Labels from text, one per line (OGB node-label.csv): an empty line, "nan" or -1 is unlabeled.
std::vector<int32_t> read_labels_csv(const ByteSource& source, int64_t num_nodes, ThreadPool& pool);

/// Node ids from an integer array of shape [K] or [K, 1], or the set positions of a bool mask of
/// shape [num_nodes].
std::vector<int64_t> read_split_npy(const NpyArray& array, int64_t num_nodes);

/// Node ids from text, one per line (OGB split/*/train.csv).
std::vector<int64_t> read_split_csv(const ByteSource& source, ThreadPool& pool);

/// Timestamps from text, one integer per line (OGB node_year.csv); a line that is not one
/// integer is a FormatError naming "path:line".
std::vector<int64_t> read_times_csv(const ByteSource& source, ThreadPool& pool);

/// The edge times of an edge list whose lines are `src dst time` (EdgeListInput::edge_time), in
/// the CSC order write_csc gives the same edges with `symmetrize` and `keep_self_loops`: by column,
/// then source, a repeated edge (and, symmetrized, an edge given both ways) once, at its earliest
/// time. Holds the edges in memory (24 bytes each). A line without an integer third field is a
/// FormatError naming "path:line".
std::vector<int64_t> read_edge_list_times(const ByteSource& source, bool symmetrize, bool keep_self_loops,
                                          ThreadPool& pool);

/// Throws FormatError naming `name` if an id is outside [0, num_nodes) or appears twice.
void check_split(std::span<const int64_t> ids, int64_t num_nodes, const std::string& name);

}  // namespace graphtier::graph::detail
