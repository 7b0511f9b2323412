// The front door of sampling (sampler.hpp): the method table, the spec's translation into each
// backend's options, and make_sampler's choice of backend. Each backend is wrapped as it is; the
// wrappers add no work of their own.
#include "graphtier/sample/sampler.hpp"

#include <array>
#include <string>
#include <utility>

#include "graphtier/core/error.hpp"

namespace graphtier::sample {
namespace {

constexpr std::array<SamplerMethod, 3> kMethods{{
    {"neighbor", SamplerKind::kNeighbor, /*replace=*/true, /*bulk=*/true, /*rows=*/true},
    {"ladies", SamplerKind::kLadies, /*replace=*/false, /*bulk=*/true, /*rows=*/true},
    {"fastgcn", SamplerKind::kFastGcn, /*replace=*/false, /*bulk=*/false, /*rows=*/false},
}};

void check_sizes(std::size_t batches, std::size_t streams) {
  GRAPHTIER_EXPECTS(batches == streams, InvalidArgument, "bulk sampling: ", batches, " batches of seeds and ",
                    streams, " streams");
}

/// NeighborSampler, LayerSampler: one minibatch per call on the CPU.
template <typename Backend>
class CpuSampler final : public Sampler {
 public:
  template <typename Options>
  CpuSampler(const SampleGraph& graph, Options options) : backend_(graph, std::move(options)) {}
  int device() const noexcept override { return -1; }
  MiniBatch sample(std::span<const int64_t> seeds, uint64_t stream, CudaStream, ThreadPool* pool) const override {
    return backend_.sample(seeds, stream, pool);
  }
  MiniBatch sample_temporal(std::span<const int64_t> seeds, std::span<const int64_t> seed_times, uint64_t stream,
                            CudaStream cuda_stream, ThreadPool* pool) const override {
    if constexpr (requires { backend_.sample_temporal(seeds, seed_times, stream, pool); }) {
      return backend_.sample_temporal(seeds, seed_times, stream, pool);
    } else {
      return Sampler::sample_temporal(seeds, seed_times, stream, cuda_stream, pool);
    }
  }

 private:
  Backend backend_;
};

/// CudaNeighborSampler, CudaLayerSampler: one minibatch per call on a GPU.
template <typename Backend>
class GpuSampler final : public Sampler {
 public:
  template <typename... Args>
  explicit GpuSampler(const DeviceTopology& topology, Args&&... args)
      : backend_(topology, std::forward<Args>(args)...), device_(topology.device()) {}
  int device() const noexcept override { return device_; }
  MiniBatch sample(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream,
                   ThreadPool*) const override {
    return backend_.sample(seeds, stream, cuda_stream);
  }
  MiniBatch sample_temporal(std::span<const int64_t> seeds, std::span<const int64_t> seed_times, uint64_t stream,
                            CudaStream cuda_stream, ThreadPool* pool) const override {
    if constexpr (requires { backend_.sample_temporal(seeds, seed_times, stream, cuda_stream); }) {
      return backend_.sample_temporal(seeds, seed_times, stream, cuda_stream);
    } else {
      return Sampler::sample_temporal(seeds, seed_times, stream, cuda_stream, pool);
    }
  }
  DeviceMiniBatch sample_device(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream,
                                const InputNodesSink& input_nodes) const override {
    return backend_.sample_device(seeds, stream, cuda_stream, input_nodes);
  }
  int64_t device_bytes_bound(int64_t num_seeds) const override {
    if constexpr (requires { backend_.device_bytes_bound(num_seeds); }) {
      return backend_.device_bytes_bound(num_seeds);
    } else {
      return -1;
    }
  }

 private:
  Backend backend_;
  int device_;
};

/// BulkSampler: k minibatches per call on the CPU; one minibatch is a bulk call of one.
class CpuBulkSampler final : public Sampler {
 public:
  CpuBulkSampler(const SampleGraph& graph, BulkSamplerOptions options, ThreadPool* pool)
      : backend_(graph, std::move(options), pool) {}
  int device() const noexcept override { return -1; }
  bool bulk() const noexcept override { return true; }
  MiniBatch sample(std::span<const int64_t> seeds, uint64_t stream, CudaStream, ThreadPool* pool) const override {
    const std::span<const int64_t> one[1] = {seeds};
    return std::move(backend_.sample(one, stream, pool).front());
  }
  std::vector<MiniBatch> sample_bulk(std::span<const std::span<const int64_t>> seeds, std::span<const uint64_t> streams,
                                     CudaStream, ThreadPool* pool) const override {
    return backend_.sample(seeds, streams, pool);
  }

 private:
  BulkSampler backend_;
};

/// CudaBulkSampler: k minibatches per call on a GPU.
class GpuBulkSampler final : public Sampler {
 public:
  GpuBulkSampler(const SampleGraph& graph, BulkSamplerOptions options, int device, ThreadPool* pool)
      : backend_(graph, std::move(options), device, pool), device_(device) {}
  int device() const noexcept override { return device_; }
  bool bulk() const noexcept override { return true; }
  MiniBatch sample(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream,
                   ThreadPool* pool) const override {
    const std::span<const int64_t> one[1] = {seeds};
    return std::move(backend_.sample(one, stream, cuda_stream, pool).front());
  }
  DeviceMiniBatch sample_device(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream,
                                const InputNodesSink& input_nodes) const override {
    const std::span<const int64_t> one[1] = {seeds};
    BulkInputNodesSink sink;
    if (input_nodes) sink = [&](int64_t, int64_t bound) { return input_nodes(bound); };
    return std::move(backend_.sample_device(one, stream, cuda_stream, sink).front());
  }
  std::vector<MiniBatch> sample_bulk(std::span<const std::span<const int64_t>> seeds, std::span<const uint64_t> streams,
                                     CudaStream cuda_stream, ThreadPool* pool) const override {
    return backend_.sample(seeds, streams, cuda_stream, pool);
  }
  std::vector<DeviceMiniBatch> sample_bulk_device(std::span<const std::span<const int64_t>> seeds,
                                                  std::span<const uint64_t> streams, CudaStream cuda_stream,
                                                  const BulkInputNodesSink& input_nodes) const override {
    return backend_.sample_device(seeds, streams, cuda_stream, input_nodes);
  }

 private:
  CudaBulkSampler backend_;
  int device_;
};

}  // namespace

std::span<const SamplerMethod> sampler_methods() noexcept { return kMethods; }

const SamplerMethod& sampler_method(std::string_view name) {
  for (const SamplerMethod& m : kMethods) {
    if (m.name == name) return m;
  }
  std::string known;
  for (std::size_t i = 0; i < kMethods.size(); ++i) {
    known += (i == 0 ? "" : i + 1 == kMethods.size() ? " or " : ", ") + std::string(kMethods[i].name);
  }
  throw InvalidArgument("unknown sampler '" + std::string(name) + "' (expected " + known + ")");
}

const SamplerMethod& sampler_method(SamplerKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  GRAPHTIER_EXPECTS(i < kMethods.size(), InvalidArgument, "unknown sampler kind ", i);
  return kMethods[i];
}

namespace {

/// The methods without a per-relation sampler take neither relation fanouts nor a typed graph.
void check_untyped(const SamplerSpec& spec, std::string_view sampler) {
  GRAPHTIER_EXPECTS(spec.relation_fanouts.empty(), InvalidArgument, "relation_fanouts: the ", sampler,
                    " sampler has no per-relation fanouts (only the neighbor method, bulk 0, has)");
}

void check_replace(const SamplerSpec& spec) {
  GRAPHTIER_EXPECTS(!spec.replace || sampler_method(spec.kind).replace, InvalidArgument,
                    "replace applies to the neighbor sampler only (", sampler_method(spec.kind).name,
                    " draws without replacement)");
}

}  // namespace

NeighborSamplerOptions neighbor_options(const SamplerSpec& spec) {
  GRAPHTIER_EXPECTS(spec.kind == SamplerKind::kNeighbor, InvalidArgument, "the ", sampler_method(spec.kind).name,
                    " method has no neighbour sampler");
  return {.fanouts = spec.fanouts,
          .relation_fanouts = spec.relation_fanouts,
          .replace = spec.replace,
          .edge_ids = spec.edge_ids,
          .seed = spec.seed,
          .temporal_strategy = spec.temporal_strategy};
}

LayerSamplerOptions layer_options(const SamplerSpec& spec) {
  GRAPHTIER_EXPECTS(spec.kind != SamplerKind::kNeighbor, InvalidArgument,
                    "the neighbor method has no layer-wise sampler");
  check_replace(spec);
  check_untyped(spec, sampler_method(spec.kind).name);
  return {.layer_sizes = spec.fanouts,
          .method = spec.kind == SamplerKind::kLadies ? LayerMethod::kLadies : LayerMethod::kFastGcn,
          .seed = spec.seed};
}

BulkSamplerOptions bulk_options(const SamplerSpec& spec) {
  const SamplerMethod& m = sampler_method(spec.kind);
  GRAPHTIER_EXPECTS(m.bulk, InvalidArgument, "bulk sampling has no ", m.name, " sampler (bulk with ", m.name,
                    "): use neighbor or ladies, or bulk 0");
  check_replace(spec);
  check_untyped(spec, "bulk");
  return {.algorithm = spec.kind == SamplerKind::kLadies ? BulkAlgorithm::kLadies : BulkAlgorithm::kGraphSage,
          .fanouts = spec.fanouts,
          .replace = spec.replace,
          .edge_ids = spec.edge_ids,
          .seed = spec.seed};
}

bool uses_device_topology(const SamplerSpec& spec) noexcept { return !spec.bulk; }

MiniBatch Sampler::sample_temporal(std::span<const int64_t>, std::span<const int64_t>, uint64_t, CudaStream,
                                   ThreadPool*) const {
  throw Unsupported("sample_temporal: temporal sampling is the neighbour sampler's (bulk 0)");
}

DeviceMiniBatch Sampler::sample_device(std::span<const int64_t>, uint64_t, CudaStream, const InputNodesSink&) const {
  throw Unsupported("sample_device: this sampler runs on the CPU (no device form)");
}

std::vector<MiniBatch> Sampler::sample_bulk(std::span<const std::span<const int64_t>> seeds,
                                            std::span<const uint64_t> streams, CudaStream cuda_stream,
                                            ThreadPool* pool) const {
  check_sizes(seeds.size(), streams.size());
  std::vector<MiniBatch> out;
  out.reserve(seeds.size());
  for (std::size_t b = 0; b < seeds.size(); ++b) out.push_back(sample(seeds[b], streams[b], cuda_stream, pool));
  return out;
}

std::vector<DeviceMiniBatch> Sampler::sample_bulk_device(std::span<const std::span<const int64_t>> seeds,
                                                         std::span<const uint64_t> streams, CudaStream cuda_stream,
                                                         const BulkInputNodesSink& input_nodes) const {
  check_sizes(seeds.size(), streams.size());
  std::vector<DeviceMiniBatch> out;
  out.reserve(seeds.size());
  for (std::size_t b = 0; b < seeds.size(); ++b) {
    InputNodesSink sink;
    if (input_nodes) sink = [&](int64_t bound) { return input_nodes(static_cast<int64_t>(b), bound); };
    out.push_back(sample_device(seeds[b], streams[b], cuda_stream, sink));
  }
  return out;
}

std::unique_ptr<Sampler> make_sampler(const SamplerSpec& spec, const SampleGraph& graph,
                                      const SamplerResources& resources) {
  const SamplerMethod& method = sampler_method(spec.kind);
  const bool gpu = resources.device >= 0;
  // Typed graphs: the one-at-a-time neighbour sampler, on the CPU or the GPU; the layer-wise and
  // bulk samplers have no per-relation form.
  if (!graph.hetero.empty()) {
    GRAPHTIER_EXPECTS(spec.kind == SamplerKind::kNeighbor && !spec.bulk, InvalidArgument,
                      "a typed graph (node and edge types) is sampled per relation by the neighbor method with bulk 0, not ",
                      spec.bulk ? "bulk " : "", method.name);
  }
  if (graph.temporal != nullptr) {
    GRAPHTIER_EXPECTS(spec.kind == SamplerKind::kNeighbor && !spec.bulk, InvalidArgument,
                      "temporal sampling is the neighbor method's with bulk 0, not ", spec.bulk ? "bulk " : "",
                      method.name);
    GRAPHTIER_EXPECTS(!gpu || graph.hetero.empty(), Unsupported,
                      "temporal sampling of a typed graph runs on the CPU: no GPU typed temporal sampler yet");
    GRAPHTIER_EXPECTS(!gpu || resources.topology == nullptr || resources.topology->temporal(), InvalidArgument,
                      "GPU temporal sampling reads the graph's time order from its DeviceTopology: build the "
                      "topology from the temporal graph (SampleGraph::temporal)");
  }
  if (spec.bulk) {
    if (gpu) return std::make_unique<GpuBulkSampler>(graph, bulk_options(spec), resources.device, resources.pool);
    return std::make_unique<CpuBulkSampler>(graph, bulk_options(spec), resources.pool);
  }
  if (gpu) {
    GRAPHTIER_EXPECTS(resources.topology != nullptr, InvalidArgument, "GPU ", sampler_method(spec.kind).name,
                      " sampling reads the graph from a DeviceTopology: none was given");
    const DeviceTopology& topology = *resources.topology;
    GRAPHTIER_EXPECTS(topology.device() == resources.device, InvalidArgument, "sampling on GPU ", resources.device,
                      " from a topology on GPU ", topology.device());
    GRAPHTIER_EXPECTS(topology.num_relations() == graph.hetero.num_relations(), InvalidArgument,
                      "the DeviceTopology has ", topology.num_relations(), " relations, the graph ",
                      graph.hetero.num_relations(), ": build the topology from the graph that is sampled");
    if (spec.kind == SamplerKind::kNeighbor) {
      return std::make_unique<GpuSampler<CudaNeighborSampler>>(topology, neighbor_options(spec));
    }
    return std::make_unique<GpuSampler<CudaLayerSampler>>(topology, graph, layer_options(spec));
  }
  if (spec.kind == SamplerKind::kNeighbor) return std::make_unique<CpuSampler<NeighborSampler>>(graph, neighbor_options(spec));
  return std::make_unique<CpuSampler<LayerSampler>>(graph, layer_options(spec));
}

}  // namespace graphtier::sample
