// Front door of GPU neighbour sampling: argument checks, and the Unsupported answer of a build or
// machine without CUDA. The work is in cuda/*.cu.
#include "graphtier/sample/cuda_neighbor_sampler.hpp"

#include <algorithm>
#include <utility>

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "cuda/layer_sampler_cuda.hpp"
#include "cuda/neighbor_sampler_cuda.hpp"
#include "hetero_steps.hpp"
#include "neighbor_steps.hpp"

namespace graphtier::sample {

/// The options are checked against the topology's relations (relation_fanout_table): every other
/// option rule is independent of the graph, whose own rules DeviceTopology checked when it was built.
CudaNeighborSampler::CudaNeighborSampler(const DeviceTopology& topology, NeighborSamplerOptions options)
    : topology_(&topology), options_(std::move(options)) {
  const int32_t relations = topology.num_relations();
  fanout_table_ = relation_fanout_table(options_, relations);
  const auto width = static_cast<std::size_t>(std::max<int32_t>(relations, 1));
  for (std::size_t l = 0; l < fanout_table_.size() / width; ++l) {
    const std::span<const int64_t> fanouts(fanout_table_.data() + l * width, width);
    layer_fanouts_.push_back(relations > 0 ? typed::layer_fanout_bound(fanouts) : fanouts[0]);
  }
#if GRAPHTIER_WITH_CUDA
  staging_ = cuda::make_staging_pool();
#endif
}

int64_t CudaNeighborSampler::device_bytes_bound(int64_t num_seeds) const {
#if GRAPHTIER_WITH_CUDA
  // From the CUDA translation unit, which compiles the sampler's bounds (neighbor_steps.hpp) for
  // its own sizing: one compiler emits them, so no two definitions of one inline function differ.
  return cuda::device_bytes_bound(options_, layer_fanouts_, topology_->num_relations(), num_seeds,
                                  topology_->num_nodes(), topology_->num_edges());
#else
  return nbr::call_device_bytes(num_seeds, layer_fanouts_, options_.replace, options_.edge_ids,
                                topology_->num_nodes(), topology_->num_edges(), topology_->num_relations());
#endif
}

DeviceMiniBatch CudaNeighborSampler::sample_device(std::span<const int64_t> seeds, uint64_t stream,
                                                   CudaStream cuda_stream, const InputNodesSink& input_nodes) const {
  check_seeds(seeds, topology_->num_nodes());
#if GRAPHTIER_WITH_CUDA
  return cuda::sample_device(topology_->state(), options_, fanout_table_, seeds, stream, cuda_stream, *staging_,
                             input_nodes);
#else
  static_cast<void>(input_nodes);
  throw Unsupported("CudaNeighborSampler: graphtier was built without CUDA");
#endif
}

MiniBatch CudaNeighborSampler::sample(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream) const {
  return sample_device(seeds, stream, cuda_stream).to_host();
}

}  // namespace graphtier::sample
