// The steps of the CUDA layer sampler shared between its files: the device graph, a block's src
// set, and building the block (layer_block_cuda.cu). Only included by .cu files.
#pragma once

#include <cstdint>
#include <utility>

#include "graphtier/core/memory.hpp"
#include "graphtier/sample/device_topology.hpp"
#include "graphtier/sample/minibatch.hpp"
#include "cuda/cuda_util.cuh"
#include "cuda/topology_ref.cuh"

namespace graphtier::sample::cuda {

/// The graph on one device: the shared DeviceTopology (read through TopologyRef) and, for FastGCN,
/// the global draw weights and the internal nodes of their race tree (layer_draws.hpp), uploaded
/// once and only read by the draws.
struct LayerDeviceGraph {
  LayerDeviceGraph(DeviceTopology t, Buffer weights, Buffer tree)
      : topology(std::move(t)), fastgcn_weights(std::move(weights)), fastgcn_tree(std::move(tree)) {}

  DeviceTopology topology;
  Buffer fastgcn_weights;  // uint64 [num_nodes] (FastGCN only)
  Buffer fastgcn_tree;     // uint64 [2^race_levels(num_nodes)], the race tree's internal nodes (FastGCN only)
};

/// The src set of a block (ascending ids) and the w_u of each.
struct DeviceColumns {
  DeviceScratch<int64_t> ids;
  DeviceScratch<uint64_t> weights;
  int64_t size = 0;
};

/// Block of the rows dst[0, n_dst) (device) over the src set `cols`: edges in row order (CSC
/// order, self-loop last), row-normalised weights, compaction; host memory. `next_dst` receives
/// the block's src nodes on the device (`next_size` of them): the next layer's dst nodes.
template <typename Index>
Block build_block(TopologyRef<Index> topo, const int64_t* dst, int64_t n_dst, const DeviceColumns& cols,
                  DeviceScratch<int64_t>& next_dst, int64_t& next_size, cudaStream_t s);

}  // namespace graphtier::sample::cuda
