// `graphtier info`: counts, degree statistics, sizes and static tier ranges of a dataset (and, for a
// rank's graph/ or features/, the partition it belongs to); what a partition directory holds.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/feature/tier_ranges.hpp"
#include "graphtier/graph/summary.hpp"
#include "graphtier/prep/partition.hpp"
#include "typed_summary.hpp"

namespace graphtier::cli {
namespace {

struct InfoOptions {
  std::string dataset;
  std::string gpu_budget = "0";
  std::string cpu_budget = "0";
};

nlohmann::ordered_json degree_json(const graph::DegreeStats& d) {
  return {{"min", d.min}, {"max", d.max}, {"mean", d.mean}, {"median", d.median}, {"p99", d.p99}, {"zero", d.zero_count}};
}

void print_degree(const char* name, const graph::DegreeStats& d) {
  std::printf("  %-10s min %lld  median %lld  mean %.2f  p99 %lld  max %lld  (%lld nodes with none)\n", name,
              static_cast<long long>(d.min), static_cast<long long>(d.median), d.mean, static_cast<long long>(d.p99),
              static_cast<long long>(d.max), static_cast<long long>(d.zero_count));
}

/// `graphtier info` on a partition directory or one rank's (partition.json, docs/format.md): what
/// it is, of which dataset, for how many ranks; its datasets are the ranks' graph/ and features/.
void print_partition(const std::string& dir, const GlobalOptions& global) {
  const auto m = nlohmann::ordered_json::parse(prep::read_partition_json(dir + "/partition.json"));
  const bool typed = m.contains("type_feature_bounds");
  if (global.json) {
    nlohmann::ordered_json j;
    j["partition"] = dir;
    j["source"] = {{"name", m["source"]["name"]}, {"path", m["source"]["path"]}};
    for (const char* key : {"ranks", "replication", "process_rows", "graph", "balance", "num_nodes", "num_edges",
                            "hot_rows", "rank", "rank_dirs"}) {
      if (m.contains(key)) j[key] = m[key];
    }
    j["typed"] = typed;
    std::cout << j.dump(2) << '\n';
    return;
  }
  const std::string source =
      m["source"]["name"].get<std::string>() + " (" + m["source"]["path"].get<std::string>() + ")";
  if (m.contains("rank")) {
    std::printf("partition  %s: rank %lld of a partition of %s for %lld ranks\n", dir.c_str(),
                m["rank"].get<long long>(), source.c_str(), m["ranks"].get<long long>());
  } else {
    std::printf("partition  %s: %s for %lld ranks\n", dir.c_str(), source.c_str(), m["ranks"].get<long long>());
  }
  std::printf("grid       %lld process rows x replication %lld, graph %s, feature rows balanced by %s\n",
              m["process_rows"].get<long long>(), m["replication"].get<long long>(),
              m["graph"].get<std::string>().c_str(), m["balance"].get<std::string>().c_str());
  std::printf("nodes      %lld (%s, %lld hot rows on every rank)\n", m["num_nodes"].get<long long>(),
              typed ? "typed: each type's rows split across the process rows" : "one type",
              m["hot_rows"].get<long long>());
  std::printf("edges      %lld\n", m["num_edges"].get<long long>());
  std::string base = dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  const std::string first = m.contains("rank") ? base : base + "/" + m["rank_dirs"][0].get<std::string>();
  std::printf("datasets   each rank's graph/ and features/ (graphtier info %s/graph)\n", first.c_str());
}

/// "graph/ of rank K of a partition (...)" for a rank's graph/ or features/ dataset, else "".
std::string part_of_partition(const std::string& dataset_dir) {
  std::filesystem::path dir = std::filesystem::path(dataset_dir).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();  // a trailing '/'
  const std::string rank_dir = dir.parent_path().string();
  if (rank_dir.empty() || !prep::is_partition_directory(rank_dir)) return "";
  const auto m = nlohmann::json::parse(prep::read_partition_json(rank_dir + "/partition.json"));
  if (!m.contains("rank")) return "";
  return dir.filename().string() + "/ of rank " + std::to_string(m["rank"].get<long long>()) + " of a partition of " +
         m["source"]["name"].get<std::string>() + " for " + std::to_string(m["ranks"].get<long long>()) +
         " ranks (graphtier info " + rank_dir + ")";
}

void run_info(const InfoOptions& opt, const GlobalOptions& global) {
  if (prep::is_partition_directory(opt.dataset)) {
    print_partition(opt.dataset, global);
    return;
  }
  const auto dataset = graph::Dataset::open(opt.dataset);
  const std::string part = part_of_partition(opt.dataset);
  const auto& m = dataset.manifest();
  ThreadPool pool(global.threads);
  const auto s = graph::summarize(dataset, pool);
  const auto tiers = feature::tier_ranges(m, Budget::parse(opt.gpu_budget), Budget::parse(opt.cpu_budget));

  if (global.json) {
    nlohmann::ordered_json j;
    j["dataset"] = dataset.dir();
    j["name"] = m.name;
    j["num_nodes"] = m.num_nodes;
    j["num_edges"] = m.num_edges;
    j["indices_dtype"] = dtype_name(m.indices_dtype);
    j["feature_dim"] = m.features.dim;
    j["feature_dtype"] = dtype_name(m.features.dtype);
    j["row_stride"] = m.features.row_stride;
    j["alignment"] = m.features.alignment;
    j["num_classes"] = m.num_classes;
    j["num_labeled"] = s.num_labeled;
    j["splits"] = {{"train", s.num_train}, {"valid", s.num_valid}, {"test", s.num_test}};
    j["in_degree"] = degree_json(s.in_degree);
    j["out_degree"] = degree_json(s.out_degree);
    j["hotness"] = m.hotness;
    j["has_permutation"] = dataset.has_permutation();
    nlohmann::ordered_json files = nlohmann::ordered_json::object();
    for (const auto& [array, entry] : m.files) files[array] = entry.bytes;
    j["bytes"] = files;
    j["total_bytes"] = s.total_bytes;
    j["tiers"] = {{"gpu", {{"begin", 0}, {"end", tiers.gpu_end}}},
                  {"cpu", {{"begin", tiers.gpu_end}, {"end", tiers.cpu_end}}},
                  {"storage", {{"begin", tiers.cpu_end}, {"end", tiers.num_nodes}}}};
    j["source"] = m.source;
    if (dataset.is_hetero()) j["typed"] = typed_json(dataset, s.edges_per_relation);
    if (!part.empty()) j["part_of"] = part;
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::printf("dataset    %s (%s)\n", dataset.dir().c_str(), m.name.c_str());
  if (!part.empty()) std::printf("part       %s\n", part.c_str());
  std::printf("nodes      %lld\n", static_cast<long long>(m.num_nodes));
  std::printf("edges      %lld (%s indices)\n", static_cast<long long>(m.num_edges),
              std::string(dtype_name(m.indices_dtype)).c_str());
  if (dataset.is_hetero()) {
    int64_t tables = 0;
    for (const auto& t : dataset.schema().node_types) tables += t.features.dim > 0 ? 1 : 0;
    std::printf("features   a table for %lld of the %d node types (listed below)\n", static_cast<long long>(tables),
                dataset.schema().num_node_types());
  } else if (m.features.dim > 0) {
    std::printf("features   %lld x %s, row stride %lld B (alignment %lld)\n", static_cast<long long>(m.features.dim),
                std::string(dtype_name(m.features.dtype)).c_str(), static_cast<long long>(m.features.row_stride),
                static_cast<long long>(m.features.alignment));
  } else {
    std::printf("features   none\n");
  }
  std::printf("classes    %lld (%lld labeled nodes)\n", static_cast<long long>(m.num_classes),
              static_cast<long long>(s.num_labeled));
  std::printf("split      train %lld / valid %lld / test %lld\n", static_cast<long long>(s.num_train),
              static_cast<long long>(s.num_valid), static_cast<long long>(s.num_test));
  print_typed(dataset, s.edges_per_relation);
  std::printf("degree\n");
  print_degree("in", s.in_degree);
  print_degree("out", s.out_degree);
  std::printf("order      %s%s\n", m.hotness.empty() ? "as converted" : ("hotness: " + m.hotness).c_str(),
              dataset.has_permutation() ? " (permutation to original ids kept)" : "");
  std::printf("size       %s in %zu files\n", format_bytes(static_cast<double>(s.total_bytes)).c_str(), m.files.size());
  for (const auto& [array, entry] : m.files) {
    std::printf("  %-12s %s\n", array.c_str(), format_bytes(static_cast<double>(entry.bytes)).c_str());
  }
  if (m.features.dim > 0) {
    const auto rows = [](int64_t a, int64_t b) { return static_cast<long long>(b - a); };
    std::printf("tiers      gpu [0, %lld) %lld rows | cpu [%lld, %lld) %lld rows | storage [%lld, %lld) %lld rows\n",
                static_cast<long long>(tiers.gpu_end), rows(0, tiers.gpu_end), static_cast<long long>(tiers.gpu_end),
                static_cast<long long>(tiers.cpu_end), rows(tiers.gpu_end, tiers.cpu_end),
                static_cast<long long>(tiers.cpu_end), static_cast<long long>(tiers.num_nodes),
                rows(tiers.cpu_end, tiers.num_nodes));
  }
}

}  // namespace

void register_info(CLI::App& app, const GlobalOptions& global) {
  auto opt = std::make_shared<InfoOptions>();
  auto* cmd = app.add_subcommand("info", "Print counts, degree statistics, sizes and tier ranges of a dataset, or what "
                                         "a partition directory holds");
  cmd->add_option("dataset", opt->dataset, "Dataset directory, partition directory or one rank's directory")
      ->required();
  cmd->add_option("--gpu-budget", opt->gpu_budget, "GPU hot-tier budget: bytes (4GiB) or percent of the features (10%)")
      ->check(kBudget);
  cmd->add_option("--cpu-budget", opt->cpu_budget, "Pinned CPU-tier budget: bytes or percent of the features")
      ->check(kBudget);
  cmd->callback([opt, &global] { run_info(*opt, global); });
}

}  // namespace graphtier::cli
