// Front door of bulk sampling: argument checks and dispatch to the host backend (cpu/) or the
// CUDA backend (cuda/); the layer loop and compaction are shared (bulk_layers.cpp).
#include "graphtier/sample/bulk_sampler.hpp"

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/sample/random.hpp"
#include "bulk_layers.hpp"
#include "bulk_matrices.hpp"
#include "bulk_row_ops.hpp"
#include "cpu/bulk_sampler_cpu.hpp"
#if GRAPHTIER_WITH_CUDA
#include "cuda/bulk_sampler_cuda.hpp"
#endif

namespace graphtier::sample {

uint64_t round_stream(uint64_t layer_stream, int64_t round) { return bulk::round_stream_of(layer_stream, round); }

void check_bulk_inputs(const SampleGraph& graph, const BulkSamplerOptions& options) {
  check_sample_graph(graph, "bulk sampler graph");
  GRAPHTIER_EXPECTS(graph.edge_weights.empty(), InvalidArgument,
                    "bulk sampling draws by edge multiplicity; edge weights are not supported");
  check_bulk_options(options);
}

void check_bulk_options(const BulkSamplerOptions& options) {
  GRAPHTIER_EXPECTS(!options.fanouts.empty(), InvalidArgument, "fanouts: at least one layer is needed");
  const bool ladies = options.algorithm == BulkAlgorithm::kLadies;
  GRAPHTIER_EXPECTS(!(ladies && options.replace), InvalidArgument, "LADIES samples without replacement");
  for (std::size_t l = 0; l < options.fanouts.size(); ++l) {
    const int64_t f = options.fanouts[l];
    // Round r of a row draws at most f numbers, indexed below 2^24 by node_bits.
    GRAPHTIER_EXPECTS(f >= (ladies ? 0 : -1) && f < kMaxDraws, InvalidArgument, "fanouts[", l, "] is ", f,
                      ladies ? ": expected a layer size in [0, 2^24)" : ": expected -1 (all), 0, or a count below 2^24");
  }
}

BulkSamplerOptions effective_bulk_options(BulkSamplerOptions options) {
  if (options.algorithm == BulkAlgorithm::kLadies) options.edge_ids = false;
  return options;
}

namespace {

bulk::LayerSampler host_layers(const BulkMatrices& m, const BulkSamplerOptions& o, ThreadPool* pool) {
  return [&m, &o, pool](const bulk::StackedFrontier& frontier, int layer) {
    const int64_t f = o.fanouts[static_cast<std::size_t>(layer)];
    return o.algorithm == BulkAlgorithm::kLadies ? cpu::ladies_layer(m, frontier, f, o.seed, pool)
                                                 : cpu::graphsage_layer(m, frontier, f, o.replace, o.seed, o.edge_ids, pool);
  };
}

/// first_stream, first_stream + 1, ...: the streams of k consecutive batches.
std::vector<uint64_t> consecutive_streams(std::size_t k, uint64_t first_stream) {
  std::vector<uint64_t> streams(k);
  for (std::size_t b = 0; b < k; ++b) streams[b] = first_stream + b;
  return streams;
}

}  // namespace

BulkSampler::BulkSampler(SampleGraph graph, BulkSamplerOptions options, ThreadPool* pool)
    : graph_(graph), options_(effective_bulk_options(std::move(options))) {
  check_bulk_inputs(graph_, options_);
  matrices_ = std::make_unique<BulkMatrices>(build_bulk_matrices(graph_, options_.algorithm, pool));
  if (options_.algorithm == BulkAlgorithm::kGraphSage) cpu::add_row_units(*matrices_, graph_.csc.indptr, pool);
}

BulkSampler::~BulkSampler() = default;
BulkSampler::BulkSampler(BulkSampler&&) noexcept = default;
BulkSampler& BulkSampler::operator=(BulkSampler&&) noexcept = default;

std::vector<MiniBatch> BulkSampler::sample(std::span<const std::span<const int64_t>> batches_of_seeds,
                                           uint64_t first_stream, ThreadPool* pool) const {
  return sample(batches_of_seeds, consecutive_streams(batches_of_seeds.size(), first_stream), pool);
}

std::vector<MiniBatch> BulkSampler::sample(std::span<const std::span<const int64_t>> batches_of_seeds,
                                           std::span<const uint64_t> streams, ThreadPool* pool) const {
  return bulk::run_layers(batches_of_seeds, streams, options_, graph_.csc.num_nodes(),
                          host_layers(*matrices_, options_, pool), pool);
}

struct CudaBulkSampler::Impl {
#if GRAPHTIER_WITH_CUDA
  std::unique_ptr<cuda::BulkDevice> device;
#endif
};

CudaBulkSampler::CudaBulkSampler(SampleGraph graph, BulkSamplerOptions options, int device, ThreadPool* pool)
    : graph_(graph), options_(effective_bulk_options(std::move(options))) {
  check_bulk_inputs(graph_, options_);
#if GRAPHTIER_WITH_CUDA
  GRAPHTIER_EXPECTS(cuda_available(), Unsupported, "CudaBulkSampler: no CUDA device is visible");
  impl_ = std::make_unique<Impl>();
  impl_->device = std::make_unique<cuda::BulkDevice>(build_bulk_matrices(graph_, options_.algorithm, pool),
                                                     options_.algorithm, device);
#else
  (void)device;
  (void)pool;
  throw Unsupported("CudaBulkSampler: this build has no CUDA backend (configure with the cuda preset)");
#endif
}

CudaBulkSampler::~CudaBulkSampler() = default;
CudaBulkSampler::CudaBulkSampler(CudaBulkSampler&&) noexcept = default;
CudaBulkSampler& CudaBulkSampler::operator=(CudaBulkSampler&&) noexcept = default;

std::vector<MiniBatch> CudaBulkSampler::sample(std::span<const std::span<const int64_t>> batches_of_seeds,
                                               uint64_t first_stream, CudaStream cuda_stream, ThreadPool* pool) const {
  return sample(batches_of_seeds, consecutive_streams(batches_of_seeds.size(), first_stream), cuda_stream, pool);
}

std::vector<MiniBatch> CudaBulkSampler::sample(std::span<const std::span<const int64_t>> batches_of_seeds,
                                               std::span<const uint64_t> streams, CudaStream cuda_stream,
                                               ThreadPool* pool) const {
#if GRAPHTIER_WITH_CUDA
  const cuda::BulkDevice& device = *impl_->device;
  const bulk::LayerSampler layers = [&](const bulk::StackedFrontier& frontier, int layer) {
    return device.host_layer(frontier, options_, layer, cuda_stream);
  };
  return bulk::run_layers(batches_of_seeds, streams, options_, graph_.csc.num_nodes(), layers, pool);
#else
  (void)batches_of_seeds;
  (void)streams;
  (void)cuda_stream;
  (void)pool;
  throw Unsupported("CudaBulkSampler: this build has no CUDA backend");
#endif
}

std::vector<DeviceMiniBatch> CudaBulkSampler::sample_device(std::span<const std::span<const int64_t>> batches_of_seeds,
                                                            uint64_t first_stream, CudaStream cuda_stream,
                                                            const BulkInputNodesSink& input_nodes) const {
  return sample_device(batches_of_seeds, consecutive_streams(batches_of_seeds.size(), first_stream), cuda_stream,
                       input_nodes);
}

std::vector<DeviceMiniBatch> CudaBulkSampler::sample_device(std::span<const std::span<const int64_t>> batches_of_seeds,
                                                            std::span<const uint64_t> streams, CudaStream cuda_stream,
                                                            const BulkInputNodesSink& input_nodes) const {
#if GRAPHTIER_WITH_CUDA
  return impl_->device->sample_device(batches_of_seeds, streams, options_, graph_.csc.num_nodes(), cuda_stream,
                                      input_nodes);
#else
  (void)batches_of_seeds;
  (void)streams;
  (void)cuda_stream;
  (void)input_nodes;
  throw Unsupported("CudaBulkSampler: this build has no CUDA backend");
#endif
}

}  // namespace graphtier::sample
