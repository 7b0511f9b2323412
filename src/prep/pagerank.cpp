// Reverse PageRank and its weighted variant, Algorithm 1 of the data tiering paper
// (docs/references.md, Data tiering), as a pull over the transpose: each node sums its own
// out-neighbours' shares in ascending id order on one thread, so the scores are bit-for-bit the
// same for any pool size.
#include <cmath>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/prep/hotness.hpp"
#include "graphtier/prep/out_neighbours.hpp"
#include "parallel.hpp"

namespace graphtier::prep {
namespace {

constexpr int64_t kNodeGrain = int64_t{1} << 16;
constexpr int64_t kEdgeGrain = int64_t{1} << 16;

void check_inputs(const graph::CscView& csc, const OutNeighbours& out, const PageRankOptions& options) {
  csc.check_shape("reverse PageRank");
  GRAPHTIER_EXPECTS(out.num_nodes() == csc.num_nodes() && out.num_edges() == csc.num_edges(), InvalidArgument,
                    "reverse PageRank: the out-neighbour table (", out.num_nodes(), " nodes, ", out.num_edges(),
                    " edges) is not the transpose of the graph (", csc.num_nodes(), " nodes, ", csc.num_edges(), " edges)");
  GRAPHTIER_EXPECTS(options.iterations >= 0, InvalidArgument, "PageRank iterations must be >= 0, got ", options.iterations);
  GRAPHTIER_EXPECTS(options.damping >= 0 && options.damping <= 1, InvalidArgument, "PageRank damping must lie in [0, 1], got ",
                    options.damping);
  GRAPHTIER_EXPECTS(options.tolerance >= 0, InvalidArgument, "PageRank tolerance must be >= 0, got ", options.tolerance);
}

template <typename Index>
void iterate(const graph::CscView& csc, std::span<const int64_t> out_indptr, std::span<const Index> out_indices,
             const PageRankOptions& options, ThreadPool& pool, std::vector<double>& score, PageRankStats& stats) {
  const int64_t n = csc.num_nodes();
  const double base = (1.0 - options.damping) / static_cast<double>(n);
  const double d = options.damping;
  std::vector<double> share(static_cast<std::size_t>(n));
  const auto chunks = impl::balanced_bounds(out_indptr, 0, n, kEdgeGrain);
  const int64_t num_chunks = static_cast<int64_t>(chunks.size()) - 1;
  std::vector<double> chunk_change(static_cast<std::size_t>(num_chunks));
  Progress progress("reverse PageRank", options.iterations, "iterations");
  for (int it = 0; it < options.iterations; ++it) {
    // Lines 13-15: score / in_degree. A node without in-edges is nobody's out-neighbour, so its
    // share is never read; 0 keeps inf out of the array.
    pool.parallel_for(0, n, kNodeGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t j = lo; j < hi; ++j) {
        const int64_t deg = csc.in_degree(j);
        share[j] = deg > 0 ? score[j] / static_cast<double>(deg) : 0.0;
      }
    });
    // Line 16 pull_from_neighbor on the reversed graph, lines 17-19 damping.
    pool.parallel_for(0, num_chunks, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t c = lo; c < hi; ++c) {
        double change = 0;
        for (int64_t u = chunks[c]; u < chunks[c + 1]; ++u) {
          double sum = 0;
          for (int64_t e = out_indptr[u]; e < out_indptr[u + 1]; ++e) sum += share[static_cast<int64_t>(out_indices[e])];
          const double next = base + d * sum;
          change += std::fabs(next - score[u]);
          score[u] = next;
        }
        chunk_change[c] = change;
      }
    });
    double change = 0;
    for (double c : chunk_change) change += c;  // fixed order: reproducible
    stats.iterations = it + 1;
    stats.last_change = change;
    progress.add(1);
    if (options.tolerance > 0 && change < options.tolerance) break;
  }
  progress.finish();
}

std::vector<double> run(const graph::CscView& csc, const OutNeighbours& out, const PageRankOptions& options, ThreadPool& pool,
                        std::vector<double> score, PageRankStats* stats) {
  PageRankStats local;
  if (out.wide()) {
    iterate(csc, out.indptr(), out.indices64(), options, pool, score, local);
  } else {
    iterate(csc, out.indptr(), out.indices32(), options, pool, score, local);
  }
  if (stats != nullptr) *stats = local;
  return score;
}

}  // namespace

std::vector<double> reverse_pagerank(const graph::CscView& csc, const OutNeighbours& out, const PageRankOptions& options,
                                     ThreadPool& pool, PageRankStats* stats) {
  check_inputs(csc, out, options);
  const int64_t n = csc.num_nodes();
  std::vector<double> score(static_cast<std::size_t>(n), n > 0 ? 1.0 / static_cast<double>(n) : 0.0);
  return run(csc, out, options, pool, std::move(score), stats);
}

std::vector<double> weighted_reverse_pagerank(const graph::CscView& csc, const OutNeighbours& out,
                                              std::span<const int64_t> labeled, const PageRankOptions& options,
                                              ThreadPool& pool, PageRankStats* stats) {
  check_inputs(csc, out, options);
  GRAPHTIER_EXPECTS(!labeled.empty(), InvalidArgument,
                    "weighted reverse PageRank needs labeled (train) nodes; the list is empty (use rpr instead)");
  const int64_t n = csc.num_nodes();
  std::vector<double> score(static_cast<std::size_t>(n), 1.0 / static_cast<double>(n));
  // Lines 8-11: fewer labeled nodes, stronger bias toward them and their neighbourhoods.
  const double weight = static_cast<double>(n) / static_cast<double>(labeled.size());
  for (std::size_t i = 0; i < labeled.size(); ++i) {
    const int64_t v = labeled[i];
    if (v < 0 || v >= n) {
      throw OutOfRange(detail::concat("weighted reverse PageRank: labeled node id ", v, " at position ", i,
                                      " is out of range [0, ", n, ")"));
    }
    score[v] *= weight;
  }
  return run(csc, out, options, pool, std::move(score), stats);
}

}  // namespace graphtier::prep
