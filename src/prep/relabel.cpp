// Parallel CSC relabeling (§3.2 of the data tiering paper, docs/references.md): new row offsets
// from the degrees in new order, then each new row is the old row of new_to_old[n] with every id
// looked up in old_to_new. Rows are built in windows of new ids, each window in parallel and then
// appended to the output, so the relabeled indices never need to be in memory at once.
#include <algorithm>
#include <variant>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/prep/reorder.hpp"
#include "parallel.hpp"

namespace graphtier::prep {
namespace {

constexpr int64_t kNodeGrain = int64_t{1} << 16;
constexpr int64_t kEdgeGrain = int64_t{1} << 16;

template <typename Index>
void write_indices(const graph::CscView& csc, std::span<const Index> in, const Permutation& perm,
                   std::span<const int64_t> new_indptr, OutputFile& out, ThreadPool& pool, Progress* progress,
                   int64_t window_edges) {
  const int64_t n = csc.num_nodes();
  const auto windows = impl::balanced_bounds(new_indptr, 0, n, window_edges);
  int64_t widest = 0;
  for (std::size_t w = 0; w + 1 < windows.size(); ++w) {
    widest = std::max(widest, new_indptr[windows[w + 1]] - new_indptr[windows[w]]);
  }
  std::vector<Index> buffer(static_cast<std::size_t>(widest));
  for (std::size_t w = 0; w + 1 < windows.size(); ++w) {
    const int64_t first = windows[w], last = windows[w + 1];
    const int64_t base = new_indptr[first];
    const auto chunks = impl::balanced_bounds(new_indptr, first, last, kEdgeGrain);
    pool.parallel_for(0, static_cast<int64_t>(chunks.size()) - 1, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t c = lo; c < hi; ++c) {
        for (int64_t v = chunks[c]; v < chunks[c + 1]; ++v) {
          const int64_t old = perm.new_to_old[v];
          Index* dst = buffer.data() + (new_indptr[v] - base);
          for (int64_t e = csc.indptr[old]; e < csc.indptr[old + 1]; ++e) {
            *dst++ = static_cast<Index>(perm.old_to_new[static_cast<int64_t>(in[e])]);
          }
        }
      }
    });
    const int64_t count = new_indptr[last] - base;
    out.write(buffer.data(), static_cast<std::size_t>(count) * sizeof(Index));
    if (progress != nullptr) progress->add(count);
  }
}

}  // namespace

void write_relabeled_csc(const graph::CscView& csc, const Permutation& perm, OutputFile& indptr_out, OutputFile& indices_out,
                         ThreadPool& pool, Progress* progress, int64_t window_edges) {
  csc.check_shape("write_relabeled_csc");
  const int64_t n = csc.num_nodes();
  GRAPHTIER_EXPECTS(perm.size() == n && static_cast<int64_t>(perm.old_to_new.size()) == n, InvalidArgument,
                    "write_relabeled_csc: permutation of ", perm.size(), " nodes for a graph of ", n);
  std::vector<int64_t> new_indptr(static_cast<std::size_t>(n) + 1, 0);
  pool.parallel_for(0, n, kNodeGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) new_indptr[v] = csc.in_degree(perm.new_to_old[v]);
  });
  impl::exclusive_scan(new_indptr, pool);
  indptr_out.write_span(std::span<const int64_t>(new_indptr));
  std::visit([&](auto in) { write_indices(csc, in, perm, new_indptr, indices_out, pool, progress, window_edges); },
             csc.indices);
}

namespace {

template <typename T>
void relabel_edge_values(const graph::CscView& csc, std::span<const T> values, const Permutation& perm,
                         OutputFile& out) {
  csc.check_shape("write_relabeled_edge_values");
  GRAPHTIER_EXPECTS(static_cast<int64_t>(values.size()) == csc.num_edges(), InvalidArgument,
                    "write_relabeled_edge_values: ", values.size(), " values for ", csc.num_edges(), " edges");
  GRAPHTIER_EXPECTS(perm.size() == csc.num_nodes(), InvalidArgument, "write_relabeled_edge_values: permutation of ",
                    perm.size(), " nodes for a graph of ", csc.num_nodes());
  // Rows are copied in order, through a bounded buffer.
  constexpr std::size_t kBuffer = std::size_t{1} << 20;
  std::vector<T> buffer;
  buffer.reserve(kBuffer);
  for (int64_t v = 0; v < perm.size(); ++v) {
    const int64_t old = perm.new_to_old[static_cast<std::size_t>(v)];
    for (int64_t e = csc.indptr[old]; e < csc.indptr[old + 1]; ++e) {
      buffer.push_back(values[static_cast<std::size_t>(e)]);
      if (buffer.size() == kBuffer) {
        out.write_span(std::span<const T>(buffer));
        buffer.clear();
      }
    }
  }
  out.write_span(std::span<const T>(buffer));
}

}  // namespace

void write_relabeled_edge_values(const graph::CscView& csc, std::span<const uint8_t> values, const Permutation& perm,
                                 OutputFile& out) {
  relabel_edge_values(csc, values, perm, out);
}

void write_relabeled_edge_values(const graph::CscView& csc, std::span<const int64_t> values, const Permutation& perm,
                                 OutputFile& out) {
  relabel_edge_values(csc, values, perm, out);
}

}  // namespace graphtier::prep
