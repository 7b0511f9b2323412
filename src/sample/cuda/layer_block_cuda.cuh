// The steps of the CUDA layer sampler shared between its files: the device graph, pinned staging,
// a block's src set, and building the block (layer_block_cuda.cu). Only included by .cu files.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "graphtier/core/memory.hpp"
#include "graphtier/sample/device_topology.hpp"
#include "graphtier/sample/minibatch.hpp"
#include "cuda/cuda_util.cuh"
#include "pinned_arena.cuh"
#include "cuda/topology_ref.cuh"

namespace graphtier::sample::cuda {

/// Pinned host memory for one call's copies (src/cuda_common/pinned_arena.cuh).
using PinnedStaging = ::graphtier::cuda::PinnedArena;

/// The graph on one device: the shared DeviceTopology (read through TopologyRef), its row pointers
/// on the host too (the host sizes every array by the dst rows' degrees instead of asking the
/// device), for FastGCN the global draw weights and the internal nodes of their race tree
/// (layer_draws.hpp), uploaded once and only read by the draws, and a pool of pinned staging
/// arenas, one per concurrent call.
struct LayerDeviceGraph {
  LayerDeviceGraph(const DeviceTopology& t, std::vector<int64_t> indptr, Buffer weights, Buffer tree)
      : topology(t),
        host_indptr(std::move(indptr)),
        fastgcn_weights(std::move(weights)),
        fastgcn_tree(std::move(tree)) {}

  const DeviceTopology& topology;   // borrowed (CudaLayerSampler's caller owns it)
  std::vector<int64_t> host_indptr;  // [num_nodes + 1]
  Buffer fastgcn_weights;            // uint64 [num_nodes] (FastGCN only)
  Buffer fastgcn_tree;               // uint64 [2^race_levels(num_nodes)] (FastGCN only)

  std::unique_ptr<PinnedStaging> acquire_staging() const;
  void release_staging(std::unique_ptr<PinnedStaging> staging) const;

 private:
  mutable std::mutex staging_mutex_;
  mutable std::vector<std::unique_ptr<PinnedStaging>> free_staging_;
};

/// The src set of a block (ascending ids) and the w_u of each, in arrays of `capacity` entries of
/// which the first *size (device memory) are used: the host never waits for the count.
struct DeviceColumns {
  DeviceScratch<int64_t> ids;
  DeviceScratch<uint64_t> weights;
  DeviceScratch<int64_t> size;  // [1]
  int64_t capacity = 0;
};

/// A block left in device memory, every array sized by a bound the host knows; the counts stay on
/// the device (the edge count is indptr[n_dst], the src count n_dst + *num_new).
struct DeviceLayerBlock {
  DeviceScratch<int64_t> indptr;     // [n_dst + 1]
  DeviceScratch<int64_t> src_nodes;  // [max_src]: dst nodes, then the new nodes
  DeviceScratch<int64_t> indices;    // [max_edges]
  DeviceScratch<float> weights;      // [max_edges]
  DeviceScratch<int64_t> num_new;    // [1]
  int64_t max_src = 0;
};

/// A layer's dst rows on the device and the layout of their nonzeros in A + I: row i's CSC entries
/// in position order, then its self-loop, at [offsets[i], offsets[i + 1]). Per-nonzero kernels find
/// their row in `offsets` (segment_of, segments.hpp), so a hub row is spread over as many threads as it has
/// nonzeros. The host knows the two bounds without asking the device.
struct DstRows {
  const int64_t* ids = nullptr;      // [n] (device)
  int64_t n = 0;
  const int64_t* offsets = nullptr;  // [n + 1] (device): exclusive prefix sums of degree + 1
  int64_t nonzeros = 0;              // offsets[n]: Σ (degree + 1), a bound of candidates and edges
  int64_t max_row = 0;               // >= the longest row's degree + 1: how many levels its sum takes
};

/// offsets of DstRows for the rows dst[0, n) (n >= 1), queued on `s`.
DeviceScratch<int64_t> row_offsets(const int64_t* indptr, const int64_t* dst, int64_t n, cudaStream_t s);

/// The column of entry p of row v in A + I: its CSC entry p, or the self-loop for p = degree.
template <typename Index>
__device__ __forceinline__ int64_t nonzero_column(const TopologyRef<Index>& topo, int64_t v, int64_t p) {
  const int64_t begin = topo.indptr[v];
  return p < topo.indptr[v + 1] - begin ? topo.index(begin + p) : v;
}

/// Counts one host wait in layer_synchronisations() (layer_sampler_cuda.hpp).
void count_synchronisation() noexcept;

/// The work of build_block up to its synchronisation: the block of the rows `rows` over `cols` on
/// the device, queued on `s`, with no wait.
template <typename Index>
DeviceLayerBlock build_device_block(TopologyRef<Index> topo, const DstRows& rows, const DeviceColumns& cols,
                                    cudaStream_t s);

/// Block of the rows `rows` over the src set `cols`: edges in row order (CSC order, self-loop
/// last), row-normalised weights, compaction; host memory, after the layer's one synchronisation.
/// rows.nonzeros bounds the block's edges. `next_dst` receives the block's src nodes on the device
/// (`next_size` of them): the next layer's dst nodes.
template <typename Index>
Block build_block(TopologyRef<Index> topo, const DstRows& rows, const DeviceColumns& cols, PinnedStaging& staging,
                  DeviceScratch<int64_t>& next_dst, int64_t& next_size, cudaStream_t s);

}  // namespace graphtier::sample::cuda
