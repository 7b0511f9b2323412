// The layer loop of GPU neighbour sampling: count pass (edges per dst node) -> scan (CUB) -> fill
// pass (edge positions and global neighbour ids) -> hash unique-and-compact. Twin of the host
// loop in ../neighbor_sampler.cpp.
//
// One synchronisation per minibatch (cuda_neighbor_sampler.hpp): the host sizes every array by
// the upper bounds of nbr::layer_bound and never waits for a layer's real sizes. They stay in
// device memory (one LayerCounts per layer), the kernels read them there, launched over the
// bounds and exiting early past the real sizes, CUB scans run over the bounds with zero tails,
// and the host reads every layer's sizes at the end in one asynchronous copy to pinned memory.
// A layer of fanout -1 has no bound short of the graph's edge count: the host reads its real
// sizes once, before its fill pass (one more synchronisation per such layer).
//
// Hubs: the count pass appends the nodes that nbr::cost_grows_with_degree and whose degree is at
// least nbr::kHubDegree to a device list (atomic); kernels of a fixed grid, one block per list
// entry, read the list's length from device memory and sample those nodes (the warp kernels skip
// them).
#include <algorithm>
#include <cstring>
#include <exception>
#include <tuple>
#include <utility>
#include <vector>
#include <cub/device/device_scan.cuh>

#include "graphtier/core/error.hpp"
#include "cuda/compact_cuda.cuh"
#include "cuda/cuda_util.cuh"
#include "cuda/device_topology_cuda.hpp"
#include "cuda/neighbor_draws_cuda.cuh"
#include "cuda/neighbor_sampler_cuda.hpp"
#include "cuda/sampler_call_cuda.cuh"
#include "cuda/topology_ref.cuh"
#include "current_device.cuh"
#include "hetero_steps.hpp"
#include "memory_cuda.hpp"
#include "neighbor_steps.hpp"

namespace graphtier::sample::cuda {
namespace {

constexpr int kWarpsPerBlock = kThreads / kWarp;
/// The last layer's src nodes into page-locked host memory (mapped): as many as the device counted.
__global__ void copy_input_nodes_kernel(const int64_t* src_nodes, const LayerCounts* last, int64_t* host) {
  const int64_t n = last->num_src;
  GRAPHTIER_GRID_STRIDE(i, n) { host[i] = src_nodes[i]; }
}

__global__ void init_counts_kernel(LayerCounts* counts, int layers, int64_t nd0) {
  for (int l = 0; l < layers; ++l) counts[l] = LayerCounts{l == 0 ? nd0 : 0, 0, 0, 0};
}

/// A layer's relations as its kernels see them. Untyped: one row per dst node (its column, the
/// layer's DrawParams). Typed: `count` rows per dst node (hetero_steps.hpp's typed_row), row k
/// relation r's segment of its node's column, drawn with fanouts[r] from relation_stream(layer
/// stream, r), as the CPU's draw_relations does.
struct LayerRelations {
  int count = 1;                      // rows per dst node
  const int64_t* fanouts = nullptr;   // [count] this layer's fanout per relation (device); null: untyped
};

/// What one row samples: dst slot w, node v, its edges [begin, end), and the draw's parameters.
struct Row {
  int64_t w;
  int64_t v;
  int64_t begin;
  int64_t end;
  int relation;
  DrawParams c;
};

template <typename Index>
__device__ __forceinline__ Row row_at(const TopologyRef<Index>& g, const DrawParams& layer, const LayerRelations& rel,
                                      const int64_t* dst, int64_t k) {
  Row row;
  row.c = layer;
  row.relation = 0;
  row.w = k;
  if (rel.fanouts != nullptr) typed::typed_row(k, rel.count, &row.w, &row.relation);
  row.v = dst[row.w];
  row.begin = g.indptr[row.v];
  row.end = g.indptr[row.v + 1];
  if (rel.fanouts != nullptr) {
    // Binary searches over the column's relation ids (~2 log d reads), hot or cold like the indices.
    typed::relation_segment_at([&g](int64_t p) { return g.type(p); }, row.begin, row.end, row.relation, &row.begin,
                               &row.end);
    row.c.fanout = rel.fanouts[row.relation];
    row.c.layer_stream = relation_stream(layer.layer_stream, row.relation);
  }
  return row;
}

/// counts[k] for every row k < rows_bound (zero past the real rows, so the scan can run over the
/// bound); hubs go to the hub list, and weighted hubs are counted by hub_count_kernel.
template <typename Index>
__global__ void __launch_bounds__(kThreads) count_kernel(TopologyRef<Index> g, DrawParams c, LayerRelations rel,
                                                         const int64_t* dst, LayerCounts* n, int64_t rows_bound,
                                                         int64_t* counts, int64_t* indptr, int64_t* hubs) {
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t rows = n->nd * rel.count;
  if (blockIdx.x == 0 && threadIdx.x == 0) indptr[0] = 0;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp; k < rows_bound; k += warps) {
    if (k >= rows) {
      if (lane == 0) counts[k] = 0;
      continue;
    }
    const Row r = row_at(g, c, rel, dst, k);
    const int64_t d = r.end - r.begin;
    if (is_hub(r.c, d)) {
      if (lane == 0) {
        hubs[append(&n->hubs)] = k;
        counts[k] = r.c.weighted ? 0 : sample_count(r.c, d, d);
      }
      continue;
    }
    const int64_t positive = r.c.weighted && r.c.fanout != 0 ? count_positive(g, r.begin, r.end, lane) : d;
    if (lane == 0) counts[k] = sample_count(r.c, d, positive);
  }
}

/// count_kernel for an unweighted layer (nbr::count_per_thread): a row's count needs only its
/// degree, two loads of indptr (and a typed row's segment search), so one thread per row (a warp
/// would leave 31 lanes idle).
template <typename Index>
__global__ void __launch_bounds__(kThreads) count_unweighted_kernel(TopologyRef<Index> g, DrawParams c,
                                                                    LayerRelations rel, const int64_t* dst,
                                                                    LayerCounts* n, int64_t rows_bound,
                                                                    int64_t* counts, int64_t* indptr, int64_t* hubs) {
  const int64_t rows = n->nd * rel.count;
  if (blockIdx.x == 0 && threadIdx.x == 0) indptr[0] = 0;
  GRAPHTIER_GRID_STRIDE(k, rows_bound) {
    if (k >= rows) {
      counts[k] = 0;
      continue;
    }
    const Row r = row_at(g, c, rel, dst, k);
    const int64_t d = r.end - r.begin;
    if (is_hub(r.c, d)) hubs[append(&n->hubs)] = k;
    counts[k] = sample_count(r.c, d, d);
  }
}

template <typename Index>
__global__ void __launch_bounds__(kThreads) hub_count_kernel(TopologyRef<Index> g, DrawParams c, LayerRelations rel,
                                                             const int64_t* dst, const LayerCounts* n,
                                                             const int64_t* hubs, int64_t* counts) {
  __shared__ BlockScratch s;
  const int64_t num_hubs = n->hubs;
  for (int64_t h = blockIdx.x; h < num_hubs; h += gridDim.x) {
    const int64_t k = hubs[h];
    const Row r = row_at(g, c, rel, dst, k);
    const int64_t positive = block_count_positive(g, r.begin, r.end, s);
    if (threadIdx.x == 0) counts[k] = sample_count(r.c, r.end - r.begin, positive);
  }
}

/// Also empties the part of the layer's compaction table that its real sizes use (compact_clear:
/// the sizes are known here, from the scanned row offsets), saving the clearing kernel's launch.
/// Typed: also writes the block's indptr (the row offsets at each dst node's first row) and every
/// row's relation id into edge_types.
template <typename Index>
__global__ void __launch_bounds__(kThreads) fill_kernel(TopologyRef<Index> g, DrawParams c, LayerRelations rel,
                                                        const int64_t* dst, LayerCounts* layer, int64_t nd_bound,
                                                        const int64_t* out_indptr, int64_t* positions,
                                                        int64_t* neighbours, CompactBuffers table, int64_t* indptr,
                                                        uint8_t* edge_types) {
  __shared__ WarpScratch scratch[kWarpsPerBlock];
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  WarpScratch& s = scratch[threadIdx.x / kWarp];
  const int64_t nd = layer->nd < nd_bound ? layer->nd : nd_bound;
  const int64_t rows = nd * rel.count;
  if (blockIdx.x == 0 && threadIdx.x == 0) layer->ne = out_indptr[rows];
  compact_clear(table, nd, out_indptr[rows]);
  if (rel.fanouts != nullptr) {
    GRAPHTIER_GRID_STRIDE(w, nd + 1) { indptr[w] = out_indptr[w * rel.count]; }
  }
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp; k < rows; k += warps) {
    const int64_t out = out_indptr[k];
    const int64_t n = out_indptr[k + 1] - out;
    if (n == 0) continue;  // warp-uniform
    const Row r = row_at(g, c, rel, dst, k);
    if (edge_types != nullptr) {
      for (int64_t i = lane; i < n; i += kWarp) edge_types[out + i] = static_cast<uint8_t>(r.relation);
    }
    const int64_t v = r.v, begin = r.begin, end = r.end, d = end - begin;
    const DrawParams& rc = r.c;
    if (is_hub(rc, d)) continue;  // hub_fill_kernel's
    int64_t* pos = positions + out;
    int64_t* nbr = neighbours + out;
    if (!rc.weighted) {
      if (rc.fanout < 0 || (!rc.replace && n == d)) {
        all_edges(g, begin, d, pos, nbr, lane);
      } else if (rc.replace) {
        uniform_repeated(g, rc, v, begin, d, n, pos, nbr, lane);
      } else if (n <= kWarp) {
        floyd_warp(g, rc, v, begin, d, static_cast<int>(n), pos, nbr, lane);
      } else {
        floyd_serial(g, rc, v, begin, d, n, pos, nbr, lane);
      }
    } else if (rc.replace && rc.fanout > 0) {
      weighted_repeated(g, rc, v, begin, end, n, pos, nbr, lane, s);
    } else if (n == count_positive(g, begin, end, lane)) {
      positive_edges(g, begin, end, pos, nbr, lane);
    } else {
      weighted_distinct(g, rc, begin, end, n, pos, nbr, lane, s);
    }
    __syncwarp();  // the next row reuses the warp's scratch
  }
}

/// The hubs' draws, one block per hub row: the same paths as fill_kernel, block-wide.
template <typename Index>
__global__ void __launch_bounds__(kThreads) hub_fill_kernel(TopologyRef<Index> g, DrawParams c, LayerRelations rel,
                                                            const int64_t* dst, const LayerCounts* layer,
                                                            const int64_t* hubs, const int64_t* out_indptr,
                                                            int64_t* positions, int64_t* neighbours) {
  __shared__ BlockScratch s;
  const int64_t num_hubs = layer->hubs;
  for (int64_t h = blockIdx.x; h < num_hubs; h += gridDim.x) {
    const int64_t k = hubs[h];
    const int64_t out = out_indptr[k];
    const int64_t n = out_indptr[k + 1] - out;
    if (n == 0) continue;  // block-uniform
    const Row r = row_at(g, c, rel, dst, k);
    const int64_t v = r.v, begin = r.begin, end = r.end, d = end - begin;
    const DrawParams& rc = r.c;
    int64_t* pos = positions + out;
    int64_t* nbr = neighbours + out;
    if (!rc.weighted) {
      block_all_edges(g, begin, d, pos, nbr);  // the only unweighted hub path
    } else if (rc.replace && rc.fanout > 0) {
      block_weighted_repeated(g, rc, v, begin, end, n, pos, nbr, s);
    } else if (n == block_count_positive(g, begin, end, s)) {
      block_positive_edges(g, begin, end, pos, nbr, s);
    } else {
      block_weighted_distinct(g, rc, begin, end, n, pos, nbr, s);
    }
    __syncthreads();  // the next hub reuses the block's scratch
  }
}

/// Everything one call allocates once and reuses across its layers (stream-ordered).
struct Workspace {
  explicit Workspace(cudaStream_t s)
      : counts(s), positions(s), neighbours(s), hubs(s), row_offsets(s), upload(s), keys(s), firsts(s),
        slot_of(s), new_rank(s), cub_temp(s), layers(s) {}
  DeviceScratch<int64_t> counts, positions, neighbours, hubs;
  DeviceScratch<int64_t> row_offsets;  // typed layers: the scan of the (dst node, relation) rows' counts
  DeviceScratch<int64_t> upload;       // the seeds, then a typed graph's fanout table
  DeviceScratch<unsigned long long> keys, firsts;
  DeviceScratch<uint32_t> slot_of;
  DeviceScratch<int64_t> new_rank;
  DeviceScratch<unsigned char> cub_temp;
  DeviceScratch<LayerCounts> layers;
};

/// What every layer of one call shares: the call's inputs, its stream and workspace, the batch it
/// fills, and the pinned words of a fanout -1 layer's early read.
template <typename Index>
struct SampleCall {
  const DeviceTopology::State& topology;
  TopologyRef<Index> g;
  const NeighborSamplerOptions& options;
  std::span<const int64_t> fanout_table;  // [layers * width] (relation_fanout_table)
  int width;                              // relations (typed), else 1
  const int64_t* device_fanouts;          // the table in device memory (typed), else null
  uint64_t stream;  // the minibatch's random stream
  cudaStream_t s;
  Workspace& ws;
  DeviceMiniBatch& batch;
  LayerCounts* host_early;
  int64_t* host_early_ne;

  /// Device memory the batch owns (its blocks' arrays).
  void* alloc(std::size_t bytes) {
    batch.storage.push_back(allocate_async(bytes, s));
    return batch.storage.back().get();
  }
  int64_t* alloc64(int64_t count) { return static_cast<int64_t*>(alloc(static_cast<std::size_t>(count) * sizeof(int64_t))); }
  void host_sync() {
    GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(s));
    ++batch.host_syncs;
  }
};

/// Layer l: appends block l (its sizes are read after the call's one wait), drawing the
/// neighbours of the `nd_bound` (a bound; the real count is in counts_l) dst nodes `dst`, and
/// compacting them. Returns the block's src nodes and their bound, the next layer's dst nodes, and
/// sets `positions` to its edges' positions in the input graph.
template <typename Index>
std::pair<const int64_t*, int64_t> sample_layer(SampleCall<Index>& call, int l, LayerCounts* counts_l,
                                                const int64_t* dst, int64_t nd_bound, int64_t*& positions) {
  const DeviceTopology::State& topology = call.topology;
  const NeighborSamplerOptions& options = call.options;
  Workspace& ws = call.ws;
  const cudaStream_t s = call.s;
  const bool typed = call.device_fanouts != nullptr;
  const std::span<const int64_t> fanouts =
      call.fanout_table.subspan(static_cast<std::size_t>(l) * call.width, static_cast<std::size_t>(call.width));
  // What bounds the layer: its fanout, or for a typed layer the sum over its relations (-1: all).
  const int64_t fanout = typed ? typed::layer_fanout_bound(fanouts) : fanouts[0];
  bool hubs_possible = false, per_thread = true, draws = false;
  for (const int64_t f : fanouts) {
    hubs_possible = hubs_possible || nbr::hubs_possible(f, options.replace, topology.weighted);
    per_thread = per_thread && nbr::count_per_thread(f, topology.weighted);
    draws = draws || f != 0;
  }
  const DrawParams c{options.seed, layer_stream(call.stream, l), fanouts[0], options.replace, topology.weighted};
  const LayerRelations rel{call.width, typed ? call.device_fanouts + static_cast<std::size_t>(l) * call.width : nullptr};
  DeviceBlock& block = call.batch.blocks.emplace_back();
  int64_t* indptr = call.alloc64(nd_bound + 1);
  block.indptr = indptr;
  if (nd_bound == 0) {  // nothing to sample: every size stays zero
    GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(indptr, 0, sizeof(int64_t), s));
    return {dst, 0};
  }
  // One row per dst node, or per (dst node, relation) when typed; nodes have at most 2^63 / 256.
  const int64_t rows_bound = nd_bound * call.width;
  // Hubs are distinct rows of at least kHubDegree edges each, and none when no degree makes this
  // layer's draw a hub's (an unweighted fanout below kHubDegree): then no hub kernel runs.
  const int64_t hub_bound = hubs_possible ? std::min(rows_bound, topology.num_edges / nbr::kHubDegree) : 0;
  int64_t* hubs = ws.hubs.grow(std::max<int64_t>(hub_bound, 1));
  const auto hub_blocks = static_cast<unsigned>(std::min(hub_bound, kHubBlocks));
  int64_t* counts = ws.counts.grow(rows_bound);
  // The rows' offsets: the block's indptr itself when a row is a dst node.
  int64_t* row_indptr = typed ? ws.row_offsets.grow(rows_bound + 1) : indptr;
  if (per_thread) {
    count_unweighted_kernel<Index><<<blocks_for(rows_bound), kThreads, 0, s>>>(call.g, c, rel, dst, counts_l,
                                                                                rows_bound, counts, row_indptr, hubs);
    GRAPHTIER_CUDA_CHECK_LAUNCH("count_unweighted_kernel");
  } else {
    count_kernel<Index><<<grid_for(rows_bound, kWarpsPerBlock), kThreads, 0, s>>>(call.g, c, rel, dst, counts_l,
                                                                                  rows_bound, counts, row_indptr, hubs);
    GRAPHTIER_CUDA_CHECK_LAUNCH("count_kernel");
  }
  if (topology.weighted && hub_bound > 0 && draws) {
    hub_count_kernel<Index><<<hub_blocks, kThreads, 0, s>>>(call.g, c, rel, dst, counts_l, hubs, counts);
    GRAPHTIER_CUDA_CHECK_LAUNCH("hub_count_kernel");
  }
  inclusive_sum(counts, row_indptr + 1, rows_bound, ws.cub_temp, s);  // zero past the rows: row_indptr[rows_bound] = ne

  nbr::LayerBound b = nbr::layer_bound(nd_bound, fanout, options.replace, topology.num_nodes, topology.num_edges);
  if (b.ne < 0) {
    // Fanout -1: the exact sizes, read once (the layer's extra synchronisation).
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(call.host_early, counts_l, sizeof(LayerCounts), cudaMemcpyDeviceToHost, s));
    GRAPHTIER_CUDA_CHECK(
        cudaMemcpyAsync(call.host_early_ne, row_indptr + rows_bound, sizeof(int64_t), cudaMemcpyDeviceToHost, s));
    call.host_sync();
    b = nbr::layer_bound(call.host_early->nd, fanout, options.replace, topology.num_nodes, topology.num_edges,
                         *call.host_early_ne);
  }
  positions = options.edge_ids ? call.alloc64(b.ne) : ws.positions.grow(b.ne);
  int64_t* neighbours = ws.neighbours.grow(b.ne);
  uint8_t* edge_types = typed ? static_cast<uint8_t*>(call.alloc(static_cast<std::size_t>(std::max<int64_t>(b.ne, 1))))
                              : nullptr;
  block.edge_types = edge_types;

  GRAPHTIER_EXPECTS(b.capacity <= (uint64_t{1} << 32), InvalidArgument, "layer ", l, " may have ", b.nd + b.ne,
                    " nodes and edges: the GPU compaction addresses fewer than 2^31");
  const CompactBuffers buffers{ws.keys.grow(static_cast<int64_t>(b.capacity)),
                               ws.firsts.grow(static_cast<int64_t>(b.capacity)),
                               ws.slot_of.grow(std::max<int64_t>(b.nd + b.ne, 1)),
                               ws.new_rank.grow(std::max<int64_t>(b.ne, 1)),
                               b.capacity,
                               topology.num_nodes,
                               b.nd,
                               b.ne,
                               counts_l,
                               counts_l + 1};
  // Always launched: it writes the layer's ne and clears the compaction table (grid-stride, so
  // a grid sized for the rows clears any table; more blocks when the table is the larger).
  const unsigned fill_blocks =
      std::max(grid_for(b.nd * call.width, kWarpsPerBlock), blocks_for(static_cast<int64_t>(b.capacity) / 4));
  fill_kernel<Index><<<fill_blocks, kThreads, 0, s>>>(call.g, c, rel, dst, counts_l, b.nd, row_indptr, positions,
                                                      neighbours, buffers, indptr, edge_types);
  GRAPHTIER_CUDA_CHECK_LAUNCH("fill_kernel");
  if (hub_bound > 0 && draws) {
    hub_fill_kernel<Index><<<hub_blocks, kThreads, 0, s>>>(call.g, c, rel, dst, counts_l, hubs, row_indptr, positions,
                                                           neighbours);
    GRAPHTIER_CUDA_CHECK_LAUNCH("hub_fill_kernel");
  }
  compact_insert(dst, neighbours, buffers, s);
  compact_rank(buffers, ws.cub_temp, s);
  int64_t* src_nodes = call.alloc64(b.num_src);
  int64_t* local = call.alloc64(b.ne);
  block.src_nodes = src_nodes;
  block.indices = local;
  compact_write(dst, neighbours, buffers, src_nodes, local, s);
  return {src_nodes, b.num_src};
}

template <typename Index>
DeviceMiniBatch sample_call(const DeviceTopology::State& topology, const NeighborSamplerOptions& options,
                            std::span<const int64_t> fanout_table, std::span<const int64_t> seeds, uint64_t stream,
                            CudaStream cuda_stream, PinnedStagingPool& pool, const InputNodesSink& input_nodes) {
  const cudaStream_t s = native(cuda_stream);
  const bool typed = topology.num_relations > 0;
  const int width = typed ? topology.num_relations : 1;
  const int layers = static_cast<int>(fanout_table.size() / static_cast<std::size_t>(width));
  DeviceMiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  batch.stream = cuda_stream;
  batch.device = topology.device;
  Workspace ws(s);

  // Pinned staging: the seeds and a typed graph's fanout table (uploaded together), then every
  // layer's LayerCounts (read back at the end), then one LayerCounts and one int64 for a fanout -1
  // layer's early read.
  const std::size_t seeds_bytes = seeds.size() * sizeof(int64_t);
  const std::size_t table_bytes = typed ? fanout_table.size() * sizeof(int64_t) : 0;
  const std::size_t upload_bytes = align16(seeds_bytes + table_bytes);
  const std::size_t counts_bytes = align16(static_cast<std::size_t>(layers + 1) * sizeof(LayerCounts));
  const StagingLease staging(pool, upload_bytes + counts_bytes + sizeof(LayerCounts) + sizeof(int64_t), s);
  auto* host_upload = reinterpret_cast<int64_t*>(staging.data());
  auto* host_counts = reinterpret_cast<LayerCounts*>(staging.data() + upload_bytes);
  auto* host_early = reinterpret_cast<LayerCounts*>(staging.data() + upload_bytes + counts_bytes);
  // One upload: the seeds, then the table (workspace: the blocks keep neither).
  const auto upload_count = static_cast<int64_t>(seeds.size() + (typed ? fanout_table.size() : 0));
  int64_t* device_upload = nullptr;
  if (upload_count > 0) {
    std::memcpy(host_upload, seeds.data(), seeds_bytes);
    if (typed) std::memcpy(host_upload + seeds.size(), fanout_table.data(), table_bytes);
    device_upload = static_cast<int64_t*>(ws.upload.grow(upload_count));
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(device_upload, host_upload, static_cast<std::size_t>(upload_count) * sizeof(int64_t),
                                         cudaMemcpyHostToDevice, s));
  }
  SampleCall<Index> call{topology,
                         topology_ref<Index>(topology),
                         options,
                         fanout_table,
                         width,
                         typed ? device_upload + seeds.size() : nullptr,
                         stream,
                         s,
                         ws,
                         batch,
                         host_early,
                         reinterpret_cast<int64_t*>(host_early + 1)};

  LayerCounts* device_counts = ws.layers.grow(layers + 1);
  int64_t nd_bound = static_cast<int64_t>(seeds.size());
  init_counts_kernel<<<1, 1, 0, s>>>(device_counts, layers + 1, nd_bound);
  GRAPHTIER_CUDA_CHECK_LAUNCH("init_counts_kernel");
  // The dst nodes: the seeds for layer 0, then the previous block's src nodes.
  const int64_t* dst = nd_bound > 0 ? device_upload : nullptr;
  std::vector<int64_t*> edge_positions(static_cast<std::size_t>(layers), nullptr);
  for (int l = 0; l < layers; ++l) {
    std::tie(dst, nd_bound) =
        sample_layer(call, l, device_counts + l, dst, nd_bound, edge_positions[static_cast<std::size_t>(l)]);
  }
  if (input_nodes && layers > 0) {
    // nd_bound is the last block's num_src bound; the device writes the real count's worth.
    int64_t* host = input_nodes(nd_bound);
    if (nd_bound > 0) {
      void* mapped = nullptr;
      GRAPHTIER_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, host, 0));
      copy_input_nodes_kernel<<<blocks_for(nd_bound), kThreads, 0, s>>>(dst, device_counts + layers - 1,
                                                                        static_cast<int64_t*>(mapped));
      GRAPHTIER_CUDA_CHECK_LAUNCH("copy_input_nodes_kernel");
    }
  }
  read_layer_sizes(batch, device_counts, host_counts, edge_positions, options.edge_ids, s);
  return batch;
}

}  // namespace

void read_layer_sizes(DeviceMiniBatch& batch, const LayerCounts* device_counts, LayerCounts* host_counts,
                      const std::vector<int64_t*>& edge_positions, bool edge_ids, cudaStream_t s) {
  const std::size_t layers = edge_positions.size();
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(host_counts, device_counts, (layers + 1) * sizeof(LayerCounts),
                                       cudaMemcpyDeviceToHost, s));
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(s));
  ++batch.host_syncs;
  for (std::size_t l = 0; l < layers; ++l) {
    DeviceBlock& block = batch.blocks[l];
    const LayerCounts& n = host_counts[l];
    block.num_dst = n.nd;
    block.num_edges = n.ne;
    block.num_src = n.num_src;
    if (edge_ids && n.ne > 0) block.edge_ids = edge_positions[l];
  }
}

void inclusive_sum(const int64_t* in, int64_t* out, int64_t n, DeviceScratch<unsigned char>& temp,
                   cudaStream_t stream) {
  std::size_t bytes = 0;
  GRAPHTIER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, n, stream));
  void* storage = temp.grow(static_cast<int64_t>(bytes));
  GRAPHTIER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(storage, bytes, in, out, n, stream));
}

PinnedStagingPool::~PinnedStagingPool() {
  for (const auto& buffer : free_) graphtier::cuda::free_pinned(buffer.first);
}

std::pair<void*, std::size_t> PinnedStagingPool::take(std::size_t bytes) {
  {
    const std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < free_.size(); ++i) {
      if (free_[i].second >= bytes) {
        const auto buffer = free_[i];
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
        return buffer;
      }
    }
    ++allocations_;
  }
  // Room to grow: the next minibatches of this size class reuse it.
  const std::size_t size = std::max<std::size_t>(4096, bytes + bytes / 2);
  return {graphtier::cuda::allocate_pinned(size), size};
}

void PinnedStagingPool::give_back(std::pair<void*, std::size_t> buffer) noexcept {
  try {
    const std::lock_guard lock(mutex_);
    free_.push_back(buffer);
  } catch (...) {
    graphtier::cuda::free_pinned(buffer.first);
  }
}

int64_t PinnedStagingPool::allocations() const {
  const std::lock_guard lock(mutex_);
  return allocations_;
}

int64_t device_bytes_bound(const NeighborSamplerOptions& options, std::span<const int64_t> layer_fanouts,
                           int relations, int64_t num_seeds, int64_t num_nodes, int64_t num_edges) {
  return nbr::call_device_bytes(num_seeds, layer_fanouts, options.replace, options.edge_ids, num_nodes, num_edges,
                                relations);
}

std::shared_ptr<PinnedStagingPool> make_staging_pool() { return std::make_shared<PinnedStagingPool>(); }

DeviceMiniBatch sample_device(const DeviceTopology::State& topology, const NeighborSamplerOptions& options,
                              std::span<const int64_t> fanout_table, std::span<const int64_t> seeds, uint64_t stream,
                              CudaStream cuda_stream, PinnedStagingPool& staging, const InputNodesSink& input_nodes) {
  const ::graphtier::cuda::CurrentDevice on_device(topology.device);
  return topology.index64
             ? sample_call<int64_t>(topology, options, fanout_table, seeds, stream, cuda_stream, staging, input_nodes)
             : sample_call<int32_t>(topology, options, fanout_table, seeds, stream, cuda_stream, staging, input_nodes);
}

void copy_to_host(void* dst, const void* src, std::size_t bytes, CudaStream stream, int device) {
  if (bytes == 0) return;
  const ::graphtier::cuda::CurrentDevice on_device(device);
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, native(stream)));
}

void synchronize(CudaStream stream, int device) {
  const ::graphtier::cuda::CurrentDevice on_device(device);
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(native(stream)));
}

}  // namespace graphtier::sample::cuda
