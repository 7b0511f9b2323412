// The layer loop of GPU neighbour sampling: count pass (edges per dst node) -> scan (CUB) -> fill
// pass (edge positions and global neighbour ids) -> hash unique-and-compact. Twin of the host
// loop in ../neighbor_sampler.cpp.
#include <bit>
#include <cub/device/device_scan.cuh>

#include "graphtier/core/error.hpp"
#include "cuda/compact_cuda.cuh"
#include "cuda/cuda_util.cuh"
#include "cuda/device_topology_cuda.hpp"
#include "cuda/neighbor_draws_cuda.cuh"
#include "cuda/neighbor_sampler_cuda.hpp"
#include "cuda/topology_ref.cuh"

namespace graphtier::sample::cuda {
namespace {

constexpr int kWarpsPerBlock = kThreads / kWarp;

template <typename Index>
__global__ void __launch_bounds__(kThreads) count_kernel(TopologyRef<Index> g, DrawParams c, const int64_t* dst,
                                                         int64_t nd, int64_t* counts) {
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t w = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp; w < nd; w += warps) {
    const int64_t v = dst[w];
    const int64_t begin = g.indptr[v], end = g.indptr[v + 1];
    const int64_t positive = c.weighted && c.fanout != 0 ? count_positive(g, begin, end, lane) : end - begin;
    if (lane == 0) counts[w] = sample_count(c, end - begin, positive);
  }
}

template <typename Index>
__global__ void __launch_bounds__(kThreads) fill_kernel(TopologyRef<Index> g, DrawParams c, const int64_t* dst,
                                                        int64_t nd, const int64_t* out_indptr, int64_t* positions,
                                                        int64_t* neighbours) {
  __shared__ WarpScratch scratch[kWarpsPerBlock];
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  WarpScratch& s = scratch[threadIdx.x / kWarp];
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t w = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp; w < nd; w += warps) {
    const int64_t out = out_indptr[w];
    const int64_t n = out_indptr[w + 1] - out;
    if (n == 0) continue;  // warp-uniform
    const int64_t v = dst[w];
    const int64_t begin = g.indptr[v], end = g.indptr[v + 1], d = end - begin;
    int64_t* pos = positions + out;
    int64_t* nbr = neighbours + out;
    if (!c.weighted) {
      if (c.fanout < 0 || (!c.replace && n == d)) {
        all_edges(g, begin, d, pos, nbr, lane);
      } else if (c.replace) {
        uniform_repeated(g, c, v, begin, d, n, pos, nbr, lane);
      } else if (n <= kWarp) {
        floyd_warp(g, c, v, begin, d, static_cast<int>(n), pos, nbr, lane);
      } else {
        floyd_serial(g, c, v, begin, d, n, pos, nbr, lane);
      }
    } else if (c.replace && c.fanout > 0) {
      weighted_repeated(g, c, v, begin, end, n, pos, nbr, lane, s);
    } else if (n == count_positive(g, begin, end, lane)) {
      positive_edges(g, begin, end, pos, nbr, lane);
    } else {
      weighted_distinct(g, c, begin, end, n, pos, nbr, lane, s);
    }
    __syncwarp();  // the next node reuses the warp's scratch
  }
}

/// Everything one call allocates once and reuses across its layers (stream-ordered).
struct Workspace {
  explicit Workspace(cudaStream_t s)
      : counts(s), positions(s), neighbours(s), keys(s), firsts(s), slot_of(s), new_rank(s), cub_temp(s) {}
  DeviceScratch<int64_t> counts, positions, neighbours;
  DeviceScratch<unsigned long long> keys, firsts;
  DeviceScratch<uint32_t> slot_of;
  DeviceScratch<int64_t> new_rank;
  DeviceScratch<unsigned char> cub_temp;
};

/// Inclusive prefix sum of `in` into `out` (n > 0) on `stream`.
void inclusive_sum(const int64_t* in, int64_t* out, int64_t n, Workspace& ws, cudaStream_t stream) {
  std::size_t bytes = 0;
  GRAPHTIER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, n, stream));
  void* temp = ws.cub_temp.grow(static_cast<int64_t>(bytes));
  GRAPHTIER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp, bytes, in, out, n, stream));
}

template <typename Index>
DeviceMiniBatch sample_typed(const DeviceTopology::State& topology, const NeighborSamplerOptions& options,
                             std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream) {
  const cudaStream_t s = native(cuda_stream);
  const TopologyRef<Index> g = topology_ref<Index>(topology);
  DeviceMiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  batch.stream = cuda_stream;
  batch.device = topology.device;
  Workspace ws(s);

  const auto alloc64 = [&](int64_t count) {
    batch.storage.push_back(allocate_async(static_cast<std::size_t>(count) * sizeof(int64_t), s));
    return static_cast<int64_t*>(batch.storage.back().get());
  };
  // The dst nodes: the seeds for layer 0, then the previous block's src nodes.
  int64_t nd = static_cast<int64_t>(seeds.size());
  const int64_t* dst = nullptr;
  if (nd > 0) {
    int64_t* d_seeds = alloc64(nd);
    GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(d_seeds, seeds.data(), static_cast<std::size_t>(nd) * sizeof(int64_t),
                                                cudaMemcpyHostToDevice, s));
    dst = d_seeds;
  }
  for (std::size_t l = 0; l < options.fanouts.size(); ++l) {
    const DrawParams c{options.seed, layer_stream(stream, static_cast<int>(l)), options.fanouts[l], options.replace,
                       topology.weighted};
    DeviceBlock& block = batch.blocks.emplace_back();
    block.num_dst = nd;
    int64_t* indptr = alloc64(nd + 1);
    block.indptr = indptr;
    GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(indptr, 0, sizeof(int64_t), s));
    int64_t ne = 0;
    if (nd > 0) {
      int64_t* counts = ws.counts.grow(nd);
      count_kernel<Index><<<grid_for(nd, kWarpsPerBlock), kThreads, 0, s>>>(g, c, dst, nd, counts);
      GRAPHTIER_CUDA_CHECK_LAUNCH("count_kernel");
      inclusive_sum(counts, indptr + 1, nd, ws, s);
      ne = read_one(indptr + nd, s);
    }
    block.num_edges = ne;
    int64_t* positions = options.edge_ids ? alloc64(ne) : ws.positions.grow(ne);
    int64_t* neighbours = ws.neighbours.grow(ne);
    if (options.edge_ids && ne > 0) block.edge_ids = positions;
    if (ne > 0) {
      fill_kernel<Index><<<grid_for(nd, kWarpsPerBlock), kThreads, 0, s>>>(g, c, dst, nd, indptr, positions, neighbours);
      GRAPHTIER_CUDA_CHECK_LAUNCH("fill_kernel");
    }

    const uint64_t capacity = std::bit_ceil(static_cast<uint64_t>(2 * (nd + ne) > 64 ? 2 * (nd + ne) : 64));
    GRAPHTIER_EXPECTS(capacity <= (uint64_t{1} << 32), InvalidArgument, "layer ", l, " has ", nd + ne,
                      " nodes and edges: the GPU compaction addresses fewer than 2^31");
    const CompactBuffers buffers{ws.keys.grow(static_cast<int64_t>(capacity)), ws.firsts.grow(static_cast<int64_t>(capacity)),
                                 ws.slot_of.grow(nd + ne), ws.new_rank.grow(ne), capacity};
    compact_mark(dst, nd, neighbours, ne, buffers, s);
    int64_t new_nodes = 0;
    if (ne > 0) {
      inclusive_sum(buffers.new_rank, buffers.new_rank, ne, ws, s);  // in place: CUB allows d_in == d_out
      new_nodes = read_one(buffers.new_rank + ne - 1, s);
    }
    block.num_src = nd + new_nodes;
    int64_t* src_nodes = alloc64(block.num_src);
    int64_t* local = alloc64(ne);
    block.src_nodes = src_nodes;
    block.indices = local;
    if (nd > 0) {
      GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(src_nodes, dst, static_cast<std::size_t>(nd) * sizeof(int64_t),
                                                  cudaMemcpyDeviceToDevice, s));
    }
    compact_write(nd, neighbours, ne, buffers, src_nodes, local, s);
    dst = src_nodes;
    nd = block.num_src;
  }
  return batch;
}

}  // namespace

DeviceMiniBatch sample_device(const DeviceTopology::State& topology, const NeighborSamplerOptions& options,
                              std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream) {
  GRAPHTIER_CUDA_CHECK(cudaSetDevice(topology.device));
  return topology.index64 ? sample_typed<int64_t>(topology, options, seeds, stream, cuda_stream)
                          : sample_typed<int32_t>(topology, options, seeds, stream, cuda_stream);
}

void copy_to_host(int64_t* dst, const int64_t* src, int64_t count, CudaStream stream, int device) {
  if (count == 0) return;
  GRAPHTIER_CUDA_CHECK(cudaSetDevice(device));
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(count) * sizeof(int64_t),
                                              cudaMemcpyDeviceToHost, native(stream)));
}

void synchronize(CudaStream stream, int device) {
  GRAPHTIER_CUDA_CHECK(cudaSetDevice(device));
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(native(stream)));
}

}  // namespace graphtier::sample::cuda
