// How the `graphtier` command ends on SIGTERM, SIGINT and SIGHUP (docs/architecture.md, Errors):
// it removes what its writers were building, ends its children, says so in one line and exits
// with status 128 + signal. The command owns its process's signals; the library installs nothing.
#pragma once

#include <string>

namespace graphtier::cli {

/// Blocks SIGTERM, SIGINT and SIGHUP (those not inherited as ignored, as nohup and background
/// jobs of a shell set them) and starts the thread that waits for them. Call it first in main,
/// before any other thread exists, so that every thread inherits the mask. `command` names what
/// is interrupted in the message.
void start_interrupt_handler(std::string command);

/// Unblocks the signals again in the calling thread, for a command that replaces the process
/// with another program (`train`), which must receive them as usual.
void unblock_interrupt_signals();

/// Once a signal has been taken the cleanup thread ends the process; a caller about to report an
/// error or to return from main waits for it instead, since that error may be the cleanup's doing
/// and the exit status must be 128 + signal. Returns at once when no signal was taken.
void wait_if_interrupted();

}  // namespace graphtier::cli
