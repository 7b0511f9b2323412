#include "interrupt_handler.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "graphtier/core/interrupt.hpp"

namespace graphtier::cli {
namespace {

std::atomic<bool> interrupted{false};
sigset_t handled;  // the signals the handler waits for; written once before any other thread starts

const char* signal_name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}

[[noreturn]] void handle_interrupts(sigset_t set, const std::string& command) {
  int sig = 0;
  while (::sigwait(&set, &sig) != 0) {
  }
  interrupted.store(true);
  const std::vector<std::string> targets = clean_up_for_interrupt();
  std::string line = "graphtier: " + command + " interrupted by " + signal_name(sig);
  if (!targets.empty()) {
    line += "; nothing was written to ";
    for (std::size_t i = 0; i < targets.size(); ++i) line += (i == 0 ? "" : ", ") + targets[i];
    line += " (temporary files removed)";
  }
  line += "\n";
  (void)!::write(STDERR_FILENO, line.data(), line.size());
  ::_exit(128 + sig);  // no destructors or atexit handlers: other threads are still running
}

}  // namespace

void start_interrupt_handler(std::string command) {
  sigset_t set;
  sigemptyset(&set);
  for (const int sig : {SIGTERM, SIGINT, SIGHUP}) {
    struct sigaction current {};
    if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler != SIG_IGN) sigaddset(&set, sig);
  }
  if (sigisemptyset(&set)) return;
  handled = set;
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread(handle_interrupts, set, std::move(command)).detach();
}

void unblock_interrupt_signals() { ::pthread_sigmask(SIG_UNBLOCK, &handled, nullptr); }

void wait_if_interrupted() {
  if (!interrupted.load()) return;
  for (;;) ::pause();
}

}  // namespace graphtier::cli
