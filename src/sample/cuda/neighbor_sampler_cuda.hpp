// The CUDA entry points behind the front door of GPU neighbour sampling
// (src/sample/cuda_neighbor_sampler.cpp). Plain C++; CUDA builds only.
#pragma once

#include <cstdint>
#include <span>

#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/sample/cuda_neighbor_sampler.hpp"

namespace graphtier::sample::cuda {

/// The layer loop on the GPU; inputs already validated.
DeviceMiniBatch sample_device(const DeviceTopology::State& topology, const NeighborSamplerOptions& options,
                              std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream);

/// Copies `count` int64 from device memory to the host after the work queued on `stream`.
void copy_to_host(int64_t* dst, const int64_t* src, int64_t count, CudaStream stream, int device);

/// Waits for `stream`.
void synchronize(CudaStream stream, int device);

}  // namespace graphtier::sample::cuda
