// Front door of sampling on fetched rows: argument checks, then the same layer code as the
// single-process samplers (cpu/neighbor_sampler_cpu.cpp, cpu/layer_sampler_cpu.cpp,
// cpu/bulk_sampler_cpu.cpp) over the rows.
#include "graphtier/sample/row_sampling.hpp"

#include <algorithm>
#include <variant>

#include "graphtier/core/error.hpp"
#include "graphtier/sample/random.hpp"
#include "bulk_layers.hpp"
#include "bulk_matrices.hpp"
#include "cpu/bulk_sampler_cpu.hpp"
#include "cpu/layer_sampler_cpu.hpp"
#include "cpu/neighbor_sampler_cpu.hpp"
#include "cpu/row_access.hpp"

namespace graphtier::sample {

namespace cpu {

FetchedRows::FetchedRows(const NeighborRows& rows) : rows_(rows), slot_(static_cast<int64_t>(rows.nodes.size())) {
  const auto n = static_cast<int64_t>(rows.nodes.size());
  GRAPHTIER_EXPECTS(static_cast<int64_t>(rows.indptr.size()) == n + 1 && rows.indptr.front() == 0, InvalidArgument,
                    "neighbour rows: indptr has ", rows.indptr.size(), " entries, expected ", n + 1, " starting at 0");
  GRAPHTIER_EXPECTS(static_cast<int64_t>(rows.first_edge.size()) == n, InvalidArgument,
                    "neighbour rows: first_edge has ", rows.first_edge.size(), " entries, expected ", n);
  GRAPHTIER_EXPECTS(static_cast<int64_t>(rows.indices.size()) == rows.indptr.back(), InvalidArgument,
                    "neighbour rows: ", rows.indices.size(), " indices, indptr says ", rows.indptr.back());
  const auto check_id = [&](int64_t id, const char* what) {
    GRAPHTIER_EXPECTS(id >= 0 && id < kMaxSampleNodes, InvalidArgument, "neighbour rows: ", what, " ", id,
                      " is outside [0, 2^40)");
    id_bound_ = std::max(id_bound_, id + 1);
  };
  for (int64_t k = 0; k < n; ++k) {
    check_id(rows.nodes[k], "node");
    GRAPHTIER_EXPECTS(slot_.find_or_insert(rows.nodes[k], k) == k, InvalidArgument, "neighbour rows: node ",
                      rows.nodes[k], " has two rows");
    GRAPHTIER_EXPECTS(rows.indptr[k] <= rows.indptr[k + 1], InvalidArgument, "neighbour rows: indptr decreases at ", k);
    GRAPHTIER_EXPECTS(rows.first_edge[k] >= 0, InvalidArgument, "neighbour rows: first_edge[", k, "] is negative");
  }
  for (const int64_t u : rows.indices) check_id(u, "neighbour");
}

void FetchedRows::require(std::span<const int64_t> dst) const {
  IdMap seen(static_cast<int64_t>(dst.size()));
  for (std::size_t i = 0; i < dst.size(); ++i) {
    const int64_t v = dst[i];
    GRAPHTIER_EXPECTS(v >= 0 && slot_.find(v) >= 0, InvalidArgument, "dst node ", v, " has no row in the fetched rows");
    GRAPHTIER_EXPECTS(seen.find_or_insert(v, static_cast<int64_t>(i)) == static_cast<int64_t>(i), InvalidArgument,
                      "dst node ", v, " appears more than once");
  }
}

}  // namespace cpu

NeighborRows extract_rows(const graph::CscView& csc, std::span<const int64_t> nodes, int64_t edge_offset) {
  csc.check_shape("extract_rows graph");
  GRAPHTIER_EXPECTS(edge_offset >= 0, InvalidArgument, "extract_rows: edge_offset is ", edge_offset, ", expected >= 0");
  NeighborRows rows;
  rows.nodes.assign(nodes.begin(), nodes.end());
  rows.indptr.assign(nodes.size() + 1, 0);
  rows.first_edge.resize(nodes.size());
  cpu::IdMap seen(static_cast<int64_t>(nodes.size()));
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const int64_t v = nodes[k];
    GRAPHTIER_EXPECTS(v >= 0 && v < csc.num_nodes(), OutOfRange, "extract_rows: node ", v, " (position ", k,
                      ") is outside [0, ", csc.num_nodes(), ")");
    GRAPHTIER_EXPECTS(seen.find_or_insert(v, static_cast<int64_t>(k)) == static_cast<int64_t>(k), InvalidArgument,
                      "extract_rows: node ", v, " appears more than once");
    rows.indptr[k + 1] = rows.indptr[k] + csc.in_degree(v);
    rows.first_edge[k] = csc.indptr[v] + edge_offset;
  }
  rows.indices.resize(static_cast<std::size_t>(rows.indptr.back()));
  std::visit(
      [&](auto indices) {
        for (std::size_t k = 0; k < nodes.size(); ++k) {
          const int64_t begin = csc.indptr[nodes[k]];
          std::copy(indices.begin() + begin, indices.begin() + begin + (rows.indptr[k + 1] - rows.indptr[k]),
                    rows.indices.begin() + rows.indptr[k]);
        }
      },
      csc.indices);
  return rows;
}

namespace {

void check_draw_count(int64_t count, const char* what) {
  GRAPHTIER_EXPECTS(count >= -1 && count < kMaxDraws, InvalidArgument, what, " is ", count,
                    ": expected -1 (all), 0, or a count below 2^24");
}

}  // namespace

Block sample_neighbor_layer(const NeighborRows& rows, std::span<const int64_t> dst, int64_t fanout, bool replace,
                            bool edge_ids, uint64_t seed, uint64_t layer_stream, ThreadPool* pool) {
  check_draw_count(fanout, "fanout");
  const cpu::FetchedRows fetched(rows);
  fetched.require(dst);
  const cpu::DrawContext ctx{seed, layer_stream, fanout, replace, {}};
  return cpu::neighbor_layer(fetched, dst, ctx, edge_ids, pool);
}

Block sample_ladies_layer(const NeighborRows& rows, std::span<const int64_t> dst, int64_t layer_size, uint64_t seed,
                          uint64_t layer_stream, ThreadPool* pool) {
  check_draw_count(layer_size, "layer size");
  const cpu::FetchedRows fetched(rows);
  fetched.require(dst);
  return cpu::build_layer_block(fetched, dst, cpu::ladies_columns(fetched, dst, layer_size, seed, layer_stream), pool);
}

std::vector<Block> sample_bulk_layer(const NeighborRows& rows, std::span<const std::span<const int64_t>> dsts_per_batch,
                                     std::span<const uint64_t> streams, const BulkSamplerOptions& options_in,
                                     int layer, ThreadPool* pool) {
  check_bulk_options(options_in);
  const BulkSamplerOptions options = effective_bulk_options(options_in);
  GRAPHTIER_EXPECTS(layer >= 0 && static_cast<std::size_t>(layer) < options.fanouts.size(), InvalidArgument,
                    "bulk layer ", layer, " is outside the ", options.fanouts.size(), " layers of the fanouts");
  GRAPHTIER_EXPECTS(streams.size() == dsts_per_batch.size(), InvalidArgument, "bulk layer of ", dsts_per_batch.size(),
                    " batches got ", streams.size(), " streams (one per batch)");
  const cpu::FetchedRows fetched(rows);
  for (const std::span<const int64_t> dst : dsts_per_batch) fetched.require(dst);
  bulk::StackedFrontier frontier = bulk::stack_frontier(dsts_per_batch, streams, options, layer);
  frontier.matrix_rows.resize(frontier.nodes.size());
  for (std::size_t r = 0; r < frontier.nodes.size(); ++r) frontier.matrix_rows[r] = fetched.slot(frontier.nodes[r]);

  BulkMatrices m = build_bulk_matrices(rows, fetched.id_bound(), options.algorithm, pool);
  const int64_t f = options.fanouts[static_cast<std::size_t>(layer)];
  bulk::StackedDraws draws;
  if (options.algorithm == BulkAlgorithm::kLadies) {
    draws = cpu::ladies_layer(m, frontier, f, options.seed, pool);
  } else {
    cpu::add_row_units(m, rows.indptr, pool);
    draws = cpu::graphsage_layer(m, frontier, f, options.replace, options.seed, options.edge_ids, pool);
  }
  std::vector<Block> blocks(dsts_per_batch.size());
  std::vector<Block*> out(blocks.size());
  for (std::size_t b = 0; b < blocks.size(); ++b) out[b] = &blocks[b];
  bulk::compact_blocks(frontier, draws, options.edge_ids, out, pool);
  return blocks;
}

}  // namespace graphtier::sample
