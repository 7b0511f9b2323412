// `graphtier sample`: samples one MiniBatch from a dataset and prints it (for debugging and tests).
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/sample/sampler.hpp"

namespace graphtier::cli {
namespace {

struct SampleCliOptions {
  std::string dataset;
  std::string seeds;
  std::string fanouts = "10,5";
  std::string sampler = "neighbor";
  uint64_t seed = 0;
  uint64_t stream = 0;
  bool replace = false;
};

/// On a typed dataset each neighbour is followed by its relation, as `3 (a:to:p)`.
void print_text(const sample::MiniBatch& batch, const graph::HeteroSchema& schema) {
  const auto list = [](std::span<const int64_t> ids) {
    std::string s;
    for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? " " : "") + std::to_string(ids[i]);
    return s;
  };
  std::printf("seeds        %s\n", list(batch.seeds).c_str());
  for (std::size_t l = 0; l < batch.blocks.size(); ++l) {
    const sample::Block& b = batch.blocks[l];
    std::printf("block %zu      %lld dst, %lld src, %lld edges\n", l, static_cast<long long>(b.num_dst),
                static_cast<long long>(b.num_src()), static_cast<long long>(b.num_edges()));
    for (int64_t i = 0; i < b.num_dst; ++i) {
      std::string nbrs;
      for (int64_t e = b.indptr[i]; e < b.indptr[i + 1]; ++e) {
        nbrs += " " + std::to_string(b.src_nodes[b.indices[e]]);
        if (!b.edge_types.empty()) nbrs += " (" + schema.relation_name(b.edge_types[e]) + ")";
      }
      std::printf("  %lld <-%s\n", static_cast<long long>(b.src_nodes[i]), nbrs.c_str());
    }
  }
  std::printf("input_nodes  %s\n", list(batch.input_nodes()).c_str());
}

void run_sample(const SampleCliOptions& c, const GlobalOptions& global) {
  const graph::Dataset dataset = graph::Dataset::open(c.dataset);
  const std::vector<int64_t> seeds = parse_int_list(c.seeds, "--seeds");
  const std::vector<int64_t> fanouts = parse_int_list(c.fanouts, "--fanouts");
  // A typed dataset is sampled per relation, as its loaders sample it (loader/batch_sampler.cpp).
  const sample::SampleGraph graph{graph::CscView::of(dataset), {}, dataset.hetero()};
  sample::SamplerSpec spec;
  try {
    spec.kind = sample::sampler_method(c.sampler).kind;
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("--sampler: ") + e.what());
  }
  spec.fanouts = fanouts;  // layer-wise methods: the nodes drawn per layer
  spec.replace = c.replace;
  spec.seed = c.seed;
  const sample::MiniBatch batch = sample::make_sampler(spec, graph)->sample(seeds, c.stream);
  if (global.json) {
    std::cout << sample::minibatch_to_json(batch) << '\n';
  } else {
    print_text(batch, dataset.schema());
  }
}

}  // namespace

void register_sample(CLI::App& app, const GlobalOptions& global) {
  auto opt = std::make_shared<SampleCliOptions>();
  auto* cmd = app.add_subcommand("sample", "Sample one minibatch from a dataset and print it");
  cmd->add_option("-d,--dataset", opt->dataset, "Dataset directory")->required();
  cmd->add_option("--seeds", opt->seeds, "Seed node ids, comma-separated (0,5,7)")->required();
  cmd->add_option("--fanouts", opt->fanouts,
                  "Per-layer fanouts, seeds' hop first (-1 = all neighbours), per relation on a typed dataset (as its "
                  "loaders); for ladies/fastgcn the nodes drawn per layer")
      ->capture_default_str();
  cmd->add_option("--sampler", opt->sampler, "neighbor (GraphSAGE), ladies or fastgcn (layer-wise)")->capture_default_str();
  cmd->add_option("--seed", opt->seed, "Random seed")->check(kNonNegative)->capture_default_str();
  cmd->add_option("--stream", opt->stream, "Minibatch stream (the loader uses epoch << 32 | batch)")
      ->check(kNonNegative)
      ->capture_default_str();
  cmd->add_flag("--replace", opt->replace, "Sample with replacement");
  cmd->callback([opt, &global] { run_sample(*opt, global); });
}

}  // namespace graphtier::cli
