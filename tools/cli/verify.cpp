// `graphtier verify`: opens a dataset (sizes, ranges, monotonicity) and checks every checksum.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/graph/dataset.hpp"

namespace graphtier::cli {

void register_verify(CLI::App& app, const GlobalOptions& global) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("verify", "Validate a dataset fully, checksums included");
  cmd->add_option("dataset", *dir, "Dataset directory")->required();
  cmd->callback([dir, &global] {
    const auto dataset = graph::Dataset::open(*dir);
    uint64_t bytes = 0;
    for (const auto& [array, entry] : dataset.manifest().files) bytes += entry.bytes;
    Progress progress("verify checksums", static_cast<int64_t>(bytes), "B");
    dataset.verify_checksums(&progress);
    progress.finish();
    if (global.json) {
      std::cout << nlohmann::json{{"dataset", dataset.dir()}, {"ok", true}, {"bytes", bytes}}.dump() << '\n';
    } else {
      std::cout << dataset.dir() << ": ok (" << dataset.manifest().files.size() << " files, "
                << format_bytes(static_cast<double>(bytes)) << " checked)\n";
    }
  });
}

}  // namespace graphtier::cli
