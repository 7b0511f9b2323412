// Front door of sampling on fetched rows: argument checks, then the same layer code as the
// single-process samplers (cpu/neighbor_sampler_cpu.cpp, cpu/layer_sampler_cpu.cpp,
// cpu/bulk_sampler_cpu.cpp) over the rows.
#include "graphtier/sample/row_sampling.hpp"

#include <algorithm>
#include <numeric>
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

/// draw_rows' and draw_bulk_rows' checks of the requests (`what` names the function).
void check_draw_requests(const graph::CscView& csc, int64_t edge_offset, std::span<const int64_t> nodes,
                         std::span<const int64_t> segment_sizes, std::span<const uint64_t> layer_streams,
                         int64_t fanout, const char* what) {
  csc.check_shape(what);
  check_draw_count(fanout, "fanout");
  GRAPHTIER_EXPECTS(edge_offset >= 0, InvalidArgument, what, ": edge_offset is ", edge_offset, ", expected >= 0");
  GRAPHTIER_EXPECTS(segment_sizes.size() == layer_streams.size(), InvalidArgument, what, ": ", segment_sizes.size(),
                    " segments, ", layer_streams.size(), " streams (one per segment)");
  int64_t total = 0;
  for (const int64_t size : segment_sizes) {
    GRAPHTIER_EXPECTS(size >= 0, InvalidArgument, what, ": a segment of ", size, " requests");
    total += size;
  }
  GRAPHTIER_EXPECTS(total == static_cast<int64_t>(nodes.size()), InvalidArgument, what, ": the segments hold ", total,
                    " requests, ", nodes.size(), " nodes were given");
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    GRAPHTIER_EXPECTS(nodes[k] >= 0 && nodes[k] < csc.num_nodes(), OutOfRange, what, ": node ", nodes[k],
                      " (request ", k, ") is outside [0, ", csc.num_nodes(), ")");
  }
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

RowDraws draw_rows(const graph::CscView& csc, int64_t edge_offset, std::span<const int64_t> nodes,
                   std::span<const int64_t> segment_sizes, std::span<const uint64_t> layer_streams, int64_t fanout,
                   bool replace, uint64_t seed, ThreadPool* pool) {
  check_draw_requests(csc, edge_offset, nodes, segment_sizes, layer_streams, fanout, "draw_rows");
  RowDraws out;
  out.counts.reserve(nodes.size());
  int64_t first = 0;
  for (std::size_t s = 0; s < segment_sizes.size(); ++s) {
    const std::span<const int64_t> segment = nodes.subspan(static_cast<std::size_t>(first),
                                                           static_cast<std::size_t>(segment_sizes[s]));
    first += segment_sizes[s];
    const cpu::DrawContext ctx{seed, layer_streams[s], fanout, replace, {}};
    const cpu::NeighborDraws draws = cpu::neighbor_draws(csc, edge_offset, segment, ctx, pool);
    for (std::size_t i = 0; i < segment.size(); ++i) out.counts.push_back(draws.indptr[i + 1] - draws.indptr[i]);
    out.neighbors.insert(out.neighbors.end(), draws.ids.begin(), draws.ids.end());
    out.edge_ids.insert(out.edge_ids.end(), draws.positions.begin(), draws.positions.end());
  }
  return out;
}

RowDraws draw_bulk_rows(const graph::CscView& csc, int64_t edge_offset, std::span<const int64_t> nodes,
                        std::span<const int64_t> segment_sizes, std::span<const uint64_t> layer_streams,
                        int64_t fanout, bool replace, uint64_t seed, ThreadPool* pool) {
  check_draw_requests(csc, edge_offset, nodes, segment_sizes, layer_streams, fanout, "draw_bulk_rows");
  // The matrices of the distinct nodes asked for, as sample_bulk_layer builds them from the rows
  // a requester fetches: the same merged entries and first positions, so the same draws.
  std::vector<int64_t> distinct(nodes.begin(), nodes.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  const NeighborRows rows = extract_rows(csc, distinct, edge_offset);
  BulkMatrices m = build_bulk_matrices(rows, csc.num_nodes(), BulkAlgorithm::kGraphSage, pool);
  cpu::add_row_units(m, rows.indptr, pool);

  bulk::StackedFrontier frontier;
  frontier.nodes.assign(nodes.begin(), nodes.end());
  frontier.offsets.assign(segment_sizes.size() + 1, 0);
  std::partial_sum(segment_sizes.begin(), segment_sizes.end(), frontier.offsets.begin() + 1);
  frontier.layer_streams.assign(layer_streams.begin(), layer_streams.end());
  frontier.matrix_rows.resize(nodes.size());
  for (std::size_t r = 0; r < nodes.size(); ++r) {
    frontier.matrix_rows[r] = std::lower_bound(distinct.begin(), distinct.end(), nodes[r]) - distinct.begin();
  }
  bulk::StackedDraws draws = cpu::graphsage_layer(m, frontier, fanout, replace, seed, /*edge_ids=*/true, pool);
  RowDraws out;
  out.counts.resize(nodes.size());
  for (std::size_t r = 0; r < nodes.size(); ++r) out.counts[r] = draws.indptr[r + 1] - draws.indptr[r];
  out.neighbors = std::move(draws.nodes);
  out.edge_ids = std::move(draws.edge_ids);
  return out;
}

std::vector<Block> neighbor_blocks_of_draws(std::span<const std::span<const int64_t>> dsts_per_batch,
                                            std::span<const int64_t> request_nodes,
                                            std::span<const int64_t> request_batches, const RowDraws& draws,
                                            bool edge_ids) {
  const std::size_t n = request_nodes.size();
  GRAPHTIER_EXPECTS(request_batches.size() == n && draws.counts.size() == n, InvalidArgument, "draws of ", n,
                    " requests have ", request_batches.size(), " batch indices and ", draws.counts.size(), " counts");
  GRAPHTIER_EXPECTS(draws.neighbors.size() == draws.edge_ids.size(), InvalidArgument, "draws: ",
                    draws.neighbors.size(), " neighbours, ", draws.edge_ids.size(), " edge ids");
  const auto k = static_cast<int64_t>(dsts_per_batch.size());
  std::vector<int64_t> start(n + 1, 0);  // request i's picks: [start[i], start[i + 1])
  std::vector<cpu::IdMap> request_of;    // per batch: node -> request
  std::vector<int64_t> per_batch(static_cast<std::size_t>(k), 0);
  for (std::size_t i = 0; i < n; ++i) {
    GRAPHTIER_EXPECTS(draws.counts[i] >= 0, InvalidArgument, "draws: request ", i, " has ", draws.counts[i], " picks");
    GRAPHTIER_EXPECTS(request_batches[i] >= 0 && request_batches[i] < k, InvalidArgument, "draws: request ", i,
                      " is of batch ", request_batches[i], ", outside the ", k, " batches");
    start[i + 1] = start[i] + draws.counts[i];
    ++per_batch[static_cast<std::size_t>(request_batches[i])];
  }
  GRAPHTIER_EXPECTS(start[n] == static_cast<int64_t>(draws.neighbors.size()), InvalidArgument,
                    "draws: the counts add up to ", start[n], " picks, ", draws.neighbors.size(), " were given");
  for (const int64_t size : per_batch) request_of.emplace_back(size);
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t v = request_nodes[i];
    GRAPHTIER_EXPECTS(v >= 0 && v < kMaxSampleNodes, InvalidArgument, "draws: request ", i, " names node ", v);
    cpu::IdMap& of_batch = request_of[static_cast<std::size_t>(request_batches[i])];
    GRAPHTIER_EXPECTS(of_batch.find_or_insert(v, static_cast<int64_t>(i)) == static_cast<int64_t>(i), InvalidArgument,
                      "draws: node ", v, " of batch ", request_batches[i], " was requested twice");
  }
  std::vector<Block> blocks;
  blocks.reserve(dsts_per_batch.size());
  std::vector<char> used(n, 0);
  for (int64_t b = 0; b < k; ++b) {
    const std::span<const int64_t> dst = dsts_per_batch[static_cast<std::size_t>(b)];
    cpu::NeighborDraws picks;
    picks.indptr.assign(dst.size() + 1, 0);
    for (std::size_t j = 0; j < dst.size(); ++j) {
      const int64_t i = dst[j] >= 0 ? request_of[static_cast<std::size_t>(b)].find(dst[j]) : -1;
      GRAPHTIER_EXPECTS(i >= 0, InvalidArgument, "dst node ", dst[j], " of batch ", b, " has no draws");
      GRAPHTIER_EXPECTS(!used[static_cast<std::size_t>(i)], InvalidArgument, "dst node ", dst[j], " of batch ", b,
                        " appears more than once");
      used[static_cast<std::size_t>(i)] = 1;
      picks.ids.insert(picks.ids.end(), draws.neighbors.begin() + start[i], draws.neighbors.begin() + start[i + 1]);
      picks.positions.insert(picks.positions.end(), draws.edge_ids.begin() + start[i],
                             draws.edge_ids.begin() + start[i + 1]);
      picks.indptr[j + 1] = static_cast<int64_t>(picks.ids.size());
    }
    GRAPHTIER_EXPECTS(static_cast<int64_t>(dst.size()) == per_batch[static_cast<std::size_t>(b)], InvalidArgument,
                      "batch ", b, " has ", dst.size(), " dst nodes and ", per_batch[static_cast<std::size_t>(b)],
                      " requests (one for a node outside its dst nodes)");
    blocks.push_back(cpu::block_of_draws(dst, std::move(picks), edge_ids));
  }
  return blocks;
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
