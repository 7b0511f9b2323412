// Where the running `graphtier` executable lives, and the Python interpreter installed beside it:
// the subcommands that run Python (`train`, `convert planetoid`) use the environment the
// executable was installed into, activated or not.
#pragma once

#include <filesystem>
#include <string>

namespace graphtier::cli {

/// The directory of the running executable (/proc/self/exe, symbolic links resolved); empty when
/// it cannot be read.
std::filesystem::path executable_directory();

/// The interpreter of the environment this executable was installed into (pip install . puts it
/// in the environment's bin/, beside python3), else python3 on PATH.
std::string default_python();

}  // namespace graphtier::cli
