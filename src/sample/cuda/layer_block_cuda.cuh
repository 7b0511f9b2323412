// The steps of the CUDA layer sampler shared between its files: the device graph, a block's src
// set, and building the block (layer_block_cuda.cu). Only included by .cu files.
#pragma once

#include <cstdint>

#include "graphtier/core/memory.hpp"
#include "graphtier/sample/minibatch.hpp"
#include "cuda/cuda_scratch.cuh"

namespace graphtier::sample::cuda {

struct LayerDeviceGraph {
  int device = 0;
  int64_t num_nodes = 0;
  bool wide_indices = false;  // int64 indices, else int32
  Buffer indptr;              // int64 [num_nodes + 1]
  Buffer indices;             // int32 or int64 [num_edges]
  Buffer fastgcn_weights;     // uint64 [num_nodes] (FastGCN only)
  Buffer fastgcn_tree;        // uint64 [num_nodes], Fenwick tree of the weights (FastGCN only)
};

/// The src set of a block (ascending ids) and the w_u of each.
struct DeviceColumns {
  Scratch<int64_t> ids;
  Scratch<uint64_t> weights;
  int64_t size = 0;
};

/// Block of the rows dst[0, n_dst) (device) over the src set `cols`: edges in row order (CSC
/// order, self-loop last), row-normalised weights, compaction; host memory. `next_dst` receives
/// the block's src nodes on the device (`next_size` of them): the next layer's dst nodes.
template <typename Index>
Block build_block(const LayerDeviceGraph& g, const Index* indices, const int64_t* dst, int64_t n_dst,
                  const DeviceColumns& cols, Scratch<int64_t>& next_dst, int64_t& next_size, cudaStream_t s);

}  // namespace graphtier::sample::cuda
