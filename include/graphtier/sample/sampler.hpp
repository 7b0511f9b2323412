// The one front door of sampling: a SamplerSpec (which method, its fanouts and draws) and the
// resources handed in (a GPU and the graph's copy there, a pool) choose the backend, as
// FeatureStore::gather chooses its path from where the data lives. Every backend answers the same
// Sampler interface: one minibatch at a time, in host or device memory, and k at once (one call of
// the bulk matrix samplers, one after another for the others).
//
//   method     bulk   resources.device   backend
//   neighbor   no     -1                 NeighborSampler            (neighbor_sampler.hpp)
//   neighbor   no     >= 0               CudaNeighborSampler        (cuda_neighbor_sampler.hpp)
//   (a temporal graph: the neighbor method, bulk 0, on either; the GPU's untyped only)
//   ladies     no     -1 / >= 0          LayerSampler / CudaLayerSampler (layer_sampler.hpp)
//   fastgcn    no     -1 / >= 0          LayerSampler / CudaLayerSampler
//   neighbor   yes    -1 / >= 0          BulkSampler / CudaBulkSampler, GraphSAGE (bulk_sampler.hpp)
//   ladies     yes    -1 / >= 0          BulkSampler / CudaBulkSampler, LADIES
//
// The method names ("neighbor", "ladies", "fastgcn") exist here only: the loader, the CLI and the
// Python bindings (graphtier._core.sampler_methods) parse them with sampler_method().
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/sample/bulk_sampler.hpp"
#include "graphtier/sample/cuda_neighbor_sampler.hpp"
#include "graphtier/sample/device_topology.hpp"
#include "graphtier/sample/layer_sampler.hpp"
#include "graphtier/sample/minibatch.hpp"
#include "graphtier/sample/neighbor_sampler.hpp"
#include "graphtier/sample/sample_graph.hpp"

namespace graphtier::sample {

enum class SamplerKind : uint8_t { kNeighbor, kLadies, kFastGcn };

/// One sampling method: its name and what it offers.
struct SamplerMethod {
  std::string_view name;
  SamplerKind kind;
  bool replace;  // draws with replacement on request (SamplerSpec::replace)
  bool bulk;     // has a bulk matrix sampler (SamplerSpec::bulk)
  bool rows;     // draws a layer from fetched neighbour rows (row_sampling.hpp: the distributed sampler)
};

/// Every method, in SamplerKind order.
std::span<const SamplerMethod> sampler_methods() noexcept;
/// The method named `name`, or of `kind`; throws InvalidArgument naming it (and listing the known
/// names).
const SamplerMethod& sampler_method(std::string_view name);
const SamplerMethod& sampler_method(SamplerKind kind);

/// What to sample, whatever the backend.
struct SamplerSpec {
  SamplerKind kind = SamplerKind::kNeighbor;
  /// Neighbour fanouts (kNeighbor) or nodes drawn per layer (layer-wise), blocks[0] first; -1 = all.
  /// On a typed graph (SampleGraph::hetero): every relation's, unless relation_fanouts gives its own.
  std::vector<int64_t> fanouts;
  /// kNeighbor on a typed graph: relation r's fanouts per block, or an empty list for `fanouts`
  /// (NeighborSamplerOptions::relation_fanouts). Empty: every relation takes `fanouts`.
  std::vector<std::vector<int64_t>> relation_fanouts{};
  bool replace = false;  // methods with SamplerMethod::replace only
  bool edge_ids = true;  // fill Block::edge_ids (the layer-wise samplers never do)
  uint64_t seed = 0;
  /// kNeighbor over a graph with SampleGraph::temporal: which eligible neighbours are taken.
  TemporalStrategy temporal_strategy = TemporalStrategy::kUniform;
  /// The bulk matrix sampler of the method (SamplerMethod::bulk): its blocks differ from the
  /// one-at-a-time sampler's (docs/architecture.md, MiniBatch).
  bool bulk = false;
};

/// The backends' own options for `spec`; each throws InvalidArgument when the spec asks for what
/// that backend lacks (a method it has no sampler for, replace without SamplerMethod::replace).
NeighborSamplerOptions neighbor_options(const SamplerSpec& spec);
LayerSamplerOptions layer_options(const SamplerSpec& spec);
BulkSamplerOptions bulk_options(const SamplerSpec& spec);

/// What a sampler borrows (all of it must outlive the sampler).
struct SamplerResources {
  /// The GPU to sample on (a CUDA build), or -1 for the CPU.
  int device = -1;
  /// The graph's copy on `device`, which the GPU neighbour and layer-wise samplers read (required
  /// for them, see uses_device_topology); the bulk sampler keeps matrices of its own instead.
  const DeviceTopology* topology = nullptr;
  /// Builds the bulk sampler's matrices; optional.
  ThreadPool* pool = nullptr;
};

/// Whether make_sampler(spec, .., {device >= 0}) reads a DeviceTopology: every GPU sampler but bulk.
bool uses_device_topology(const SamplerSpec& spec) noexcept;

/// One interface over every backend. Thread-safe: several threads may sample at once (GPU
/// samplers: each on its own CUDA stream). Minibatch `stream` picks the draws (sample/epoch.hpp),
/// so a batch does not depend on the backend, the pool or the other batches of a bulk call.
class Sampler {
 public:
  virtual ~Sampler() = default;

  /// The GPU it samples on, -1 for the CPU.
  virtual int device() const noexcept = 0;
  /// Whether sample_bulk is one call of a bulk matrix sampler (true) or a loop over sample().
  virtual bool bulk() const noexcept { return false; }

  /// The minibatch of `seeds` (host memory; checked: OutOfRange, InvalidArgument for repeats) in
  /// host memory. `cuda_stream`: where a GPU sampler works (it returns when the batch is on the
  /// host). `pool`: a CPU sampler's parallelism within the call; the result does not depend on it.
  virtual MiniBatch sample(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream = {},
                           ThreadPool* pool = nullptr) const = 0;
  /// Temporal sampling (temporal.hpp) of `seeds` at `seed_times` ([seeds]): disjoint trees, blocks
  /// with src_trees, in host memory. The neighbour sampler (bulk 0) of a graph with a TemporalIndex
  /// only, on the CPU or the GPU (`cuda_stream`: where it works, as in sample); the others throw
  /// Unsupported.
  virtual MiniBatch sample_temporal(std::span<const int64_t> seeds, std::span<const int64_t> seed_times,
                                    uint64_t stream, CudaStream cuda_stream = {}, ThreadPool* pool = nullptr) const;
  /// The same minibatch left in device memory (GPU samplers; Unsupported on the CPU), complete when
  /// this returns; with `input_nodes`, its input node ids reach the host within the sampler's last
  /// wait. Each backend documents its synchronisation budget.
  virtual DeviceMiniBatch sample_device(std::span<const int64_t> seeds, uint64_t stream, CudaStream cuda_stream = {},
                                        const InputNodesSink& input_nodes = {}) const;
  /// k minibatches, batch b of `seeds` from streams[b] (InvalidArgument unless the sizes agree).
  virtual std::vector<MiniBatch> sample_bulk(std::span<const std::span<const int64_t>> seeds,
                                             std::span<const uint64_t> streams, CudaStream cuda_stream = {},
                                             ThreadPool* pool = nullptr) const;
  /// The same in device memory (GPU samplers); batch b's input node ids go to `input_nodes(b, ..)`.
  virtual std::vector<DeviceMiniBatch> sample_bulk_device(std::span<const std::span<const int64_t>> seeds,
                                                          std::span<const uint64_t> streams,
                                                          CudaStream cuda_stream = {},
                                                          const BulkInputNodesSink& input_nodes = {}) const;
  /// An upper bound of the device bytes one sample_device call with `num_seeds` seeds allocates on
  /// its stream, or -1 when the sampler cannot tell ahead (0 on the CPU). What a caller sampling on
  /// k streams at once checks k times against the free memory.
  virtual int64_t device_bytes_bound(int64_t num_seeds) const { return device() < 0 ? 0 : -1; }
};

/// The backend of the table above for `spec` over `graph` (borrowed, as `resources`). A typed graph
/// (graph.hetero not empty) is sampled per relation by the one-at-a-time neighbour sampler on the
/// CPU. Throws InvalidArgument for a spec its method cannot take (bulk FastGCN, replace with a
/// layer-wise method, bad fanouts, relation_fanouts or a typed graph with another method or bulk)
/// or a GPU sampler without the topology it reads (or one on another device), Unsupported for a
/// GPU without CUDA, or a temporal graph (SampleGraph::temporal) with another method than the
/// neighbour sampler with bulk 0, or typed and on the GPU.
std::unique_ptr<Sampler> make_sampler(const SamplerSpec& spec, const SampleGraph& graph,
                                      const SamplerResources& resources = {});

}  // namespace graphtier::sample
