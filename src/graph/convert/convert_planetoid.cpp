// Front door of Planetoid conversion: the pickles are Python objects (scipy sparse matrices,
// numpy arrays, a defaultdict), so a Python script extracts them into .npy files in a temporary
// directory, which the .npy converter then turns into a dataset. The script, not this file, holds
// the PyG semantics (python/graphtier/convert/planetoid.py).
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "byte_source.hpp"
#include "convert_npy.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/graph/convert.hpp"
#include "graphtier/graph/dataset.hpp"

extern char** environ;

namespace graphtier::graph {
namespace {

using ::graphtier::detail::concat;

/// The exit status planetoid.py uses when numpy or scipy cannot be imported.
constexpr int kMissingModulesStatus = 3;

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class ScratchDirectory {
 public:
  explicit ScratchDirectory(const std::string& prefix) {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" + prefix + "XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) GRAPHTIER_THROW_ERRNO(templ, ": cannot create temporary directory: ", std::strerror(errno));
    path_ = templ;
  }
  ~ScratchDirectory() { remove_tree(path_); }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// Runs argv[0] (looked up on PATH) with stdout and stderr going to `log_path`; returns the exit
/// status, or 128 + signal.
int run_process(const std::vector<std::string>& args, const std::string& log_path) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int err = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    if (err == ENOENT) throw Unsupported(concat("cannot run '", args[0], "': not found on PATH (Planetoid conversion needs python3 with numpy and scipy)"));
    throw IoError(err, concat("cannot run '", args[0], "': ", std::strerror(err)));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) GRAPHTIER_THROW_ERRNO("waitpid for ", args[0], " failed: ", std::strerror(errno));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/// The script's "error: ..." lines, or its last lines when it died another way.
std::string script_error(const std::string& log) {
  std::istringstream in(log);
  std::string line, errors, last;
  while (std::getline(in, line)) {
    if (line.rfind("error: ", 0) == 0) errors += (errors.empty() ? "" : "; ") + line.substr(7);
    if (!line.empty()) last = line;
  }
  return errors.empty() ? last : errors;
}

}  // namespace

std::string planetoid_script_path() {
  const char* dir = std::getenv("GRAPHTIER_PYTHON_DIR");
  const std::string base = dir != nullptr && *dir != '\0' ? std::string(dir) : std::string(GRAPHTIER_SOURCE_DIR "/python");
  return base + "/graphtier/convert/planetoid.py";
}

ConvertReport convert_planetoid(const PlanetoidInput& input, const std::string& out, const ConvertOptions& options,
                                ThreadPool& pool) {
  GRAPHTIER_EXPECTS(!input.name.empty(), InvalidArgument, "Planetoid dataset name is required (cora, citeseer, pubmed)");
  std::error_code ec;
  GRAPHTIER_EXPECTS(std::filesystem::is_directory(input.root, ec), InvalidArgument, "Planetoid root ", input.root,
                    " is not a directory");
  const std::string script = planetoid_script_path();
  if (!detail::file_exists(script)) {
    throw Unsupported(concat("Planetoid extraction script ", script, " not found (set GRAPHTIER_PYTHON_DIR to the "
                             "directory that holds graphtier/convert/planetoid.py)"));
  }
  // Fail on an existing output before spending time on extraction.
  if (!options.overwrite && std::filesystem::exists(out, ec)) {
    throw InvalidArgument(concat(out, " already exists (pass --overwrite to replace it)"));
  }

  const ScratchDirectory scratch("graphtier-planetoid-");
  const std::string log_path = scratch.path() + "/extract.log";
  const std::string arrays = scratch.path() + "/arrays";
  log_info("extracting Planetoid '", input.name, "' from ", input.root, " with ", script);
  const int status = run_process({input.python, script, "--root", input.root, "--name", input.name, "--out", arrays},
                                 log_path);
  const std::string log = read_text(log_path);
  if (status == kMissingModulesStatus) throw Unsupported(script_error(log));
  if (status != 0) {
    throw FormatError(input.root, concat("Planetoid extraction failed (", input.python, " exit status ", status,
                                         "): ", script_error(log)));
  }
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) log_info("planetoid.py: ", line);
  }
  const auto meta = nlohmann::json::parse(read_text(arrays + "/meta.json"));

  NpyInput npy;
  npy.edge_index = arrays + "/edge_index.npy";
  npy.edge_layout = EdgeLayout::kRows;
  npy.features = arrays + "/features.npy";
  npy.labels = arrays + "/labels.npy";
  npy.train = arrays + "/train.npy";
  npy.valid = arrays + "/valid.npy";
  npy.test = arrays + "/test.npy";
  ConvertOptions o = options;
  if (!o.num_classes) o.num_classes = meta.at("num_classes").get<int64_t>();
  if (o.name.empty()) o.name = input.name;
  ConvertReport report = detail::convert_npy_arrays(
      npy, out, o, pool, "planetoid",
      concat("graphtier convert planetoid: ", input.name, " from ", input.root,
             " (PyG read_planetoid_data semantics; unlabeled rows -1)"));
  // The script cleaned the adjacency lists; report what it read and removed.
  report.input_edges = meta.at("adjacency_entries").get<int64_t>();
  report.self_loops_removed = meta.at("self_loops_removed").get<int64_t>();
  report.duplicates_removed += meta.at("duplicates_removed").get<int64_t>();
  return report;
}

}  // namespace graphtier::graph
