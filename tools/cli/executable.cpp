#include "executable.hpp"

#include <unistd.h>

#include <system_error>

namespace graphtier::cli {

namespace fs = std::filesystem;

fs::path executable_directory() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

std::string default_python() {
  if (const fs::path bin = executable_directory(); !bin.empty()) {
    const fs::path python = bin / "python3";
    if (::access(python.c_str(), X_OK) == 0) return python.string();
  }
  return "python3";
}

}  // namespace graphtier::cli
