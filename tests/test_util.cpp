#include "test_util.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace graphtier::test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/graphtier-test-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + templ);
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) throw std::runtime_error("cannot write " + path);
}

CommandResult run_shell(const std::string& command_line) {
  TempDir tmp;
  const std::string out_path = tmp / "out", err_path = tmp / "err";
  const std::string full = "(" + command_line + ") >" + out_path + " 2>" + err_path + " </dev/null";
  const int status = std::system(full.c_str());
  CommandResult result;
  if (status != -1 && WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (status != -1 && WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  return result;
}

// The build tree's paths, unless the environment names others: the GPU bundle runs these binaries
// from a copy of the tree elsewhere (scripts/gpu-bundle.sh).
static std::string path_from_env(const char* variable, const char* built_in) {
  const char* value = std::getenv(variable);
  return value != nullptr && *value != '\0' ? value : built_in;
}

std::string cli_path() { return path_from_env("GRAPHTIER_TEST_CLI", GRAPHTIER_CLI); }

std::string cli_command() { return "'" + cli_path() + "'"; }

CommandResult run_cli(const std::vector<std::string>& args) {
  std::string line = cli_command();
  for (const auto& a : args) line += " '" + a + "'";
  return run_shell(line);
}

std::string datasets_dir() { return path_from_env("GRAPHTIER_TEST_DATASETS", GRAPHTIER_DATASETS_DIR); }

}  // namespace graphtier::test
