#include "graphtier/core/interrupt.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

namespace graphtier {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::string> temporaries;  // path -> target
  std::vector<pid_t> children;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: a cleanup may run while the process exits
  return *r;
}

/// How long a child may take to end after SIGTERM before it is killed.
constexpr auto kChildGrace = std::chrono::seconds(2);

void end_child(pid_t pid) {
  if (::kill(pid, SIGTERM) != 0) return;
  const auto deadline = std::chrono::steady_clock::now() + kChildGrace;
  while (std::chrono::steady_clock::now() < deadline) {
    const pid_t r = ::waitpid(pid, nullptr, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

/// The writer's threads may still be creating files in `path` while it is removed, so it is first
/// renamed (later creations under the old name fail instead of refilling it) under a name the next
/// writer's sweep of stale temporaries still recognises.
void remove_temporary(const std::string& path) {
  std::error_code ec;
  std::string doomed = path + "-interrupted";
  if (::rename(path.c_str(), doomed.c_str()) != 0) doomed = path;
  for (int attempt = 0; attempt < 3 && std::filesystem::exists(doomed, ec); ++attempt) {
    std::filesystem::remove_all(doomed, ec);
  }
}

}  // namespace

std::unique_lock<std::mutex> lock_interrupt_registry() { return std::unique_lock<std::mutex>(registry().mutex); }

void register_temporary(const std::string& path, const std::string& target) {
  const auto held = lock_interrupt_registry();
  register_temporary(path, target, held);
}

void register_temporary(const std::string& path, const std::string& target,
                        const std::unique_lock<std::mutex>& /*held*/) {
  registry().temporaries[path] = target;
}

void unregister_temporary(const std::string& path) {
  const auto held = lock_interrupt_registry();
  unregister_temporary(path, held);
}

void unregister_temporary(const std::string& path, const std::unique_lock<std::mutex>& /*held*/) {
  registry().temporaries.erase(path);
}

void register_child(pid_t pid) {
  const auto held = lock_interrupt_registry();
  register_child(pid, held);
}

void register_child(pid_t pid, const std::unique_lock<std::mutex>& /*held*/) { registry().children.push_back(pid); }

void unregister_child(pid_t pid) {
  const auto held = lock_interrupt_registry();
  auto& children = registry().children;
  children.erase(std::remove(children.begin(), children.end(), pid), children.end());
}

std::vector<std::string> clean_up_for_interrupt() {
  Registry& r = registry();
  r.mutex.lock();  // never unlocked: see the header
  // Children first: they may be writing into a registered scratch directory.
  for (const pid_t pid : r.children) end_child(pid);
  std::vector<std::string> targets;
  for (const auto& [path, target] : r.temporaries) {
    remove_temporary(path);
    if (!target.empty() && std::find(targets.begin(), targets.end(), target) == targets.end()) {
      targets.push_back(target);
    }
  }
  return targets;
}

}  // namespace graphtier
