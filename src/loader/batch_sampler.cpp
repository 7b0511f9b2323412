#include "batch_sampler.hpp"

#include <algorithm>

#include "graphtier/core/error.hpp"
#include "graphtier/sample/epoch.hpp"

namespace graphtier::loader {
namespace {

constexpr int kGpuSamplingStreams = 4;

}  // namespace

SamplerKind parse_sampler_kind(const std::string& text) {
  if (text == "neighbor") return SamplerKind::kNeighbor;
  if (text == "ladies") return SamplerKind::kLadies;
  if (text == "fastgcn") return SamplerKind::kFastGcn;
  throw InvalidArgument("unknown sampler '" + text + "' (expected neighbor, ladies or fastgcn)");
}

BatchSampler::BatchSampler(const graph::Dataset& dataset, std::vector<int64_t> ids, const LoaderOptions& options)
    : options_(options), ids_(std::move(ids)), graph_{graph::CscView::of(dataset), {}},
      pool_(options.gpu_sampling && options.sample_threads <= 0 ? kGpuSamplingStreams : options.sample_threads) {
  GRAPHTIER_EXPECTS(options.batch_size >= 1, InvalidArgument, "batch size must be >= 1, got ", options.batch_size);
  GRAPHTIER_EXPECTS(!ids_.empty(), InvalidArgument, "the loader needs at least one node id to iterate");
  sample::check_seeds(ids_, dataset.num_nodes());
  const auto n = static_cast<int64_t>(ids_.size());
  num_batches_ = options.drop_last ? n / options.batch_size : (n + options.batch_size - 1) / options.batch_size;
  GRAPHTIER_EXPECTS(num_batches_ > 0, InvalidArgument, "drop_last with ", n, " ids and batch size ", options.batch_size,
                    " leaves no batch");
  if (options.sampler == SamplerKind::kNeighbor) {
    sample::NeighborSamplerOptions o;
    o.fanouts = options.fanouts;
    o.replace = options.replace;
    o.seed = options.seed;
    if (options.gpu_sampling) {
      topology_ = std::make_unique<sample::DeviceTopology>(graph_, options.topology);
      cuda_neighbor_ = std::make_unique<sample::CudaNeighborSampler>(*topology_, o);
      for (int t = 0; t < pool_.size(); ++t) {
        cuda_streams_.push_back(std::make_unique<OwnedCudaStream>(topology_->device()));
      }
    } else {
      neighbor_ = std::make_unique<sample::NeighborSampler>(graph_, o);
    }
  } else {
    GRAPHTIER_EXPECTS(!options.replace, InvalidArgument, "replace applies to the neighbor sampler only");
    GRAPHTIER_EXPECTS(!options.gpu_sampling, Unsupported,
                      "the loader samples layer-wise on the CPU only (gpu_sampling is for the neighbor sampler)");
    sample::LayerSamplerOptions o;
    o.layer_sizes = options.fanouts;
    o.method = options.sampler == SamplerKind::kLadies ? sample::LayerMethod::kLadies : sample::LayerMethod::kFastGcn;
    o.seed = options.seed;
    layer_ = std::make_unique<sample::LayerSampler>(graph_, o);
  }
}

BatchSampler::~BatchSampler() = default;

std::vector<int64_t> BatchSampler::epoch_order(int64_t epoch) const {
  return options_.shuffle ? sample::shuffled_ids(ids_, options_.seed, static_cast<uint64_t>(epoch)) : ids_;
}

int64_t BatchSampler::group_size() const noexcept { return pool_.size(); }

sample::MiniBatch BatchSampler::sample_one(std::span<const int64_t> seeds, uint64_t stream, int64_t slot) const {
  if (cuda_neighbor_) return cuda_neighbor_->sample(seeds, stream, cuda_streams_[static_cast<std::size_t>(slot)]->get());
  if (neighbor_) return neighbor_->sample(seeds, stream);
  return layer_->sample(seeds, stream);
}

void BatchSampler::sample(const std::vector<int64_t>& order, int64_t epoch, int64_t first, int64_t last,
                          std::vector<sample::MiniBatch>& out) {
  out.resize(static_cast<std::size_t>(last - first));
  const auto run = [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      if (options_.fault_hook) options_.fault_hook(Stage::kSample, b);
      out[b - first] = sample_one(sample::batch_seeds(order, options_.batch_size, b), sample::minibatch_stream(epoch, b),
                                  b - first);
    }
  };
  if (last - first == 1) {
    run(first, last);
  } else {
    pool_.parallel_for(first, last, 1, run);
  }
}

}  // namespace graphtier::loader
