// Writers ended by SIGTERM, SIGINT or SIGHUP (docs/architecture.md, Errors: exit status 128 +
// signal): the command is parked at a named point by the test hook, so the signal lands in a known
// state; it must exit with 128 + signal after removing its temporary directory and ending its
// children, leaving the previous dataset or none. `convert planetoid`'s python child is replaced
// by a script that sleeps, so the test can see whether it outlives its parent.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "graphtier/graph/dataset.hpp"
#include "test_util.hpp"

extern char** environ;

namespace graphtier {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct Outcome {
  bool exited = false;  // false: ended by a signal (its number in `signal`), or never ended
  int status = -1;
  int signal = 0;
  std::string err;
};

/// A `graphtier` process started with extra environment variables, its stderr in a file.
class CliProcess {
 public:
  /// `ignore_hangup`: started with SIGHUP ignored, as nohup starts a command.
  CliProcess(const std::vector<std::string>& args, const std::vector<std::string>& env, const std::string& err_path,
             bool ignore_hangup = false)
      : err_path_(err_path) {
    std::vector<std::string> arg_strings{test::cli_path()};
    arg_strings.insert(arg_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : arg_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings = env;
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    // Default dispositions and nothing blocked, as a command started from a terminal has them.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults, none;
    sigemptyset(&defaults);
    for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&defaults, s);
    // An ignored disposition is inherited through exec: ignored here around the spawn.
    struct sigaction ignore {}, previous {};
    ignore.sa_handler = SIG_IGN;
    if (ignore_hangup) {
      sigdelset(&defaults, SIGHUP);
      ::sigaction(SIGHUP, &ignore, &previous);
    }
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    const int rc = ::posix_spawn(&pid_, argv[0], &actions, &attr, argv.data(), envp.data());
    if (ignore_hangup) ::sigaction(SIGHUP, &previous, nullptr);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) pid_ = -1;
  }
  ~CliProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  pid_t pid() const { return pid_; }
  void send(int sig) const { ::kill(pid_, sig); }

  /// Waits at most `limit` for the process to end.
  Outcome wait(std::chrono::seconds limit) {
    Outcome o;
    const auto deadline = Clock::now() + limit;
    int status = 0;
    while (pid_ > 0) {
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        o.exited = WIFEXITED(status);
        o.status = o.exited ? WEXITSTATUS(status) : -1;
        o.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        break;
      }
      if (Clock::now() > deadline) break;
      std::this_thread::sleep_for(10ms);
    }
    o.err = test::read_file(err_path_);
    return o;
  }

 private:
  pid_t pid_ = -1;
  std::string err_path_;
};

/// Waits at most 60 s for `path` to exist (the park marker or the child's pid file).
bool wait_for_file(const std::string& path, const CliProcess& process) {
  const auto deadline = Clock::now() + 60s;
  while (!fs::exists(path)) {
    if (Clock::now() > deadline) return fs::exists(path);
    // A parked process never ends by itself; one that ended has not reached the point.
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(process.pid()), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0) {
      return fs::exists(path);
    }
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

/// Whether `pid` is still a live process (a zombie waiting for a reaper counts as gone).
bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  const std::string stat = test::read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'Z';
}

bool gone_within(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (alive(pid)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

/// Entries of `dir` that hold `.tmp-` in their name: a writer's temporaries and scratch.
std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename();
    if (name.find(".tmp-") != std::string::npos) found.push_back(name);
  }
  return found;
}

std::vector<std::string> generate_argv(const std::string& out, const std::string& nodes, const std::string& edges) {
  return {"-q", "generate", "--out", out, "--nodes", nodes, "--edges", edges, "--feature-dim", "64",
          "--classes", "4", "--seed", "3"};
}

class SignalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto r = test::run_cli(generate_argv(tmp_ / "small", "2000", "20000"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    fs::create_directory(work_);
  }

  /// Runs `args` parked at `point`, sends `sig` once it is parked, and waits for it to end.
  Outcome interrupt_when_parked(const std::vector<std::string>& args, const std::string& point, int sig) {
    const std::string marker = work_ + "/parked";
    fs::remove(marker);
    CliProcess p(args, {"GRAPHTIER_TEST_PARK_AT=" + point, "GRAPHTIER_TEST_PARK_MARKER=" + marker}, work_ + "/err");
    EXPECT_GT(p.pid(), 0);
    if (!wait_for_file(marker, p)) {
      ADD_FAILURE() << "never parked at " << point;
      return p.wait(0s);
    }
    p.send(sig);
    return p.wait(60s);
  }

  static void expect_clean_exit(const Outcome& o, int sig, const std::string& target) {
    EXPECT_TRUE(o.exited) << "ended by signal " << o.signal << " instead of exiting; stderr: " << o.err;
    EXPECT_EQ(o.status, 128 + sig) << o.err;
    EXPECT_NE(o.err.find(std::string("interrupted by SIG") + sigabbrev_np(sig)), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("nothing was written to " + target), std::string::npos) << o.err;
  }

  test::TempDir tmp_;
  std::string work_ = tmp_ / "work";  // markers and logs, apart from the datasets' directory
};

TEST_F(SignalTest, TerminatedGenerateLeavesNothing) {
  const std::string out = tmp_ / "fresh";
  const Outcome o = interrupt_when_parked(generate_argv(out, "20000", "200000"), "generate.nodes_written", SIGTERM);
  expect_clean_exit(o, SIGTERM, out);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(temporaries(tmp_.path()), std::vector<std::string>{});
}

TEST_F(SignalTest, InterruptedOverwriteKeepsThePreviousDataset) {
  const std::string out = tmp_ / "small";
  const std::string before = test::read_file(out + "/manifest.json");
  // In the middle of writing, and with the new dataset complete but not yet swapped in.
  for (const char* point : {"generate.nodes_written", "dataset_writer.staged"}) {
    SCOPED_TRACE(point);
    auto args = generate_argv(out, "20000", "200000");
    args.push_back("--overwrite");
    const Outcome o = interrupt_when_parked(args, point, SIGINT);
    expect_clean_exit(o, SIGINT, out);
    EXPECT_EQ(test::read_file(out + "/manifest.json"), before);
    EXPECT_NO_THROW(graph::Dataset::open(out).verify_checksums());
    EXPECT_EQ(temporaries(tmp_.path()), std::vector<std::string>{});
  }
}

TEST_F(SignalTest, TerminatedAfterTheSwapKeepsTheNewDataset) {
  // The new dataset is in place and the old one beside it is being removed: the cleanup removes
  // the old one and must not claim that nothing was written.
  const std::string out = tmp_ / "small";
  auto args = generate_argv(out, "3000", "30000");
  args.push_back("--overwrite");
  const Outcome o = interrupt_when_parked(args, "dataset_writer.swapped", SIGTERM);
  EXPECT_TRUE(o.exited) << o.err;
  EXPECT_EQ(o.status, 128 + SIGTERM) << o.err;
  EXPECT_NE(o.err.find("interrupted by SIGTERM"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("nothing was written"), std::string::npos) << o.err;
  EXPECT_EQ(graph::Dataset::open(out).num_nodes(), 3000);
  EXPECT_NO_THROW(graph::Dataset::open(out).verify_checksums());
  EXPECT_EQ(temporaries(tmp_.path()), std::vector<std::string>{});
}

TEST_F(SignalTest, AnIgnoredHangupStaysIgnored) {
  // Started under nohup: SIGHUP changes nothing, SIGTERM still cleans up.
  const std::string out = tmp_ / "fresh";
  const std::string marker = work_ + "/parked";
  CliProcess p(generate_argv(out, "20000", "200000"),
               {"GRAPHTIER_TEST_PARK_AT=generate.nodes_written", "GRAPHTIER_TEST_PARK_MARKER=" + marker}, work_ + "/err",
               /*ignore_hangup=*/true);
  ASSERT_TRUE(wait_for_file(marker, p)) << test::read_file(work_ + "/err");
  p.send(SIGHUP);
  std::this_thread::sleep_for(500ms);
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(p.pid()), &info, WEXITED | WNOHANG | WNOWAIT), 0);
  EXPECT_EQ(info.si_pid, 0) << "an ignored SIGHUP ended the command";
  p.send(SIGTERM);
  expect_clean_exit(p.wait(60s), SIGTERM, out);
  EXPECT_EQ(temporaries(tmp_.path()), std::vector<std::string>{});
}

TEST_F(SignalTest, TerminatedPrepareLeavesNothing) {
  const std::string out = tmp_ / "prepared";
  const Outcome o = interrupt_when_parked(
      {"-q", "prepare", "--dataset", tmp_ / "small", "--out", out, "--hotness", "wrpr"}, "prepare.relabelled", SIGTERM);
  expect_clean_exit(o, SIGTERM, out);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(temporaries(tmp_.path()), std::vector<std::string>{});
  EXPECT_NO_THROW(graph::Dataset::open(tmp_ / "small").verify_checksums());
}

TEST_F(SignalTest, HungUpConvertLeavesNothing) {
  const std::string edges = work_ + "/edges.txt";
  ASSERT_EQ(test::run_shell("seq 1 60000 | awk '{print $1 % 10000, ($1 * 7) % 10000}' > " + edges).exit_code, 0);
  const std::string out = tmp_ / "converted";
  const Outcome o =
      interrupt_when_parked({"-q", "convert", "edge-list", edges, "--out", out}, "convert.topology_written", SIGHUP);
  expect_clean_exit(o, SIGHUP, out);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(temporaries(tmp_.path()), std::vector<std::string>{});
}

TEST_F(SignalTest, TrainHandsTheSignalsToItsInterpreter) {
  // `train` replaces itself with Python, which must get Ctrl-C and SIGTERM as from a terminal:
  // the stand-in interpreter reports the signals it was started with blocked.
  const std::string stub = work_ + "/python";
  test::write_file(stub, "#!/bin/sh\nexec grep SigBlk /proc/self/status\n");
  fs::permissions(stub, fs::perms::owner_all);
  const auto r = test::run_shell("GRAPHTIER_PYTHON='" + stub + "' '" + test::cli_path() + "' train dataset");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto colon = r.out.find(':');
  ASSERT_NE(colon, std::string::npos) << r.out;
  const unsigned long long blocked = std::stoull(r.out.substr(colon + 1), nullptr, 16);
  for (const int sig : {SIGTERM, SIGINT, SIGHUP}) EXPECT_EQ(blocked & (1ULL << (sig - 1)), 0U) << sigabbrev_np(sig);
}

/// `convert planetoid` with a stand-in planetoid.py that writes its pid and sleeps (ignoring
/// SIGTERM when asked), so the child is running when the parent is signalled.
class PlanetoidSignalTest : public SignalTest {
 protected:
  void SetUp() override {
    SignalTest::SetUp();
    fs::create_directories(work_ + "/python/graphtier/convert");
    fs::create_directory(work_ + "/root");
    test::write_file(work_ + "/python/graphtier/convert/planetoid.py",
                     "import os, signal, sys, time\n"
                     "if os.environ.get('STANDIN_IGNORE_TERM'):\n"
                     "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                     "out = sys.argv[sys.argv.index('--out') + 1]\n"
                     "os.makedirs(out)\n"
                     "pid_file = os.environ['STANDIN_PID_FILE']\n"
                     "with open(pid_file + '.tmp', 'w') as f:\n"
                     "    f.write(str(os.getpid()))\n"
                     "os.rename(pid_file + '.tmp', pid_file)\n"
                     "time.sleep(300)\n");
  }

  /// Starts the conversion and waits until the stand-in runs; returns the child's pid (0: never ran).
  pid_t start(bool ignore_term) {
    std::vector<std::string> env{"GRAPHTIER_PYTHON_DIR=" + work_ + "/python", "STANDIN_PID_FILE=" + pid_file()};
    if (ignore_term) env.push_back("STANDIN_IGNORE_TERM=1");
    process_ = std::make_unique<CliProcess>(
        std::vector<std::string>{"-q", "convert", "planetoid", "--root", work_ + "/root", "--name", "cora", "--out", out()},
        env, work_ + "/err");
    if (!wait_for_file(pid_file(), *process_)) return 0;
    return static_cast<pid_t>(std::stol(test::read_file(pid_file())));
  }
  std::string out() const { return tmp_ / "cora"; }
  std::string pid_file() const { return work_ + "/child.pid"; }
  std::unique_ptr<CliProcess> process_;
};

TEST_F(PlanetoidSignalTest, TerminatedParentEndsTheChildAndRemovesTheScratch) {
  for (const bool ignore_term : {false, true}) {
    SCOPED_TRACE(ignore_term ? "child ignores SIGTERM" : "child obeys SIGTERM");
    fs::remove(pid_file());
    const pid_t child = start(ignore_term);
    CliProcess* p = process_.get();
    ASSERT_GT(child, 0) << "the stand-in script never ran: " << test::read_file(work_ + "/err");
    EXPECT_FALSE(temporaries(tmp_.path()).empty()) << "the scratch directory is not beside the output";
    const auto sent = Clock::now();
    p->send(SIGTERM);
    const Outcome o = p->wait(30s);
    expect_clean_exit(o, SIGTERM, out());
    // The child is asked to end, and killed when it does not within the grace period.
    EXPECT_TRUE(gone_within(child, 10s)) << "the python child outlived its parent";
    EXPECT_LT(Clock::now() - sent, 20s);
    EXPECT_EQ(temporaries(tmp_.path()), std::vector<std::string>{});
    EXPECT_FALSE(fs::exists(out()));
    if (alive(child)) ::kill(child, SIGKILL);
  }
}

TEST_F(PlanetoidSignalTest, KilledParentTakesTheChildAlong) {
  const pid_t child = start(/*ignore_term=*/true);
  CliProcess* p = process_.get();
  ASSERT_GT(child, 0) << "the stand-in script never ran: " << test::read_file(work_ + "/err");
  p->send(SIGKILL);
  const Outcome o = p->wait(30s);
  EXPECT_EQ(o.signal, SIGKILL);
  EXPECT_TRUE(gone_within(child, 10s)) << "the python child outlived its parent";
  if (alive(child)) ::kill(child, SIGKILL);
  // The scratch of a killed run stays until the next writer of the same output sweeps it.
  ASSERT_EQ(test::run_cli(generate_argv(out(), "1000", "10000")).exit_code, 0);
  EXPECT_EQ(temporaries(tmp_.path()), std::vector<std::string>{});
}

}  // namespace
}  // namespace graphtier
