// Front door of GPU neighbour sampling: argument checks, and the Unsupported answer of a build or
// machine without CUDA. The work is in cuda/*.cu.
#include "graphtier/sample/cuda_neighbor_sampler.hpp"

#include <utility>

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "cuda/layer_sampler_cuda.hpp"
#include "cuda/neighbor_sampler_cuda.hpp"
#include "neighbor_steps.hpp"

namespace graphtier::sample {
namespace {

/// Options are checked against an empty graph: every option rule is independent of the graph,
/// whose own rules DeviceTopology checked when it was built.
void check_options(const NeighborSamplerOptions& options) {
  static const int64_t kZero = 0;
  const SampleGraph empty{graph::CscView{std::span<const int64_t>(&kZero, 1), std::span<const int32_t>()}, {}};
  check_sampler_inputs(empty, options);
}

}  // namespace

CudaNeighborSampler::CudaNeighborSampler(const DeviceTopology& topology, NeighborSamplerOptions options)
    : topology_(&topology), options_(std::move(options)) {
  check_options(options_);
#if GRAPHTIER_WITH_CUDA
  staging_ = cuda::make_staging_pool();
#endif
}

int64_t CudaNeighborSampler::device_bytes_bound(int64_t num_seeds) const {
#if GRAPHTIER_WITH_CUDA
  // From the CUDA translation unit, which compiles the sampler's bounds (neighbor_steps.hpp) for
  // its own sizing: one compiler emits them, so no two definitions of one inline function differ.
  return cuda::device_bytes_bound(options_, num_seeds, topology_->num_nodes(), topology_->num_edges());
#else
  return nbr::call_device_bytes(num_seeds, options_.fanouts, options_.replace, options_.edge_ids,
                                topology_->num_nodes(), topology_->num_edges());
#endif
}

DeviceMiniBatch CudaNeighborSampler::sample_device(std::span<const int64_t> seeds, uint64_t stream,
                                                   CudaStream cuda_stream, const InputNodesSink& input_nodes) const {
  check_seeds(seeds, topology_->num_nodes());
#if GRAPHTIER_WITH_CUDA
  return cuda::sample_device(topology_->state(), options_, seeds, stream, cuda_stream, *staging_, input_nodes);
#else
  static_cast<void>(input_nodes);
  throw Unsupported("CudaNeighborSampler: graphtier was built without CUDA");
#endif
}

MiniBatch CudaNeighborSampler::sample(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream) const {
  return sample_device(seeds, stream, cuda_stream).to_host();
}

}  // namespace graphtier::sample
