// CUDA backend of layer-wise sampling (layer_sampler_cuda.cu); only compiled into CUDA builds.
#pragma once

#include <cstdint>
#include <span>

#include "graphtier/sample/layer_sampler.hpp"

namespace graphtier::sample::cuda {

/// The graph on one device: CSC (indices in their stored width) and, for FastGCN, the global draw
/// weights and their Fenwick tree. A private upload; to be unified with the neighbour sampler's
/// device topology.
struct LayerDeviceGraph;

LayerDeviceGraph* upload_layer_graph(const SampleGraph& graph, std::span<const uint64_t> fastgcn_weights,
                                     std::span<const uint64_t> fastgcn_tree, int device);
void free_layer_graph(LayerDeviceGraph* graph) noexcept;

/// The MiniBatch of `seeds` (host memory), sampled on `cuda_stream` (a cudaStream_t).
MiniBatch sample_layers(const LayerDeviceGraph& graph, const LayerSamplerOptions& options,
                        std::span<const int64_t> seeds, uint64_t stream, void* cuda_stream);

}  // namespace graphtier::sample::cuda
