// `graphtier split-links`: a seeded link-prediction split of a dataset's edges (PyG's
// RandomLinkSplit), written as a new dataset whose CSC holds the message-passing edges only.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "graphtier/prep/link_split.hpp"

namespace graphtier::cli {
namespace {

struct SplitLinksCliOptions {
  std::string dataset;
  std::string out;
  prep::LinkSplitOptions split;
};

void run_split_links(const SplitLinksCliOptions& c, const GlobalOptions& global) {
  const prep::LinkSplitReport r = prep::split_links_dataset(c.dataset, c.out, c.split);
  if (global.json) {
    nlohmann::ordered_json j;
    j["dataset"] = c.dataset;
    j["out"] = c.out;
    j["seed"] = r.links.seed;
    j["val"] = r.links.val;
    j["test"] = r.links.test;
    j["disjoint"] = r.links.disjoint;
    j["by_time"] = r.links.by_time;
    j["num_nodes"] = r.num_nodes;
    j["num_edges"] = r.num_edges;
    j["num_pairs"] = r.num_pairs;
    j["num_train"] = r.links.num_train;
    j["num_valid"] = r.links.num_valid;
    j["num_test"] = r.links.num_test;
    j["num_message_edges"] = r.num_message_edges;
    j["seconds"] = r.seconds;
    std::cout << j.dump(2) << '\n';
    return;
  }
  const auto ll = [](int64_t v) { return static_cast<long long>(v); };
  std::printf("split      %s -> %s (seed %llu)\n", c.dataset.c_str(), c.out.c_str(),
              static_cast<unsigned long long>(r.links.seed));
  std::printf("edges      %lld CSC entries, %lld undirected edges\n", ll(r.num_edges), ll(r.num_pairs));
  std::printf("seed edges train %lld%s, valid %lld, test %lld\n", ll(r.links.num_train),
              r.links.disjoint > 0 ? " (disjoint from message passing)" : "", ll(r.links.num_valid),
              ll(r.links.num_test));
  if (r.links.by_time) std::printf("by time    validation and test are the latest edges\n");
  std::printf("messages   %lld CSC entries kept, in %.2f s\n", ll(r.num_message_edges), r.seconds);
}

}  // namespace

void register_split_links(CLI::App& app, const GlobalOptions& global) {
  auto opt = std::make_shared<SplitLinksCliOptions>();
  auto* cmd = app.add_subcommand("split-links",
                                 "Split the edges into message-passing, train, validation and test edges for link "
                                 "prediction (PyG's RandomLinkSplit) and write the split dataset");
  cmd->add_option("-d,--dataset", opt->dataset, "Input dataset directory")->required();
  cmd->add_option("-o,--out", opt->out, "Output dataset directory (may equal --dataset with --overwrite)")->required();
  cmd->add_option("--val", opt->split.val, "Fraction of the undirected edges for validation, in [0, 1)")
      ->check(kNonNegative)
      ->capture_default_str();
  cmd->add_option("--test", opt->split.test, "Fraction of the undirected edges for testing, in [0, 1)")
      ->check(kNonNegative)
      ->capture_default_str();
  cmd->add_option("--disjoint", opt->split.disjoint,
                  "Fraction of the training edges used for supervision only, never for message passing "
                  "(PyG's disjoint_train_ratio), in [0, 1)")
      ->check(kNonNegative)
      ->capture_default_str();
  cmd->add_flag("--by-time", opt->split.by_time,
                "Hold out the latest edges (edge_time.bin): test the latest, validation the next latest, as "
                "temporal link-prediction benchmarks split");
  cmd->add_option("--seed", opt->split.seed, "Seed of the split")->check(kNonNegative)->capture_default_str();
  cmd->add_flag("--overwrite", opt->split.overwrite, "Replace an existing dataset at --out (also the input itself)");
  cmd->callback([opt, &global] { run_split_links(*opt, global); });
}

}  // namespace graphtier::cli
