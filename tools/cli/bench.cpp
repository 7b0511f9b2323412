// `graphtier bench <what>`: throughput benchmarks against the machine's limits, measured in the
// same run (benchmarks are not tests: nothing here gates CI).
#include "bench.hpp"

namespace graphtier::cli {

void register_bench(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand("bench", "Throughput benchmarks against the machine's measured limits");
  cmd->require_subcommand(1);
  register_bench_sample(*cmd, global);
  register_bench_hotness(*cmd, global);
}

}  // namespace graphtier::cli
