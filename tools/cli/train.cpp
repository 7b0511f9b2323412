// `graphtier train`: the training job is PyTorch code (python/graphtier/train.py); this subcommand
// replaces itself with the Python interpreter that has the graphtier package and hands it every
// argument after `train`. GRAPHTIER_PYTHON names the interpreter; without it, the python3 in this
// executable's own directory (a virtual environment's bin/, where pip installs both), else python3
// on PATH.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "commands.hpp"
#include "executable.hpp"
#include "interrupt_handler.hpp"

namespace graphtier::cli {
namespace {

// Runs graphtier.train.main under the name `graphtier train`, and says plainly when the
// interpreter cannot import the package (instead of a bare ModuleNotFoundError traceback).
constexpr const char* kLauncher = R"(import sys
try:
    from graphtier import train
except ImportError as e:
    sys.exit(f"graphtier: error: {sys.executable} cannot import the graphtier package ({e}); "
             "install it (pip install . in the repository) or name an interpreter that has it in GRAPHTIER_PYTHON")
sys.exit(train.main(sys.argv[1:], prog="graphtier train"))
)";

[[noreturn]] void run_train(const std::vector<std::string>& args, const GlobalOptions& global) {
  if (global.json) throw std::invalid_argument("train: --json takes a file there: graphtier train DATASET --json FILE");
  const char* env = std::getenv("GRAPHTIER_PYTHON");
  const std::string python = env != nullptr && *env != '\0' ? env : default_python();
  std::vector<std::string> argv_strings{python, "-c", kLauncher};
  if (global.quiet) argv_strings.emplace_back("--quiet");
  if (global.threads > 0) argv_strings.insert(argv_strings.end(), {"--threads", std::to_string(global.threads)});
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  unblock_interrupt_signals();  // the training job takes Ctrl-C and SIGTERM itself
  execvp(python.c_str(), argv.data());
  throw std::system_error(errno, std::generic_category(),
                          "cannot run the Python interpreter '" + python + "' (set GRAPHTIER_PYTHON)");
}

}  // namespace

void register_train(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "train", "Train a GNN with PyTorch (python -m graphtier.train; `graphtier train --help` lists its options)");
  // Every argument after `train`, --help included, belongs to the Python job (none falls through
  // to the top-level options).
  cmd->prefix_command();
  cmd->set_help_flag();
  cmd->fallthrough(false);
  cmd->callback([cmd, &global] { run_train(cmd->remaining(), global); });
}

}  // namespace graphtier::cli
