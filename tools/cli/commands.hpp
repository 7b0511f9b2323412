// The `graphtier` subcommands: one file per subcommand, each registering itself on the app.
#pragma once

#include <CLI/CLI.hpp>

namespace graphtier::cli {

/// Options shared by every subcommand.
struct GlobalOptions {
  bool json = false;   // machine-readable output on stdout
  bool quiet = false;  // no progress display
  int threads = 0;     // 0: all cores
};

void register_convert(CLI::App& app, const GlobalOptions& global);
void register_generate(CLI::App& app, const GlobalOptions& global);
void register_prepare(CLI::App& app, const GlobalOptions& global);
void register_info(CLI::App& app, const GlobalOptions& global);
void register_verify(CLI::App& app, const GlobalOptions& global);
void register_sample(CLI::App& app, const GlobalOptions& global);
void register_bench(CLI::App& app, const GlobalOptions& global);
void register_train(CLI::App& app, const GlobalOptions& global);

}  // namespace graphtier::cli
