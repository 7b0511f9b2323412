// The layer loop of temporal neighbour sampling on the GPU (temporal.hpp), the twin of the host's
// cpu/temporal_sampler_cpu.cpp and the untimed GPU loop's sibling (neighbor_sampler_cuda.cu):
// count pass (each row's window) -> scan -> fill pass (the picks) and hub pass -> unique-and-compact
// per tree -> the keys split into src nodes and trees.
//
// Every decision is temporal_steps.hpp's: a row's window (temporal::window, the binary search over
// its column's times), whether its picks are independent (temporal::independent_picks: then pick i
// is temporal::pick_at, spread over a warp, or a block for a hub window), else Floyd's draws
// (temporal::draw, on one lane: O(fanout^2) moves at most, never a pass over the row). The CPU test
// tests/sample/temporal_gpu_steps_test.cpp runs these functions in this file's order and shape.
//
// Disjoint trees: the dst nodes of a layer travel as tree_key(tree, node) (temporal_steps.hpp),
// the seeds' keys built by the first kernel (seed i is tree i). The compaction (compact_cuda.cuh) is keyed
// by them, so it deduplicates per (tree, node) and numbers new nodes in first-appearance order as
// the host's IdMap does; a last pass splits each src key into Block::src_nodes and src_trees.
// Bounds count a node once per tree: a layer has at most trees * num_nodes distinct keys and, without
// replacement, trees * num_edges edges.
//
// Synchronisation: as the untimed sampler's (cuda_neighbor_sampler.hpp): one wait per minibatch, at
// the end, for every layer's sizes, plus one per layer of fanout -1 (its edge count, read before its
// edge arrays are sized). Device memory comes from the stream-ordered pool (the batch's arrays) and
// DeviceScratch reused across layers (the workspace); the seeds, their times and the initial
// layer sizes reach the device in one copy from pinned staging.
#include <algorithm>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include "graphtier/core/error.hpp"
#include "cuda/compact_cuda.cuh"
#include "cuda/cuda_util.cuh"
#include "cuda/device_topology_cuda.hpp"
#include "cuda/neighbor_draws_cuda.cuh"
#include "cuda/neighbor_sampler_cuda.hpp"
#include "cuda/sampler_call_cuda.cuh"
#include "cuda/topology_ref.cuh"
#include "current_device.cuh"
#include "memory_cuda.hpp"
#include "neighbor_steps.hpp"
#include "temporal_steps.hpp"

namespace graphtier::sample::cuda {
namespace {

constexpr int kWarpsPerBlock = kThreads / kWarp;

/// One column of the time-ordered view where the device reads it: `time` and `order` indexed by
/// [begin, end). A column is all hot or all cold (split_edge is a column boundary, indptr[H]), so
/// its view is one contiguous range of one tier and eligible_end's binary search reads one array.
struct TemporalColumn {
  const int64_t* time;
  const int64_t* order;
  int64_t begin;
  int64_t end;
};

template <typename Index>
__device__ __forceinline__ TemporalColumn temporal_column(const TopologyRef<Index>& g, int64_t v) {
  const int64_t begin = g.indptr[v], end = g.indptr[v + 1];
  if (begin < g.split_edge) return {g.hot_time, g.hot_order, begin, end};
  return {g.cold_time, g.cold_order, begin - g.split_edge, end - g.split_edge};
}

/// What a temporal layer's kernels share.
template <typename Index>
struct TemporalLayer {
  TopologyRef<Index> g;
  const int64_t* seed_times;  // [trees], device
  uint64_t seed;
  uint64_t layer_stream;
  int64_t fanout;  // -1 = all
  bool replace;
  TemporalStrategy strategy;
};

/// Row k of a layer: dst key k's node, tree, column, window and draw stream.
struct TemporalRow {
  int64_t v;
  int64_t tree;
  TemporalColumn col;
  temporal::Window w;
  uint64_t stream;
};

template <typename Index>
__device__ __forceinline__ TemporalRow temporal_row(const TemporalLayer<Index>& layer, const int64_t* dst_keys,
                                                    int64_t k) {
  TemporalRow r;
  const int64_t key = dst_keys[k];
  r.v = temporal::key_node(key);
  r.tree = temporal::key_tree(key);
  r.col = temporal_column(layer.g, r.v);
  r.w = temporal::window(r.col.time, r.col.begin, r.col.end, layer.seed_times[r.tree], layer.fanout, layer.replace,
                         layer.strategy);
  r.stream = temporal::tree_stream(layer.layer_stream, r.tree);
  return r;
}

/// Writes view position p as output slot i: its CSC position (the edge id) and its neighbour's key
/// in the row's tree.
template <typename Index>
__device__ __forceinline__ void emit_view(const TopologyRef<Index>& g, const TemporalRow& r, int64_t* positions,
                                          int64_t* neighbour_keys, int64_t i, int64_t p) {
  const int64_t csc = r.col.order[p];
  positions[i] = csc;
  neighbour_keys[i] = temporal::tree_key(r.tree, g.index(csc));
}

/// counts[k] = row k's window count for every k < nd_bound (zero past the real rows, so the scan
/// runs over the bound); hub windows go to the hub list. One thread per row: a window is a binary
/// search, O(log degree) reads.
template <typename Index>
__global__ void __launch_bounds__(kThreads) temporal_count_kernel(TemporalLayer<Index> layer, const int64_t* dst_keys,
                                                                  LayerCounts* n, int64_t nd_bound, int64_t* counts,
                                                                  int64_t* indptr, int64_t* hubs) {
  const int64_t nd = n->nd;
  if (blockIdx.x == 0 && threadIdx.x == 0) indptr[0] = 0;
  GRAPHTIER_GRID_STRIDE(k, nd_bound) {
    if (k >= nd) {
      counts[k] = 0;
      continue;
    }
    const TemporalRow r = temporal_row(layer, dst_keys, k);
    if (temporal::hub_window(r.w, layer.fanout, layer.replace)) hubs[append(&n->hubs)] = k;
    counts[k] = r.w.count;
  }
}

/// One warp per row that is not a hub's: independent picks spread over the lanes, Floyd's on lane
/// 0 (into the output slots, as view positions) and then translated by the warp. Also writes the
/// layer's ne and empties the part of the compaction table its real sizes use (compact_clear).
template <typename Index>
__global__ void __launch_bounds__(kThreads) temporal_fill_kernel(TemporalLayer<Index> layer, const int64_t* dst_keys,
                                                                 LayerCounts* counts, int64_t nd_bound,
                                                                 const int64_t* indptr, int64_t* positions,
                                                                 int64_t* neighbour_keys, CompactBuffers table) {
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t nd = counts->nd < nd_bound ? counts->nd : nd_bound;
  if (blockIdx.x == 0 && threadIdx.x == 0) counts->ne = indptr[nd];
  compact_clear(table, nd, indptr[nd]);
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp; k < nd; k += warps) {
    const int64_t out = indptr[k];
    const int64_t n = indptr[k + 1] - out;
    if (n == 0) continue;  // warp-uniform
    const TemporalRow r = temporal_row(layer, dst_keys, k);
    if (temporal::hub_window(r.w, layer.fanout, layer.replace)) continue;  // temporal_hub_fill_kernel's
    int64_t* pos = positions + out;
    int64_t* keys = neighbour_keys + out;
    if (temporal::independent_picks(r.w, layer.replace)) {
      for (int64_t i = lane; i < n; i += kWarp) {
        emit_view(layer.g, r, pos, keys, i, temporal::pick_at(r.w, layer.replace, layer.seed, r.stream, r.v, i));
      }
    } else {
      if (lane == 0) temporal::draw(r.w, layer.replace, layer.seed, r.stream, r.v, pos);
      __syncwarp();
      for (int64_t i = lane; i < n; i += kWarp) emit_view(layer.g, r, pos, keys, i, pos[i]);
    }
    __syncwarp();  // lane 0 of the next row writes its slots only after this row's reads
  }
}

/// The hub windows, one block per list entry (grid-stride over the list the count pass filled):
/// their picks are independent (temporal::hub_window), spread over the block.
template <typename Index>
__global__ void __launch_bounds__(kThreads) temporal_hub_fill_kernel(TemporalLayer<Index> layer,
                                                                     const int64_t* dst_keys, const LayerCounts* counts,
                                                                     const int64_t* hubs, const int64_t* indptr,
                                                                     int64_t* positions, int64_t* neighbour_keys) {
  const int64_t num_hubs = counts->hubs;
  for (int64_t h = blockIdx.x; h < num_hubs; h += gridDim.x) {
    const int64_t k = hubs[h];
    const int64_t out = indptr[k];
    const int64_t n = indptr[k + 1] - out;
    const TemporalRow r = temporal_row(layer, dst_keys, k);
    for (int64_t i = threadIdx.x; i < n; i += kThreads) {
      emit_view(layer.g, r, positions + out, neighbour_keys + out, i,
                temporal::pick_at(r.w, layer.replace, layer.seed, r.stream, r.v, i));
    }
  }
}

/// The layer's src keys (as many as the device counted) into src_nodes and src_trees; the last
/// layer's nodes also into `host` (mapped page-locked memory of an InputNodesSink) when given.
__global__ void split_keys_kernel(const int64_t* src_keys, const LayerCounts* counts, int64_t* src_nodes,
                                  int64_t* src_trees, int64_t* host) {
  const int64_t n = counts->num_src;
  GRAPHTIER_GRID_STRIDE(i, n) {
    const int64_t key = src_keys[i];
    src_nodes[i] = temporal::key_node(key);
    src_trees[i] = temporal::key_tree(key);
    if (host != nullptr) host[i] = src_nodes[i];
  }
}

/// Seed i's key: node seeds[i] in tree i. On the device, so that tree_key has one compiler's
/// definition on the host (the CPU sampler's; scripts/check-odr.sh).
__global__ void seed_keys_kernel(const int64_t* seeds, int64_t n, int64_t* keys) {
  GRAPHTIER_GRID_STRIDE(i, n) { keys[i] = temporal::tree_key(i, seeds[i]); }
}

/// Everything one call allocates once and reuses across its layers (stream-ordered).
struct TemporalWorkspace {
  explicit TemporalWorkspace(cudaStream_t s)
      : counts(s), positions(s), neighbour_keys(s), hubs(s), upload(s), src_keys{DeviceScratch<int64_t>(s), DeviceScratch<int64_t>(s)},
        table_keys(s), firsts(s), slot_of(s), new_rank(s), cub_temp(s) {}
  DeviceScratch<int64_t> counts, positions, neighbour_keys, hubs;
  DeviceScratch<int64_t> upload;  // the layers' sizes, the seeds and their times
  /// Layer l's src keys in src_keys[l % 2]: the next layer's dst keys, while it writes its own.
  DeviceScratch<int64_t> src_keys[2];
  DeviceScratch<unsigned long long> table_keys, firsts;
  DeviceScratch<uint32_t> slot_of;
  DeviceScratch<int64_t> new_rank;
  DeviceScratch<unsigned char> cub_temp;
};

/// What every layer of one call shares.
template <typename Index>
struct TemporalCall {
  const DeviceTopology::State& topology;
  TopologyRef<Index> g;
  const NeighborSamplerOptions& options;
  std::span<const int64_t> fanouts;
  const int64_t* seed_times;  // device
  int64_t key_space;          // trees * num_nodes: distinct (tree, node) keys at most
  int64_t tree_edges;         // trees * num_edges: edges of a layer without replacement at most
  uint64_t stream;
  cudaStream_t s;
  TemporalWorkspace& ws;
  DeviceMiniBatch& batch;
  const InputNodesSink& input_nodes;
  LayerCounts* host_early;
  int64_t* host_early_ne;

  int64_t* alloc64(int64_t count) {
    batch.storage.push_back(allocate_async(static_cast<std::size_t>(std::max<int64_t>(count, 1)) * sizeof(int64_t), s));
    return static_cast<int64_t*>(batch.storage.back().get());
  }
  void host_sync() {
    GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(s));
    ++batch.host_syncs;
  }
};

/// Layer l: appends block l, drawing from the `nd_bound` (a bound; the real count is in counts_l)
/// dst keys, and compacting per tree. Returns the src keys (the next layer's dst keys) and their
/// bound; sets `positions` to the edges' CSC positions.
template <typename Index>
std::pair<const int64_t*, int64_t> temporal_layer(TemporalCall<Index>& call, int l, LayerCounts* counts_l,
                                                  const int64_t* dst_keys, int64_t nd_bound, int64_t*& positions) {
  const NeighborSamplerOptions& options = call.options;
  TemporalWorkspace& ws = call.ws;
  const cudaStream_t s = call.s;
  const int64_t fanout = call.fanouts[static_cast<std::size_t>(l)];
  const bool last = l + 1 == static_cast<int>(call.fanouts.size());
  DeviceBlock& block = call.batch.blocks.emplace_back();
  int64_t* indptr = call.alloc64(nd_bound + 1);
  block.indptr = indptr;
  if (nd_bound == 0) {  // no seeds: every size stays zero
    GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(indptr, 0, sizeof(int64_t), s));
    if (last && call.input_nodes) call.input_nodes(0);
    return {dst_keys, 0};
  }
  const TemporalLayer<Index> layer{call.g,          call.seed_times, options.seed, layer_stream(call.stream, l),
                                   fanout,          options.replace, options.temporal_strategy};
  // Hub windows are distinct (tree, node) rows of at least kHubDegree eligible entries each.
  const int64_t hub_bound =
      nbr::hubs_possible(fanout, options.replace, false) ? std::min(nd_bound, call.tree_edges / nbr::kHubDegree) : 0;
  int64_t* hubs = ws.hubs.grow(std::max<int64_t>(hub_bound, 1));
  int64_t* counts = ws.counts.grow(nd_bound);
  temporal_count_kernel<Index>
      <<<blocks_for(nd_bound), kThreads, 0, s>>>(layer, dst_keys, counts_l, nd_bound, counts, indptr, hubs);
  GRAPHTIER_CUDA_CHECK_LAUNCH("temporal_count_kernel");
  inclusive_sum(counts, indptr + 1, nd_bound, ws.cub_temp, s);  // zero past the rows: indptr[nd_bound] = ne

  nbr::LayerBound b = nbr::layer_bound(nd_bound, fanout, options.replace, call.key_space, call.tree_edges);
  if (b.ne < 0) {
    // Fanout -1: the exact sizes, read once (the layer's extra synchronisation).
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(call.host_early, counts_l, sizeof(LayerCounts), cudaMemcpyDeviceToHost, s));
    GRAPHTIER_CUDA_CHECK(
        cudaMemcpyAsync(call.host_early_ne, indptr + nd_bound, sizeof(int64_t), cudaMemcpyDeviceToHost, s));
    call.host_sync();
    b = nbr::layer_bound(call.host_early->nd, fanout, options.replace, call.key_space, call.tree_edges,
                         *call.host_early_ne);
  }
  positions = options.edge_ids ? call.alloc64(b.ne) : ws.positions.grow(std::max<int64_t>(b.ne, 1));
  int64_t* neighbour_keys = ws.neighbour_keys.grow(std::max<int64_t>(b.ne, 1));
  GRAPHTIER_EXPECTS(b.capacity <= (uint64_t{1} << 32), InvalidArgument, "layer ", l, " may have ", b.nd + b.ne,
                    " nodes and edges: the GPU compaction addresses fewer than 2^31");
  const CompactBuffers buffers{ws.table_keys.grow(static_cast<int64_t>(b.capacity)),
                               ws.firsts.grow(static_cast<int64_t>(b.capacity)),
                               ws.slot_of.grow(std::max<int64_t>(b.nd + b.ne, 1)),
                               ws.new_rank.grow(std::max<int64_t>(b.ne, 1)),
                               b.capacity,
                               call.key_space,
                               b.nd,
                               b.ne,
                               counts_l,
                               counts_l + 1};
  // Always launched: it writes the layer's ne and clears the compaction table.
  const unsigned fill_blocks =
      std::max(grid_for(b.nd, kWarpsPerBlock), blocks_for(static_cast<int64_t>(b.capacity) / 4));
  temporal_fill_kernel<Index><<<fill_blocks, kThreads, 0, s>>>(layer, dst_keys, counts_l, b.nd, indptr, positions,
                                                               neighbour_keys, buffers);
  GRAPHTIER_CUDA_CHECK_LAUNCH("temporal_fill_kernel");
  if (hub_bound > 0) {
    temporal_hub_fill_kernel<Index><<<static_cast<unsigned>(std::min(hub_bound, kHubBlocks)), kThreads, 0, s>>>(
        layer, dst_keys, counts_l, hubs, indptr, positions, neighbour_keys);
    GRAPHTIER_CUDA_CHECK_LAUNCH("temporal_hub_fill_kernel");
  }
  compact_insert(dst_keys, neighbour_keys, buffers, s);
  compact_rank(buffers, ws.cub_temp, s);
  int64_t* src_keys = ws.src_keys[l % 2].grow(std::max<int64_t>(b.num_src, 1));
  int64_t* local = call.alloc64(b.ne);
  compact_write(dst_keys, neighbour_keys, buffers, src_keys, local, s);
  int64_t* src_nodes = call.alloc64(b.num_src);
  int64_t* src_trees = call.alloc64(b.num_src);
  int64_t* host = nullptr;
  if (last && call.input_nodes) {
    // The bound; the device writes the real count's worth within the call's last wait.
    void* mapped = nullptr;
    GRAPHTIER_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, call.input_nodes(b.num_src), 0));
    host = static_cast<int64_t*>(mapped);
  }
  split_keys_kernel<<<blocks_for(b.num_src), kThreads, 0, s>>>(src_keys, counts_l, src_nodes, src_trees, host);
  GRAPHTIER_CUDA_CHECK_LAUNCH("split_keys_kernel");
  block.src_nodes = src_nodes;
  block.src_trees = src_trees;
  block.indices = local;
  return {src_keys, b.num_src};
}

template <typename Index>
DeviceMiniBatch temporal_call(const DeviceTopology::State& topology, const NeighborSamplerOptions& options,
                              std::span<const int64_t> fanouts, std::span<const int64_t> seeds,
                              std::span<const int64_t> seed_times, uint64_t stream, CudaStream cuda_stream,
                              PinnedStagingPool& pool, const InputNodesSink& input_nodes) {
  const cudaStream_t s = native(cuda_stream);
  const int layers = static_cast<int>(fanouts.size());
  const auto trees = static_cast<int64_t>(seeds.size());
  DeviceMiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  batch.stream = cuda_stream;
  batch.device = topology.device;
  TemporalWorkspace ws(s);

  // Pinned staging: [the layers' initial sizes | the seeds | their times], uploaded in one copy;
  // then every layer's sizes (read back at the end); then a fanout -1 layer's early read.
  const std::size_t counts_bytes = align16(static_cast<std::size_t>(layers + 1) * sizeof(LayerCounts));
  const std::size_t upload_bytes = counts_bytes + 2 * seeds.size() * sizeof(int64_t);
  const StagingLease staging(pool, upload_bytes + counts_bytes + sizeof(LayerCounts) + sizeof(int64_t), s);
  auto* host_init = reinterpret_cast<LayerCounts*>(staging.data());
  auto* host_seeds = reinterpret_cast<int64_t*>(staging.data() + counts_bytes);
  auto* host_counts = reinterpret_cast<LayerCounts*>(staging.data() + upload_bytes);
  auto* host_early = reinterpret_cast<LayerCounts*>(staging.data() + upload_bytes + counts_bytes);
  for (int l = 0; l <= layers; ++l) host_init[l] = LayerCounts{l == 0 ? trees : 0, 0, 0, 0};
  std::memcpy(host_seeds, seeds.data(), seeds.size() * sizeof(int64_t));
  std::memcpy(host_seeds + trees, seed_times.data(), seed_times.size() * sizeof(int64_t));
  int64_t* device_upload = ws.upload.grow(static_cast<int64_t>(upload_bytes / sizeof(int64_t)));
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(device_upload, staging.data(), upload_bytes, cudaMemcpyHostToDevice, s));
  auto* device_counts = reinterpret_cast<LayerCounts*>(device_upload);
  const int64_t* device_seeds = device_upload + counts_bytes / sizeof(int64_t);
  // Layer 0's dst keys, in the src key buffer that layer 0 does not write (it writes src_keys[0]).
  int64_t* seed_keys = ws.src_keys[1].grow(std::max<int64_t>(trees, 1));
  if (trees > 0) {
    seed_keys_kernel<<<blocks_for(trees), kThreads, 0, s>>>(device_seeds, trees, seed_keys);
    GRAPHTIER_CUDA_CHECK_LAUNCH("seed_keys_kernel");
  }

  TemporalCall<Index> call{topology,
                           topology_ref<Index>(topology),
                           options,
                           fanouts,
                           device_seeds + trees,
                           nbr::saturating_mul(trees, topology.num_nodes),
                           nbr::saturating_mul(trees, topology.num_edges),
                           stream,
                           s,
                           ws,
                           batch,
                           input_nodes,
                           host_early,
                           reinterpret_cast<int64_t*>(host_early + 1)};
  const int64_t* dst = seed_keys;
  int64_t nd_bound = trees;
  std::vector<int64_t*> edge_positions(static_cast<std::size_t>(layers), nullptr);
  for (int l = 0; l < layers; ++l) {
    std::tie(dst, nd_bound) =
        temporal_layer(call, l, device_counts + l, dst, nd_bound, edge_positions[static_cast<std::size_t>(l)]);
  }
  read_layer_sizes(batch, device_counts, host_counts, edge_positions, options.edge_ids, s);
  return batch;
}

}  // namespace

int64_t temporal_device_bytes_bound(const NeighborSamplerOptions& options, std::span<const int64_t> fanouts,
                                    int64_t num_seeds, int64_t num_nodes, int64_t num_edges) {
  return temporal::call_device_bytes(num_seeds, fanouts, options.replace, options.edge_ids, num_nodes, num_edges);
}

DeviceMiniBatch sample_temporal_device(const DeviceTopology::State& topology, const NeighborSamplerOptions& options,
                                       std::span<const int64_t> fanouts, std::span<const int64_t> seeds,
                                       std::span<const int64_t> seed_times, uint64_t stream, CudaStream cuda_stream,
                                       PinnedStagingPool& staging, const InputNodesSink& input_nodes) {
  const ::graphtier::cuda::CurrentDevice on_device(topology.device);
  return topology.index64 ? temporal_call<int64_t>(topology, options, fanouts, seeds, seed_times, stream, cuda_stream,
                                                   staging, input_nodes)
                          : temporal_call<int32_t>(topology, options, fanouts, seeds, seed_times, stream, cuda_stream,
                                                   staging, input_nodes);
}

}  // namespace graphtier::sample::cuda
