// `graphtier prepare`: score the nodes of a dataset (degree, reverse PageRank, weighted reverse
// PageRank, or scores from a file), renumber them hottest first and write the renumbered dataset.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/prep/feature_permute.hpp"
#include "graphtier/prep/prepare.hpp"
#include "graphtier/sample/presample.hpp"

namespace graphtier::cli {
namespace {

struct PrepareCliOptions {
  std::string dataset;
  std::string out;
  std::string hotness = "wrpr";
  int iterations = 0;  // 0: the method's default
  double damping = 0.85;
  double tolerance = 0;
  std::string scores;
  std::string memory_budget;  // empty: prep::default_memory_budget()
  int presample_epochs = 1;
  std::string presample_fanouts = "15,10,5";
  int64_t presample_batch_size = 1024;
  uint64_t seed = 0;
  bool overwrite = false;
};

prep::PrepareOptions to_options(const PrepareCliOptions& c) {
  prep::PrepareOptions o;
  o.method = prep::parse_hotness_method(c.hotness);
  if (c.iterations > 0) o.iterations = c.iterations;
  o.damping = c.damping;
  o.tolerance = c.tolerance;
  o.scores_path = c.scores;
  if (o.method == prep::HotnessMethod::kPresample) {
    sample::PresampleOptions po;
    po.epochs = c.presample_epochs;
    po.batch_size = c.presample_batch_size;
    po.sampler.fanouts = parse_int_list(c.presample_fanouts, "--presample-fanouts");
    po.sampler.seed = c.seed;
    po.sampler.edge_ids = false;
    o.presample = [po](const graph::Dataset& in, ThreadPool& pool) {
      const auto train = in.split(graph::Split::kTrain);
      GRAPHTIER_EXPECTS(!train.empty(), InvalidArgument, "hotness presample samples from the train nodes, but ", in.dir(),
                        " has no train split");
      return sample::presample_hotness({graph::CscView::of(in), {}}, train, po, pool);
    };
  }
  if (!c.memory_budget.empty()) {
    o.memory_budget = Budget::parse(c.memory_budget).resolve(physical_memory_bytes());
    GRAPHTIER_EXPECTS(o.memory_budget > 0, InvalidArgument, "--memory-budget must be positive, got '",
                      c.memory_budget, "'");
  }
  o.overwrite = c.overwrite;
  return o;
}

double rate(double amount, double seconds) { return seconds > 0 ? amount / seconds : 0.0; }

void print_json(const PrepareCliOptions& c, const prep::PrepareReport& r) {
  nlohmann::ordered_json j;
  j["dataset"] = c.dataset;
  j["out"] = c.out;
  j["hotness"] = r.method;
  j["num_nodes"] = r.num_nodes;
  j["num_edges"] = r.num_edges;
  j["iterations"] = r.iterations;
  j["last_change"] = r.last_change;
  j["top_score"] = r.top_score;
  j["composed_permutation"] = r.composed_permutation;
  j["feature_bytes"] = r.feature_bytes;
  j["feature_external"] = r.feature_external;
  j["feature_buckets"] = r.feature_buckets;
  j["memory_budget"] = r.memory_budget;
  j["seconds"] = {{"open", r.open_seconds},
                  {"score", r.score_seconds},
                  {"order", r.order_seconds},
                  {"relabel", r.relabel_seconds},
                  {"features", r.feature_seconds},
                  {"node_arrays", r.node_arrays_seconds},
                  {"commit", r.commit_seconds},
                  {"total", r.total_seconds}};
  j["score_edges_per_second"] = rate(static_cast<double>(r.num_edges), r.score_seconds);
  j["relabel_edges_per_second"] = rate(static_cast<double>(r.num_edges), r.relabel_seconds);
  j["feature_bytes_per_second"] = rate(static_cast<double>(r.feature_bytes), r.feature_seconds);
  std::cout << j.dump(2) << '\n';
}

void print_text(const PrepareCliOptions& c, const prep::PrepareReport& r) {
  const auto ll = [](int64_t v) { return static_cast<long long>(v); };
  std::printf("prepared   %s -> %s\n", c.dataset.c_str(), c.out.c_str());
  std::printf("hotness    %s", r.method.c_str());
  if (r.iterations > 0) std::printf(" (%d iterations, last L1 change %.3g)", r.iterations, r.last_change);
  std::printf(", top score %.6g%s\n", r.top_score, r.composed_permutation ? ", composed with the input's permutation" : "");
  std::printf("graph      %lld nodes, %lld edges: scores %.2f s (%s edges/s), order %.2f s, relabel %.2f s (%s edges/s)\n",
              ll(r.num_nodes), ll(r.num_edges), r.score_seconds,
              format_count(rate(static_cast<double>(r.num_edges), r.score_seconds)).c_str(), r.order_seconds,
              r.relabel_seconds, format_count(rate(static_cast<double>(r.num_edges), r.relabel_seconds)).c_str());
  if (r.feature_bytes > 0) {
    const std::string how =
        r.feature_external ? "external, " + std::to_string(r.feature_buckets) + " buckets" : std::string("in memory");
    std::printf("features   %s in %.2f s (%s/s), %s\n", format_bytes(static_cast<double>(r.feature_bytes)).c_str(),
                r.feature_seconds, format_bytes(rate(static_cast<double>(r.feature_bytes), r.feature_seconds)).c_str(),
                how.c_str());
  }
  std::printf("time       %.2f s in all (commit %.2f s)\n", r.total_seconds, r.commit_seconds);
}

void run_prepare(const PrepareCliOptions& c, const GlobalOptions& global) {
  const prep::PrepareOptions options = to_options(c);
  ThreadPool pool(global.threads);
  const prep::PrepareReport report = prep::prepare_dataset(c.dataset, c.out, options, pool);
  if (global.json) {
    print_json(c, report);
  } else {
    print_text(c, report);
  }
}

}  // namespace

void register_prepare(CLI::App& app, const GlobalOptions& global) {
  auto opt = std::make_shared<PrepareCliOptions>();
  auto* cmd = app.add_subcommand(
      "prepare", "Score nodes by hotness, renumber them hottest first and write the renumbered dataset");
  cmd->add_option("-d,--dataset", opt->dataset, "Input dataset directory")->required();
  cmd->add_option("-o,--out", opt->out, "Output dataset directory (may equal --dataset with --overwrite)")->required();
  cmd->add_option("--hotness", opt->hotness,
                  "Score: degree (in + out), in-degree, out-degree, rpr (reverse PageRank), wrpr (weighted reverse "
                  "PageRank, train nodes weighted), scores (from --scores), presample (feature reads over K epochs of "
                  "neighbour sampling from the train nodes, GNNLab's PreSC#K)")
      ->check(parsed_by([](const std::string& t) { return prep::parse_hotness_method(t); }, "METHOD"))
      ->capture_default_str();
  cmd->add_option("--iterations", opt->iterations, "PageRank iterations (default: 20 for rpr, 5 for wrpr)")
      ->check(kPositive);
  cmd->add_option("--damping", opt->damping, "PageRank damping factor d")->capture_default_str();
  cmd->add_option("--tolerance", opt->tolerance, "Stop PageRank early below this L1 change (0: never)")
      ->capture_default_str();
  cmd->add_option("--scores", opt->scores,
                  "Per-node scores for --hotness scores: .npy (N,) of any numeric type, or raw float64, by input id");
  cmd->add_option("--memory-budget", opt->memory_budget,
                  "Feature rows held in memory: bytes (2GiB) or percent of RAM; a larger table is permuted through "
                  "bucket files (default: min(25% of RAM, 1 GiB))")
      ->check(kBudget);
  cmd->add_option("--presample-epochs", opt->presample_epochs, "Presampling epochs K")
      ->check(kPositive)
      ->capture_default_str();
  cmd->add_option("--presample-fanouts", opt->presample_fanouts, "Presampling fanouts, seeds' hop first")
      ->capture_default_str();
  cmd->add_option("--presample-batch-size", opt->presample_batch_size, "Presampling batch size")
      ->check(kPositive)
      ->capture_default_str();
  cmd->add_option("--seed", opt->seed, "Presampling seed")->check(kNonNegative)->capture_default_str();
  cmd->add_flag("--overwrite", opt->overwrite, "Replace an existing dataset at --out (also the input itself)");
  cmd->callback([opt, &global] { run_prepare(*opt, global); });
}

}  // namespace graphtier::cli
