// `graphtier bench hotness`: how much of a training run's feature reads a static hot tier of a
// given budget serves under each hotness score, against the optimal static placement (the rows a
// run actually reads most, counted offline), and what a CLOCK cache with window buffering adds
// behind the smallest static tier. Data Tiering, GNNLab's PreSC#K, GIDS §3.4 (docs/references.md).
#include <deque>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/cache/cache_policy.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/prep/hotness.hpp"
#include "graphtier/prep/out_neighbours.hpp"
#include "graphtier/prep/reorder.hpp"
#include "graphtier/sample/presample.hpp"

namespace graphtier::cli {
namespace {

struct BenchHotnessOptions {
  std::string dataset;
  std::string budgets = "1%,5%,10%,20%";
  std::string fanouts = "15,10,5";
  int64_t batch_size = 1024;
  int epochs = 1;            // of the measured training run
  int presample_epochs = 1;  // K of PreSC#K
  std::string cache = "5%";  // rows of the dynamic cache behind the first static budget
  int window = 4;            // minibatches announced ahead to the cache
  uint64_t seed = 0;
};

/// A hotness score as the order it puts the nodes in (hottest first).
struct Method {
  std::string name;
  prep::Permutation order;
};

/// A static tier of the `static_rows` best-ranked rows with a CLOCK cache behind it, fed a run's
/// minibatches through a window: each batch's misses are announced when it is sampled and looked
/// up `window` batches later, as the loader does (GIDS window buffering).
class TierSimulation {
 public:
  /// `rank` (node -> position in hotness order) is borrowed: it must outlive the simulation.
  TierSimulation(std::span<const int64_t> rank, int64_t static_rows, int64_t cache_rows, int window)
      : rank_(rank), static_rows_(static_rows), window_(window), policy_(cache_rows, cache::Eviction::kClock) {}

  void push(std::span<const int64_t> input) {
    std::vector<int64_t> misses;
    for (int64_t v : input) {
      if (rank_[v] >= static_rows_) misses.push_back(v);
    }
    static_hits_ += static_cast<int64_t>(input.size() - misses.size());
    policy_.announce(misses);
    pending_.push_back(std::move(misses));
    if (static_cast<int>(pending_.size()) > window_) drain_one();
  }
  void finish() {
    while (!pending_.empty()) drain_one();
  }
  int64_t static_hits() const { return static_hits_; }
  int64_t cache_hits() const { return cache_hits_; }

 private:
  void drain_one() {
    const std::vector<int64_t>& ids = pending_.front();
    slots_.resize(ids.size());
    kinds_.resize(ids.size());
    cache_hits_ += policy_.lookup(ids, slots_, kinds_).hits;
    policy_.consume(ids);
    pending_.pop_front();
  }

  std::span<const int64_t> rank_;
  int64_t static_rows_;
  int window_;
  cache::CachePolicy policy_;
  std::deque<std::vector<int64_t>> pending_;
  std::vector<int64_t> slots_;
  std::vector<cache::LookupKind> kinds_;
  int64_t static_hits_ = 0;
  int64_t cache_hits_ = 0;
};

/// Fraction of all reads (`reads[v]` per node) that fall on the `rows` highest-scored nodes.
double static_hit_rate(const prep::Permutation& order, std::span<const double> reads, int64_t rows, double total) {
  double hits = 0;
  for (int64_t n = 0; n < rows; ++n) hits += reads[order.new_to_old[n]];
  return total > 0 ? hits / total : 0;
}

void run_bench_hotness(const BenchHotnessOptions& c, const GlobalOptions& global) {
  const graph::Dataset dataset = graph::Dataset::open(c.dataset);
  const auto train = dataset.split(graph::Split::kTrain);
  GRAPHTIER_EXPECTS(!train.empty(), InvalidArgument, c.dataset, " has no train split: a training run samples from it");
  ThreadPool pool(global.threads);
  const graph::CscView csc = graph::CscView::of(dataset);
  const int64_t n = dataset.num_nodes();
  std::vector<int64_t> rows;
  for (const double fraction : parse_percent_list(c.budgets, "--budgets")) {
    rows.push_back(static_cast<int64_t>(static_cast<double>(n) * fraction));
  }

  // The measured run and the presampling use different seeds: presampling predicts a run it has
  // not seen.
  sample::PresampleOptions run;
  run.epochs = c.epochs;
  run.batch_size = c.batch_size;
  run.sampler.fanouts = parse_int_list(c.fanouts, "--fanouts");
  run.sampler.edge_ids = false;
  run.sampler.seed = c.seed + 1;

  std::vector<Method> methods;
  const auto add = [&](const char* name, const std::vector<double>& scores) {
    methods.push_back({name, prep::order_by_score(scores, pool)});
  };
  add("degree", prep::degree_scores(csc, pool));
  {
    const prep::OutNeighbours out = prep::OutNeighbours::build(csc, pool);
    add("rpr", prep::reverse_pagerank(csc, out, prep::PageRankOptions{}, pool));
    prep::PageRankOptions weighted;
    weighted.iterations = 5;  // Algorithm 1
    add("wrpr", prep::weighted_reverse_pagerank(csc, out, train, weighted, pool));
  }
  sample::PresampleOptions pre = run;
  pre.epochs = c.presample_epochs;
  pre.sampler.seed = c.seed;
  add("presample", sample::presample_hotness({csc, {}}, train, pre, pool));

  // One pass over the measured run: the reads per node, and every score's static tier + cache.
  const auto cache_rows = static_cast<int64_t>(static_cast<double>(n) * parse_percent_list(c.cache, "--cache").front());
  std::vector<TierSimulation> simulations;
  for (const Method& m : methods) simulations.emplace_back(m.order.old_to_new, rows.front(), cache_rows, c.window);
  std::vector<double> reads(static_cast<std::size_t>(n), 0.0);
  sample::for_each_minibatch_input({csc, {}}, train, run, pool, [&](std::span<const int64_t> input) {
    for (int64_t v : input) reads[v] += 1;
    for (TierSimulation& s : simulations) s.push(input);
  });
  for (TierSimulation& s : simulations) s.finish();
  // Not in `methods`: the simulations borrow those orders, and a push_back could move them.
  const Method optimal{"optimal", prep::order_by_score(reads, pool)};
  double total = 0;
  for (double r : reads) total += r;

  nlohmann::ordered_json j;
  j["dataset"] = c.dataset;
  j["num_nodes"] = n;
  j["reads"] = total;
  j["budgets_rows"] = rows;
  if (!global.json) {
    std::printf("static hot-tier hit rate: share of the %s feature reads of %d epoch(s) of [%s] sampling, batch %lld\n",
                format_count(total).c_str(), c.epochs, c.fanouts.c_str(), static_cast<long long>(c.batch_size));
    std::printf("%-10s", "hotness");
    for (int64_t r : rows) std::printf(" %10s", (format_count(static_cast<double>(r)) + " rows").c_str());
    std::printf("\n");
  }
  const auto report_static = [&](const Method& m) {
    std::vector<double> rates;
    for (int64_t r : rows) rates.push_back(static_hit_rate(m.order, reads, r, total));
    j["hit_rate"][m.name] = rates;
    if (!global.json) {
      std::printf("%-10s", m.name.c_str());
      for (double rate : rates) std::printf(" %10.3f", rate);
      std::printf("\n");
    }
  };
  for (const Method& m : methods) report_static(m);
  report_static(optimal);
  j["cache_rows"] = cache_rows;
  j["window"] = c.window;
  if (!global.json) {
    std::printf("\nbehind the %s-row static tier: a CLOCK cache of %s rows, window of %d minibatches\n",
                format_count(static_cast<double>(rows.front())).c_str(), format_count(static_cast<double>(cache_rows)).c_str(),
                c.window);
    std::printf("%-10s %10s %10s %10s\n", "hotness", "static", "cache", "together");
  }
  for (std::size_t k = 0; k < simulations.size(); ++k) {
    const double s = static_cast<double>(simulations[k].static_hits()) / total;
    const double h = static_cast<double>(simulations[k].cache_hits()) / total;
    j["with_cache"][methods[k].name] = {{"static", s}, {"cache", h}};
    if (!global.json) std::printf("%-10s %10.3f %10.3f %10.3f\n", methods[k].name.c_str(), s, h, s + h);
  }
  if (global.json) std::cout << j.dump(2) << '\n';
}

}  // namespace

void register_bench_hotness(CLI::App& bench, const GlobalOptions& global) {
  auto opt = std::make_shared<BenchHotnessOptions>();
  auto* cmd = bench.add_subcommand("hotness", "Static-tier hit rates of each hotness score against the optimal placement");
  cmd->add_option("-d,--dataset", opt->dataset, "Dataset directory (with a train split)")->required();
  cmd->add_option("--budgets", opt->budgets, "Static tier sizes in percent of the nodes")->capture_default_str();
  cmd->add_option("--fanouts", opt->fanouts, "Fanouts of the measured run, seeds' hop first")->capture_default_str();
  cmd->add_option("--batch-size", opt->batch_size, "Seeds per minibatch")->check(kPositive)->capture_default_str();
  cmd->add_option("--epochs", opt->epochs, "Epochs of the measured run")->check(kPositive)->capture_default_str();
  cmd->add_option("--presample-epochs", opt->presample_epochs, "K of the presample score")
      ->check(kPositive)
      ->capture_default_str();
  cmd->add_option("--cache", opt->cache, "Rows of the CLOCK cache behind the first static budget, in percent of the nodes")
      ->capture_default_str();
  cmd->add_option("--window", opt->window, "Minibatches announced to the cache ahead of their gather")
      ->check(kNonNegative)
      ->capture_default_str();
  cmd->add_option("--seed", opt->seed, "Seed of the presampling (the measured run uses seed + 1)")
      ->check(kNonNegative)
      ->capture_default_str();
  cmd->callback([opt, &global] { run_bench_hotness(*opt, global); });
}

}  // namespace graphtier::cli
