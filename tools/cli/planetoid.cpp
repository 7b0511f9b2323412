// Finding and running planetoid.py for `graphtier convert planetoid` (planetoid.hpp).
#include "planetoid.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "graphtier/core/error.hpp"
#include "graphtier/core/interrupt.hpp"
#include "graphtier/core/log.hpp"
#include "executable.hpp"
#include "graphtier/graph/dataset.hpp"

namespace graphtier::cli {
namespace {

namespace fs = std::filesystem;
using ::graphtier::detail::concat;

/// The exit status planetoid.py uses when numpy or scipy cannot be imported.
constexpr int kMissingModulesStatus = 3;
constexpr const char* kModule = "graphtier.convert.planetoid";
constexpr const char* kScriptInPackage = "graphtier/convert/planetoid.py";

/// A fresh directory from a mkdtemp template for the dataset `target`, removed with its contents on
/// destruction or by an interrupt's cleanup (core/interrupt.hpp).
class ScratchDirectory {
 public:
  ScratchDirectory(std::string templ, const std::string& target) {
    // Created and registered as one step for a cleanup, which never sees it unregistered.
    const auto held = lock_interrupt_registry();
    if (::mkdtemp(templ.data()) == nullptr) GRAPHTIER_THROW_ERRNO(templ, ": cannot create a scratch directory: ", std::strerror(errno));
    path_ = templ;
    register_temporary(path_, target, held);
  }
  ~ScratchDirectory() {
    graph::remove_tree(path_);
    unregister_temporary(path_);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

/// Scratch space beside `out`, so that the extracted arrays stay on the output's file system and
/// never fill a small /tmp. The name `.<base>.tmp-<pid>-...` is the dataset writer's own pattern,
/// whose stale entries (of dead processes) the next writer of `out` removes.
std::string scratch_template(std::string out) {
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  const fs::path path(out);
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  GRAPHTIER_EXPECTS(fs::is_directory(parent, ec), InvalidArgument, "parent directory ", parent.string(),
                    " of the output does not exist");
  return concat(parent.string(), "/.", path.filename().string(), ".tmp-", ::getpid(), "-planetoid-XXXXXX");
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// Where execvp would find `program`: itself when it names a path, else the first executable on
/// PATH (or /bin:/usr/bin when PATH is unset); empty when there is none.
std::string find_on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* env = std::getenv("PATH");
  std::istringstream dirs(env != nullptr ? env : "/bin:/usr/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

/// Runs argv[0] (looked up on PATH) with stdout and stderr going to `log_path` (or discarded when
/// empty); returns the exit status, or 128 + signal. The child is registered with the interrupt
/// registry (core/interrupt.hpp), so an interrupted `graphtier` ends it, and it is killed by the
/// kernel when this thread ends for any reason (PR_SET_PDEATHSIG), SIGKILL included; callers run
/// it on the main thread, which lives as long as the process.
int run_process(const std::vector<std::string>& args, const std::string& log_path) {
  const std::string program = find_on_path(args[0]);
  if (program.empty()) {
    throw Unsupported(concat("cannot run '", args[0], "': not found on PATH (Planetoid conversion needs python3 with numpy and scipy)"));
  }
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const char* log = log_path.empty() ? "/dev/null" : log_path.c_str();
  int exec_errors[2];  // the child reports a failed exec here; closed on a successful one
  if (::pipe2(exec_errors, O_CLOEXEC) != 0) GRAPHTIER_THROW_ERRNO("cannot run '", args[0], "': pipe: ", std::strerror(errno));
  const pid_t parent = ::getpid();
  pid_t pid = 0;
  {
    // Created and registered as one step for a cleanup, which never misses a running child.
    const auto held = lock_interrupt_registry();
    pid = ::fork();
    if (pid == 0) {
      // Only async-signal-safe calls from here to exec: the parent has other threads.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);  // the parent died before the line above
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);  // the CLI blocks the signals it waits for
      const int in = ::open("/dev/null", O_RDONLY);
      const int out = ::open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in < 0 || out < 0 || ::dup2(in, STDIN_FILENO) < 0 || ::dup2(out, STDOUT_FILENO) < 0 ||
          ::dup2(out, STDERR_FILENO) < 0) {
        const int err = errno;
        (void)!::write(exec_errors[1], &err, sizeof err);
        ::_exit(127);
      }
      ::execv(program.c_str(), argv.data());
      const int err = errno;
      (void)!::write(exec_errors[1], &err, sizeof err);
      ::_exit(127);
    }
    if (pid > 0) register_child(pid, held);
  }
  const int fork_errno = errno;
  ::close(exec_errors[1]);
  if (pid < 0) {
    ::close(exec_errors[0]);
    throw IoError(fork_errno, concat("cannot run '", args[0], "': fork: ", std::strerror(fork_errno)));
  }
  int err = 0;
  ssize_t got = 0;
  while ((got = ::read(exec_errors[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  ::close(exec_errors[0]);
  // Waited for without reaping, and forgotten before it is reaped (core/interrupt.hpp).
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
  unregister_child(pid);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) GRAPHTIER_THROW_ERRNO("waitpid for ", args[0], " failed: ", std::strerror(errno));
  }
  if (got == static_cast<ssize_t>(sizeof err)) {
    if (err == ENOENT) throw Unsupported(concat("cannot run '", args[0], "': not found on PATH (Planetoid conversion needs python3 with numpy and scipy)"));
    throw IoError(err, concat("cannot run '", args[0], "': ", std::strerror(err)));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/// The script's "error: ..." lines, or its last line when it died another way.
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

PlanetoidScript find_planetoid_script(const std::string& python) {
  std::vector<std::string> tried;
  std::string script;
  const auto found = [&](const fs::path& candidate, const char* where) {
    script = candidate.lexically_normal().string();
    std::error_code ec;
    if (fs::is_regular_file(script, ec)) return true;
    tried.push_back(concat(script, " (", where, ")"));
    return false;
  };
  const char* dir = std::getenv("GRAPHTIER_PYTHON_DIR");
  if (dir != nullptr && *dir != '\0' && found(fs::path(dir) / kScriptInPackage, "$GRAPHTIER_PYTHON_DIR")) {
    return {{python, script}, script};
  }
  if (const fs::path bin = executable_directory(); !bin.empty()) {
    if (found(bin / "../../python" / kScriptInPackage, "build tree")) return {{python, script}, script};
    if (found(bin / "../share/graphtier/python" / kScriptInPackage, "install tree")) return {{python, script}, script};
  }
  // find_spec imports the parent packages, not the script (which exits when numpy is missing).
  const std::string probe = concat("import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('", kModule,
                                   "') else 1)");
  if (run_process({python, "-c", probe}, "") == 0) return {{python, "-m", kModule}, concat("-m ", kModule)};
  tried.push_back(concat(python, " -m ", kModule, " (the graphtier package is not importable)"));
  std::string list;
  for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
  throw Unsupported(concat("Planetoid extraction script not found; tried ", list,
                           ". Set GRAPHTIER_PYTHON_DIR to the directory that holds ", kScriptInPackage));
}

graph::ConvertReport convert_planetoid(const PlanetoidInput& given, const std::string& out,
                                       const graph::ConvertOptions& options, ThreadPool& pool) {
  PlanetoidInput input = given;
  if (input.python.empty()) input.python = default_python();
  GRAPHTIER_EXPECTS(!input.name.empty(), InvalidArgument, "Planetoid dataset name is required (cora, citeseer, pubmed)");
  std::error_code ec;
  GRAPHTIER_EXPECTS(fs::is_directory(input.root, ec), InvalidArgument, "Planetoid root ", input.root,
                    " is not a directory");
  // Fail on an existing output before spending time on extraction.
  if (!options.overwrite && fs::exists(out, ec)) {
    throw InvalidArgument(concat(out, " already exists (pass --overwrite to replace it)"));
  }
  const PlanetoidScript script = find_planetoid_script(input.python);

  const ScratchDirectory scratch(scratch_template(out), out);
  const std::string log_path = scratch.path() + "/extract.log";
  const std::string arrays = scratch.path() + "/arrays";
  log_info("extracting Planetoid '", input.name, "' from ", input.root, " with ", script.shown);
  std::vector<std::string> command = script.command;
  command.insert(command.end(), {"--root", input.root, "--name", input.name, "--out", arrays});
  const int status = run_process(command, log_path);
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
  return graph::convert_planetoid_arrays({arrays, input.name, input.root}, out, options, pool);
}

}  // namespace graphtier::cli
