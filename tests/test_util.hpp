// Helpers shared by the test suites: temporary directories and running the `graphtier` CLI.
#pragma once

#include <string>
#include <vector>

namespace graphtier::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const noexcept { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CommandResult {
  int exit_code = -1;  // exit status, or 128 + signal number
  std::string out;
  std::string err;
};

/// Path of the built `graphtier` binary (the build tree's, or $GRAPHTIER_TEST_CLI where the bundle
/// runs the tests from a copy of the tree elsewhere).
std::string cli_path();

/// cli_path() quoted for a shell command line.
std::string cli_command();

/// Runs the built `graphtier` binary with `args` (no shell quoting: args must not contain quotes).
CommandResult run_cli(const std::vector<std::string>& args);

/// Runs a shell command line, capturing stdout and stderr.
CommandResult run_shell(const std::string& command_line);

/// Path of the datasets embedded in the repository (datasets/ at its root; see datasets/README.md).
std::string datasets_dir();

/// Writes `bytes` to `path` (creating or truncating it).
void write_file(const std::string& path, const std::string& bytes);
std::string read_file(const std::string& path);

}  // namespace graphtier::test
