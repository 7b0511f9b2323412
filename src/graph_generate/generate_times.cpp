// Timestamps of a growing graph (generate.hpp, Timestamps): node times are a function of the id,
// edge times of the CSC just written, streamed a range of columns at a time.
#include <algorithm>
#include <vector>

#include "generate_stages.hpp"

namespace graphtier::graph::detail::generate {
namespace {

// Nodes (node_time) or columns (edge_time) per chunk: a few MiB of buffer, many tasks.
constexpr int64_t kTimeChunk = int64_t{1} << 18;
constexpr int64_t kTimeGrain = int64_t{1} << 12;

template <typename Index>
void write_edge_times(OutputFile& out, std::span<const int64_t> indptr, std::span<const Index> indices,
                      const ArrivalTimes& times, int64_t n, ThreadPool& pool) {
  std::vector<int64_t> buffer;
  for (int64_t lo = 0; lo < n; lo += kTimeChunk) {
    const int64_t hi = std::min(n, lo + kTimeChunk);
    const int64_t base = indptr[static_cast<std::size_t>(lo)];
    buffer.resize(static_cast<std::size_t>(indptr[static_cast<std::size_t>(hi)] - base));
    pool.parallel_for(lo, hi, kTimeGrain, [&](int64_t a, int64_t b) {
      for (int64_t v = a; v < b; ++v) {
        const int64_t tv = times.of(v);
        for (int64_t p = indptr[static_cast<std::size_t>(v)]; p < indptr[static_cast<std::size_t>(v + 1)]; ++p) {
          const int64_t tu = times.of(static_cast<int64_t>(indices[static_cast<std::size_t>(p)]));
          buffer[static_cast<std::size_t>(p - base)] = std::max(tu, tv);
        }
      }
    });
    out.write_span(std::span<const int64_t>(buffer));
  }
}

}  // namespace

void write_times(DatasetWriter& writer, const ArrivalTimes& times, int64_t n, DType index_dtype, ThreadPool& pool) {
  OutputFile& node_out = writer.open_array("node_time");
  std::vector<int64_t> buffer;
  for (int64_t lo = 0; lo < n; lo += kTimeChunk) {
    const int64_t hi = std::min(n, lo + kTimeChunk);
    buffer.resize(static_cast<std::size_t>(hi - lo));
    pool.parallel_for(lo, hi, kTimeGrain, [&](int64_t a, int64_t b) {
      for (int64_t v = a; v < b; ++v) buffer[static_cast<std::size_t>(v - lo)] = times.of(v);
    });
    node_out.write_span(std::span<const int64_t>(buffer));
  }
  const MappedFile indptr = writer.map_array("indptr");
  const MappedFile indices = writer.map_array("indices");
  OutputFile& edge_out = writer.open_array("edge_time");
  if (index_dtype == DType::kInt32) {
    write_edge_times(edge_out, indptr.as<int64_t>(), indices.as<int32_t>(), times, n, pool);
  } else {
    write_edge_times(edge_out, indptr.as<int64_t>(), indices.as<int64_t>(), times, n, pool);
  }
}

}  // namespace graphtier::graph::detail::generate
