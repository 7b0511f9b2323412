// Front door of DeviceTopology: argument checks, and the Unsupported answer of a build or machine
// without CUDA. The upload is in cuda/device_topology_cuda.cu.
#include "graphtier/sample/device_topology.hpp"

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "cuda/device_topology_cuda.hpp"

namespace graphtier::sample {

DeviceTopology::DeviceTopology(const SampleGraph& graph, TopologyOptions options) {
#if GRAPHTIER_WITH_CUDA
  GRAPHTIER_EXPECTS(cuda_available(), Unsupported, "DeviceTopology: no CUDA device is visible");
  check_sampler_inputs(graph, NeighborSamplerOptions{.fanouts = {0}});
  GRAPHTIER_EXPECTS(options.cache_bytes >= 0, InvalidArgument, "cache_bytes is ", options.cache_bytes, ": expected >= 0");
  GRAPHTIER_EXPECTS(options.device >= 0, InvalidArgument, "device is ", options.device, ": expected >= 0");
  state_ = cuda::upload_topology(graph, options);
#else
  throw Unsupported("DeviceTopology: graphtier was built without CUDA (configure with the 'cuda' preset)");
#endif
}

DeviceTopology::~DeviceTopology() = default;
DeviceTopology::DeviceTopology(DeviceTopology&&) noexcept = default;
DeviceTopology& DeviceTopology::operator=(DeviceTopology&&) noexcept = default;

TopologyPlacement DeviceTopology::placement() const noexcept { return state_->placement; }
int DeviceTopology::device() const noexcept { return state_->device; }
int64_t DeviceTopology::num_nodes() const noexcept { return state_->num_nodes; }
int64_t DeviceTopology::num_edges() const noexcept { return state_->num_edges; }
bool DeviceTopology::weighted() const noexcept { return state_->weighted; }
int32_t DeviceTopology::num_relations() const noexcept { return state_->num_relations; }
bool DeviceTopology::temporal() const noexcept { return state_->temporal; }
int64_t DeviceTopology::cached_nodes() const noexcept { return state_->cached_nodes; }
int64_t DeviceTopology::device_bytes() const noexcept { return state_->device_bytes; }
int64_t DeviceTopology::pinned_bytes() const noexcept { return state_->pinned_bytes; }

}  // namespace graphtier::sample
