// Front door of layer-wise sampling: argument checks, and the layer loop of the CPU backend
// (steps in cpu/layer_sampler_cpu.cpp); the CUDA backend in cuda/layer_sampler_cuda.cu.
#include "graphtier/sample/layer_sampler.hpp"

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/sample/random.hpp"
#include "cpu/layer_sampler_cpu.hpp"
#if GRAPHTIER_WITH_CUDA
#include "cuda/layer_sampler_cuda.hpp"
#endif

namespace graphtier::sample {

void check_layer_sampler_inputs(const SampleGraph& graph, const LayerSamplerOptions& options) {
  check_sample_graph(graph, "layer sampler graph");
  GRAPHTIER_EXPECTS(graph.edge_weights.empty(), InvalidArgument,
                    "layer samplers (LADIES, FastGCN) use the graph's structure only: edge weights are not supported");
  GRAPHTIER_EXPECTS(!options.layer_sizes.empty(), InvalidArgument, "layer sizes: at least one layer is needed");
  for (std::size_t l = 0; l < options.layer_sizes.size(); ++l) {
    const int64_t s = options.layer_sizes[l];
    GRAPHTIER_EXPECTS(s >= -1 && s < kMaxDraws, InvalidArgument, "layer_sizes[", l, "] is ", s,
                      ": expected -1 (every candidate), 0, or a count below 2^24");
  }
  GRAPHTIER_EXPECTS(options.method == LayerMethod::kLadies || options.method == LayerMethod::kFastGcn,
                    InvalidArgument, "unknown layer sampling method ", static_cast<int>(options.method));
}

LayerSampler::LayerSampler(SampleGraph graph, LayerSamplerOptions options)
    : graph_(graph), options_(std::move(options)) {
  check_layer_sampler_inputs(graph_, options_);
  if (options_.method == LayerMethod::kFastGcn) {
    fastgcn_weights_ = cpu::fastgcn_weights(graph_.csc);
    fastgcn_tree_ = cpu::race_tree(fastgcn_weights_);
  }
}

MiniBatch LayerSampler::sample(std::span<const int64_t> seeds, uint64_t stream, ThreadPool* pool) const {
  check_seeds(seeds, graph_.csc.num_nodes());
  MiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  batch.blocks.reserve(options_.layer_sizes.size());
  std::span<const int64_t> dst = batch.seeds;
  for (std::size_t l = 0; l < options_.layer_sizes.size(); ++l) {
    const uint64_t ls = layer_stream(stream, static_cast<int>(l));
    const int64_t size = options_.layer_sizes[l];
    const cpu::WeightedNodes columns =
        options_.method == LayerMethod::kLadies
            ? cpu::ladies_columns(graph_.csc, dst, size, options_.seed, ls)
            : cpu::fastgcn_columns(fastgcn_weights_, fastgcn_tree_, dst, size, options_.seed, ls);
    batch.blocks.push_back(cpu::build_layer_block(graph_.csc, dst, columns, pool));
    dst = batch.blocks.back().src_nodes;
  }
  return batch;
}

namespace {

/// The topology must be `graph`'s (as far as its sizes tell) and unweighted, as the graph.
void check_topology(const DeviceTopology& topology, const SampleGraph& graph) {
  GRAPHTIER_EXPECTS(topology.num_nodes() == graph.csc.num_nodes() && topology.num_edges() == graph.csc.num_edges(),
                    InvalidArgument, "CudaLayerSampler: the topology has ", topology.num_nodes(), " nodes and ",
                    topology.num_edges(), " edges, the graph ", graph.csc.num_nodes(), " and ", graph.csc.num_edges());
  GRAPHTIER_EXPECTS(!topology.weighted(), InvalidArgument,
                    "layer samplers (LADIES, FastGCN) use the graph's structure only: the topology has edge weights");
}

}  // namespace

#if GRAPHTIER_WITH_CUDA

struct CudaLayerSampler::Impl {
  LayerSamplerOptions options;
  int64_t num_nodes = 0;
  cuda::LayerDeviceGraph* graph = nullptr;
  ~Impl() { cuda::free_layer_graph(graph); }
};

CudaLayerSampler::CudaLayerSampler(const DeviceTopology& topology, SampleGraph graph, LayerSamplerOptions options) {
  check_layer_sampler_inputs(graph, options);
  check_topology(topology, graph);
  impl_ = std::make_unique<Impl>();
  impl_->options = std::move(options);
  impl_->num_nodes = graph.csc.num_nodes();
  // FastGCN's global weights are computed once on the host (the same code as the CPU backend)
  // and uploaded: an O(E) pass per sampler, not per batch.
  std::vector<uint64_t> weights, tree;
  if (impl_->options.method == LayerMethod::kFastGcn) {
    weights = cpu::fastgcn_weights(graph.csc);
    tree = cpu::race_tree(weights);
  }
  impl_->graph = cuda::upload_layer_graph(topology, graph.csc.indptr, weights, tree);
}

MiniBatch CudaLayerSampler::sample(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream) const {
  GRAPHTIER_EXPECTS(impl_ != nullptr, InvalidArgument, "CudaLayerSampler: sample() on a moved-from sampler");
  check_seeds(seeds, impl_->num_nodes);
  return cuda::sample_layers(*impl_->graph, impl_->options, seeds, stream, cuda_stream);
}

DeviceMiniBatch CudaLayerSampler::sample_device(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream,
                                                const InputNodesSink& input_nodes) const {
  GRAPHTIER_EXPECTS(impl_ != nullptr, InvalidArgument, "CudaLayerSampler: sample_device() on a moved-from sampler");
  check_seeds(seeds, impl_->num_nodes);
  return cuda::sample_layers_device(*impl_->graph, impl_->options, seeds, stream, cuda_stream, input_nodes);
}

#else

struct CudaLayerSampler::Impl {
  LayerSamplerOptions options;
};

CudaLayerSampler::CudaLayerSampler(const DeviceTopology& topology, SampleGraph graph, LayerSamplerOptions options) {
  check_layer_sampler_inputs(graph, options);
  check_topology(topology, graph);
  throw Unsupported("CudaLayerSampler: this build has no CUDA backend (configure with the cuda preset)");
}

MiniBatch CudaLayerSampler::sample(std::span<const int64_t>, uint64_t, CudaStream) const {
  throw Unsupported("CudaLayerSampler: this build has no CUDA backend (configure with the cuda preset)");
}

DeviceMiniBatch CudaLayerSampler::sample_device(std::span<const int64_t>, uint64_t, CudaStream,
                                                const InputNodesSink&) const {
  throw Unsupported("CudaLayerSampler: this build has no CUDA backend (configure with the cuda preset)");
}

#endif

CudaLayerSampler::~CudaLayerSampler() = default;
CudaLayerSampler::CudaLayerSampler(CudaLayerSampler&&) noexcept = default;
CudaLayerSampler& CudaLayerSampler::operator=(CudaLayerSampler&&) noexcept = default;

const LayerSamplerOptions& CudaLayerSampler::options() const noexcept { return impl_->options; }

}  // namespace graphtier::sample
