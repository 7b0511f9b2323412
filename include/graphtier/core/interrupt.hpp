// What an interrupted process must not leave behind: the temporary directories its writers are
// filling and the child processes it runs (docs/architecture.md, Errors: exit status 128 +
// signal). Writers register them here while they exist; whoever owns the process's signals (the
// `graphtier` command, never the library or the Python extension) calls
// clean_up_for_interrupt() when SIGTERM, SIGINT or SIGHUP arrives and then ends the process.
// Registering costs a mutex and a map entry, so a library user that never cleans up pays nothing
// more.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <string>
#include <vector>

namespace graphtier {

/// Holds the registry. While it is held no cleanup can run, and once a cleanup has started it is
/// never released again: a writer's commit holds it across its rename and unregistration, so that
/// the target is always the old dataset or the new one.
[[nodiscard]] std::unique_lock<std::mutex> lock_interrupt_registry();

/// `path` (a temporary directory being filled for `target`) is removed by a cleanup; an empty
/// `target` when no output is lost with it (an old dataset a commit has swapped out). Registering a
/// path again replaces its target. The second form for a caller that holds the registry (to
/// create the directory and register it as one step).
void register_temporary(const std::string& path, const std::string& target);
void register_temporary(const std::string& path, const std::string& target, const std::unique_lock<std::mutex>& held);
/// Forgets `path`; the second form for a caller that holds the registry.
void unregister_temporary(const std::string& path);
void unregister_temporary(const std::string& path, const std::unique_lock<std::mutex>& held);

/// `pid` (a child of this process) is ended by a cleanup: SIGTERM, then SIGKILL when it has not
/// exited within a short grace period, and reaped. The second form for a caller that holds the
/// registry (to register a child in the same step as creating it).
void register_child(pid_t pid);
void register_child(pid_t pid, const std::unique_lock<std::mutex>& held);
/// Forgets `pid`. Call it before reaping the child (wait with WNOWAIT first), so a cleanup never
/// signals a reaped child's number that another process may have been given since.
void unregister_child(pid_t pid);

/// Ends the registered children, removes the registered temporaries, and returns the targets they
/// were for. Leaves the registry held for good: a writer that reaches its commit or its cleanup
/// afterwards blocks until the caller ends the process, which it must do next.
std::vector<std::string> clean_up_for_interrupt();

}  // namespace graphtier
