// The `graphtier bench` subcommands, one file each.
#pragma once

#include "commands.hpp"

namespace graphtier::cli {

void register_bench_sample(CLI::App& bench, const GlobalOptions& global);
void register_bench_hotness(CLI::App& bench, const GlobalOptions& global);

}  // namespace graphtier::cli
