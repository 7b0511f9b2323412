// `graphtier verify`: opens a dataset (sizes, ranges, monotonicity) and checks every checksum; a
// partition directory (or one rank's directory) is verified dataset by dataset, against its
// manifest and against its source (include/graphtier/prep/partition.hpp).
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph/summary.hpp"
#include "graphtier/prep/partition.hpp"
#include "typed_summary.hpp"

namespace graphtier::cli {
namespace {

struct VerifyCliOptions {
  std::string dir;
  std::string source;
};

void verify_dataset(const VerifyCliOptions& c, const GlobalOptions& global) {
  GRAPHTIER_EXPECTS(c.source.empty(), InvalidArgument, "--source applies to a partition directory, and ", c.dir,
                    " has no partition.json");
  const auto dataset = graph::Dataset::open(c.dir);
  uint64_t bytes = 0;
  for (const auto& [array, entry] : dataset.manifest().files) bytes += entry.bytes;
  Progress progress("verify checksums", static_cast<int64_t>(bytes), "B");
  dataset.verify_checksums(&progress);
  progress.finish();
  // The typed layout was checked by open() (types, relations, every edge's relation and ends).
  const std::vector<int64_t> per_relation = graph::edges_per_relation(dataset);
  if (global.json) {
    nlohmann::json j{{"dataset", dataset.dir()}, {"ok", true}, {"bytes", bytes}};
    if (dataset.is_hetero()) j["typed"] = nlohmann::json(typed_json(dataset, per_relation));
    std::cout << j.dump() << '\n';
  } else {
    std::cout << dataset.dir() << ": ok (" << dataset.manifest().files.size() << " files, "
              << format_bytes(static_cast<double>(bytes)) << " checked)\n";
    std::cout.flush();
    print_typed(dataset, per_relation);
  }
}

void verify_partition(const VerifyCliOptions& c, const GlobalOptions& global) {
  const prep::PartitionVerifyReport r = prep::verify_partition(c.dir, c.source);
  if (global.json) {
    nlohmann::ordered_json j{{"partition", r.dir}, {"ok", true}, {"datasets", r.datasets}, {"bytes", r.bytes}};
    if (r.rank) j["rank"] = *r.rank;
    j["source"] = r.source;
    if (!r.source_path.empty()) j["source_path"] = r.source_path;
    std::cout << j.dump() << '\n';
  } else {
    std::cout << r.dir << ": ok (partition" << (r.rank ? " rank " + std::to_string(*r.rank) : std::string()) << ", "
              << r.datasets << " datasets, " << format_bytes(static_cast<double>(r.bytes)) << " checked; source "
              << (r.source_path.empty() ? r.source : r.source + " against " + r.source_path) << ")\n";
  }
}

}  // namespace

void register_verify(CLI::App& app, const GlobalOptions& global) {
  auto opt = std::make_shared<VerifyCliOptions>();
  auto* cmd = app.add_subcommand("verify", "Validate a dataset or a partition directory fully, checksums included");
  cmd->add_option("dataset", opt->dir, "Dataset, partition directory, or one rank's directory")->required();
  cmd->add_option("--source", opt->source,
                  "The dataset a partition directory was made from (default: the path it records, when it exists)");
  cmd->callback([opt, &global] {
    if (prep::is_partition_directory(opt->dir)) {
      verify_partition(*opt, global);
    } else {
      verify_dataset(*opt, global);
    }
  });
}

}  // namespace graphtier::cli
