// `graphtier partition`: split a dataset for the ranks of a (P/c) x c process grid into a
// partition directory (include/graphtier/prep/partition.hpp, docs/format.md "Partition directory").
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/prep/partition.hpp"

namespace graphtier::cli {
namespace {

struct PartitionCliOptions {
  std::string dataset;
  std::string out;
  int64_t ranks = 1;
  int64_t replication = 1;
  std::string graph = "replicated";
  std::string hot_replicated = "0";
  std::string balance = "auto";
  bool overwrite = false;
};

void print_json(const PartitionCliOptions& c, const prep::PartitionReport& r) {
  const prep::PartitionLayout& l = r.layout;
  nlohmann::ordered_json j;
  j["dataset"] = c.dataset;
  j["out"] = c.out;
  j["ranks"] = l.ranks;
  j["replication"] = l.replication;
  j["process_rows"] = l.process_rows;
  j["graph"] = prep::partition_graph_name(l.graph);
  j["balance"] = prep::partition_balance_name(l.balance);
  j["hot_rows"] = l.hot_rows;
  if (l.typed()) {
    j["type_feature_bounds"] = l.type_feature_bounds;
  } else {
    j["feature_bounds"] = l.feature_bounds;
  }
  j["topology_bounds"] = l.topology_bounds;
  j["bytes"] = r.bytes_written;
  j["seconds"] = r.seconds;
  std::cout << j.dump(2) << '\n';
}

void print_text(const PartitionCliOptions& c, const prep::PartitionReport& r) {
  const prep::PartitionLayout& l = r.layout;
  const auto ll = [](int64_t v) { return static_cast<long long>(v); };
  std::printf("partitioned %s -> %s\n", c.dataset.c_str(), c.out.c_str());
  std::printf("grid        %lld ranks = %lld process rows x replication %lld, graph %s, balance %s\n", ll(l.ranks),
              ll(l.process_rows), ll(l.replication), std::string(prep::partition_graph_name(l.graph)).c_str(),
              std::string(prep::partition_balance_name(l.balance)).c_str());
  std::printf("hot rows    %lld of %lld replicated on every rank\n", ll(l.hot_rows), ll(l.num_nodes));
  for (int64_t i = 0; i < l.process_rows; ++i) {
    const auto [t0, t1] = l.topology_range(i);
    std::string features;
    for (const auto& [lo, hi] : l.typed() ? l.local_ranges(i) : std::vector{l.owned_range(i)}) {
      features += detail::concat(features.empty() ? "" : " ", "[", lo, ", ", hi, ")");
    }
    std::printf("row %-7lld features %s (%lld local rows), topology [%lld, %lld)\n", ll(i), features.c_str(),
                ll(l.local_rows(i)), ll(t0), ll(t1));
  }
  std::printf("written     %s in %.2f s\n", format_bytes(static_cast<double>(r.bytes_written)).c_str(), r.seconds);
}

void run_partition(const PartitionCliOptions& c, const GlobalOptions& global) {
  // The parsers' errors name their option, so they run here rather than as CLI11 validators
  // (which would prefix the name once more).
  prep::PartitionOptions o;
  o.ranks = c.ranks;
  o.replication = c.replication;
  o.graph = prep::parse_partition_graph(c.graph);
  o.balance = prep::parse_partition_balance(c.balance);
  o.hot_rows = prep::HotRows::parse(c.hot_replicated);
  o.overwrite = c.overwrite;
  ThreadPool pool(global.threads);
  const prep::PartitionReport report = prep::write_partition(c.dataset, c.out, o, pool);
  if (global.json) {
    print_json(c, report);
  } else {
    print_text(c, report);
  }
}

}  // namespace

void register_partition(CLI::App& app, const GlobalOptions& global) {
  auto opt = std::make_shared<PartitionCliOptions>();
  auto* cmd = app.add_subcommand(
      "partition", "Split a dataset for the P ranks of a (P/c) x c process grid into a partition directory");
  cmd->add_option("-d,--dataset", opt->dataset, "Input dataset directory")->required();
  cmd->add_option("-o,--out", opt->out, "Output partition directory")->required();
  cmd->add_option("--ranks", opt->ranks, "Number of ranks P")->required();
  cmd->add_option("--replication", opt->replication, "Replication factor c (divides P; P/c process rows)")
      ->capture_default_str();
  cmd->add_option("--graph", opt->graph,
                  "Topology per rank: replicated (whole) or partitioned (the block row of its process row, 1.5D)")
      ->capture_default_str();
  cmd->add_option("--hot-replicated", opt->hot_replicated,
                  "Hottest ids [0, h) replicated on every rank: a count (1000, 10K) or a percent of the nodes (5%)")
      ->capture_default_str();
  cmd->add_option("--balance", opt->balance,
                  "Feature blocks of equal rows (bytes), of equal expected reads (hotness: needs hotness.bin), or "
                  "hotness when the source has hotness.bin and bytes otherwise (auto)")
      ->capture_default_str();
  cmd->add_flag("--overwrite", opt->overwrite, "Replace an existing partition directory at --out");
  cmd->callback([opt, &global] { run_partition(*opt, global); });
}

}  // namespace graphtier::cli
