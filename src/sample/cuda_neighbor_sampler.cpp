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
#include "temporal_steps.hpp"

namespace graphtier::sample {

/// The options are checked against the topology's relations (relation_fanout_table): every other
/// option rule is independent of the graph, whose own rules DeviceTopology checked when it was built.
CudaNeighborSampler::CudaNeighborSampler(const DeviceTopology& topology, NeighborSamplerOptions options)
    : topology_(&topology), options_(std::move(options)) {
  const int32_t relations = topology.num_relations();
  fanout_table_ = relation_fanout_table(options_, relations);
  if (topology.temporal()) check_temporal_strategy(options_);
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
  // A temporal topology's bound counts a node once per tree (it also bounds untimed calls).
  if (topology_->temporal() && topology_->num_relations() == 0) {
    return cuda::temporal_device_bytes_bound(options_, layer_fanouts_, num_seeds, topology_->num_nodes(),
                                             topology_->num_edges());
  }
  return cuda::device_bytes_bound(options_, layer_fanouts_, topology_->num_relations(), num_seeds,
                                  topology_->num_nodes(), topology_->num_edges());
#else
  if (topology_->temporal() && topology_->num_relations() == 0) {
    return temporal::call_device_bytes(num_seeds, layer_fanouts_, options_.replace, options_.edge_ids,
                                       topology_->num_nodes(), topology_->num_edges());
  }
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

DeviceMiniBatch CudaNeighborSampler::sample_temporal_device(std::span<const int64_t> seeds,
                                                            std::span<const int64_t> seed_times, uint64_t stream,
                                                            CudaStream cuda_stream,
                                                            const InputNodesSink& input_nodes) const {
  GRAPHTIER_EXPECTS(topology_->temporal(), InvalidArgument,
                    "temporal sampling on the GPU reads the graph's time order: the DeviceTopology was built from a "
                    "graph without one (SampleGraph::temporal)");
  GRAPHTIER_EXPECTS(topology_->num_relations() == 0, Unsupported,
                    "temporal sampling of a typed graph runs on the CPU: no GPU typed temporal sampler yet");
  check_temporal_seeds(seeds, seed_times, topology_->num_nodes());
#if GRAPHTIER_WITH_CUDA
  return cuda::sample_temporal_device(topology_->state(), options_, fanout_table_, seeds, seed_times, stream,
                                      cuda_stream, *staging_, input_nodes);
#else
  static_cast<void>(stream);
  static_cast<void>(cuda_stream);
  static_cast<void>(input_nodes);
  throw Unsupported("CudaNeighborSampler: graphtier was built without CUDA");
#endif
}

MiniBatch CudaNeighborSampler::sample_temporal(std::span<const int64_t> seeds, std::span<const int64_t> seed_times,
                                               uint64_t stream, CudaStream cuda_stream) const {
  return sample_temporal_device(seeds, seed_times, stream, cuda_stream).to_host();
}

MiniBatch CudaNeighborSampler::sample(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream) const {
  return sample_device(seeds, stream, cuda_stream).to_host();
}

}  // namespace graphtier::sample
