// CUDA backend of layer-wise sampling (layer_sampler_cuda.cu); only compiled into CUDA builds.
#pragma once

#include <cstdint>
#include <span>

#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/sample/device_topology.hpp"
#include "graphtier/sample/minibatch.hpp"
#include "graphtier/sample/layer_sampler.hpp"

namespace graphtier::sample::cuda {

/// The graph on one device: its DeviceTopology and, for FastGCN, the global draw weights and their
/// race tree (layer_block_cuda.cuh).
struct LayerDeviceGraph;

/// Borrows `topology` (on the device the FastGCN arrays go to); copies the host row pointers.
LayerDeviceGraph* upload_layer_graph(const DeviceTopology& topology, std::span<const int64_t> host_indptr,
                                     std::span<const uint64_t> fastgcn_weights, std::span<const uint64_t> fastgcn_tree);
void free_layer_graph(LayerDeviceGraph* graph) noexcept;

/// Host waits of every sample_layers call in this process so far: the tests check the budget of one
/// per non-empty layer against it.
uint64_t layer_synchronisations() noexcept;

/// The MiniBatch of `seeds` (host memory), sampled on `cuda_stream`.
MiniBatch sample_layers(const LayerDeviceGraph& graph, const LayerSamplerOptions& options,
                        std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream);

/// The same sample left in device memory (CudaLayerSampler::sample_device).
DeviceMiniBatch sample_layers_device(const LayerDeviceGraph& graph, const LayerSamplerOptions& options,
                                     std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream,
                                     const InputNodesSink& input_nodes);

}  // namespace graphtier::sample::cuda
