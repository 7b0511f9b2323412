// Entry point of the `graphtier` command: parses, dispatches, and turns any exception into one
// clear line on stderr with a non-zero exit status.
#include <cstdio>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <system_error>

#include "commands.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/memory.hpp"
#include "interrupt_handler.hpp"

int main(int argc, char** argv) {
  using namespace graphtier;
  keep_freed_memory();  // minibatches free and allocate the same sizes again: keep that memory
  CLI::App app{"graphtier: GNN training on graphs larger than memory"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "graphtier 0.1.0");
  cli::GlobalOptions global;
  app.add_flag("--json", global.json, "Print machine-readable JSON on stdout")->configurable(false);
  app.add_flag("-q,--quiet", global.quiet, "No progress display");
  app.add_option("-j,--threads", global.threads, "Worker threads (0: all cores; at most 4 per core)")->check(cli::kNonNegative);
  // A refused command line reads as every other refusal: one line on stderr, exit status 2.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("graphtier: error: ") + e.what() + " (see --help)\n";
  });
  app.parse_complete_callback([&] {
    if (global.quiet) set_log_level(LogLevel::kWarn);
  });
  // Subcommand options --json/--quiet are accepted after the subcommand name too.
  app.fallthrough();

  cli::register_convert(app, global);
  cli::register_generate(app, global);
  cli::register_prepare(app, global);
  cli::register_partition(app, global);
  cli::register_split_links(app, global);
  cli::register_info(app, global);
  cli::register_verify(app, global);
  cli::register_sample(app, global);
  cli::register_bench(app, global);
  cli::register_train(app, global);

  // Before the command starts any thread (docs/architecture.md, Errors: exit status 128 + signal).
  std::string command = "graphtier";
  for (int i = 1; i < argc && command == "graphtier"; ++i) {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == argv[i]) command = sub->get_name();
    }
  }
  cli::start_interrupt_handler(command);

  // An error reported after a SIGTERM may be the cleanup's doing: the interrupt's line and exit
  // status stand instead (wait_if_interrupted).
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    cli::wait_if_interrupted();
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::invalid_argument& e) {
    cli::wait_if_interrupted();
    std::cerr << "graphtier: error: " << e.what() << '\n';
    return 2;
  } catch (const std::out_of_range& e) {
    cli::wait_if_interrupted();
    std::cerr << "graphtier: error: " << e.what() << '\n';
    return 2;
  } catch (const std::system_error& e) {
    cli::wait_if_interrupted();
    std::cerr << "graphtier: error: " << e.what() << '\n';
    return 1;
  } catch (const std::exception& e) {
    cli::wait_if_interrupted();
    std::cerr << "graphtier: error: " << e.what() << '\n';
    return 1;
  }
  cli::wait_if_interrupted();
  return 0;
}
