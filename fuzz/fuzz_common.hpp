// What every fuzz target shares: the contract check, a per-process scratch directory for readers
// that take paths, and the multi-file input of the directory-layout targets (fuzz/README.md).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"

namespace graphtier::fuzz {

/// Fails the run: libFuzzer saves the input that got here as a crash.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz contract broken: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline void require(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

/// Runs `body` under the readers' contract (docs/architecture.md, Errors): it returns a valid
/// result, which `body` checks itself, or throws one of graphtier's typed errors. Any other
/// exception (std::bad_alloc, a library's own exception, std::length_error...) fails the run;
/// crashes, hangs and huge allocations are caught by libFuzzer and the sanitizers.
template <typename Body>
void check_contract(Body&& body) {
  try {
    body();
  } catch (const FormatError&) {
  } catch (const InvalidArgument&) {
  } catch (const OutOfRange&) {
  } catch (const IoError&) {
  } catch (const Unsupported&) {
  } catch (const std::exception& e) {
    fail(std::string("undocumented exception: ") + e.what());
  } catch (...) {
    fail("undocumented exception of unknown type");
  }
}

/// A directory of this process's own, created once: $GRAPHTIER_FUZZ_SCRATCH if set, else
/// /dev/shm (memory, no disk wear) or the working directory, plus the pid. Removed at exit; a
/// crash leaves it, holding only the last input's files.
inline const std::string& scratch_dir() {
  // Never destroyed: the exit handler that removes the directory runs after static destructors.
  static const std::string* const dir = [] {
    std::string base;
    if (const char* env = std::getenv("GRAPHTIER_FUZZ_SCRATCH"); env != nullptr && *env != '\0') {
      base = env;
    } else {
      std::error_code ec;
      base = std::filesystem::is_directory("/dev/shm", ec) ? "/dev/shm" : ".";
    }
    auto* d = new std::string(base + "/graphtier-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(*d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return d;
  }();
  return *dir;
}

inline void write_file(const std::string& path, std::string_view bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) fail("cannot write scratch file " + path);
}

/// Quiet readers: progress lines and warnings would flood the fuzzer's output.
inline void quiet() { set_log_level(LogLevel::kError); }

/// The files of a directory-layout input: records "%%%% <relative path>\n<bytes>", each record
/// ending where the next "\n%%%% " starts (the last at the end of the input). Text before the
/// first record is ignored.
inline std::vector<std::pair<std::string, std::string_view>> split_files(std::string_view input) {
  static constexpr std::string_view kMark = "%%%% ";
  std::vector<std::pair<std::string, std::string_view>> files;
  std::size_t at = 0;
  if (input.substr(0, kMark.size()) != kMark) {
    at = input.find(std::string("\n").append(kMark));
    if (at == std::string_view::npos) return files;
    ++at;
  }
  while (at < input.size()) {
    const std::size_t name_begin = at + kMark.size();
    const std::size_t name_end = input.find('\n', name_begin);
    if (name_end == std::string_view::npos) break;
    const std::size_t body_begin = name_end + 1;
    std::size_t next = input.find(std::string("\n").append(kMark), body_begin);
    const std::size_t body_end = next == std::string_view::npos ? input.size() : next;
    files.emplace_back(std::string(input.substr(name_begin, name_end - name_begin)),
                       input.substr(body_begin, body_end - body_begin));
    if (next == std::string_view::npos) break;
    at = next + 1;
  }
  return files;
}

/// Writes the records of `input` whose names are in `allowed` under `root` (emptied first); a
/// name outside the layout is ignored, so mutated names never reach outside the scratch dir.
inline void write_layout(const std::string& root, std::string_view input, const std::vector<std::string>& allowed) {
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  std::filesystem::create_directories(root);
  for (const auto& [name, body] : split_files(input)) {
    for (const auto& a : allowed) {
      if (name == a) {
        write_file(root + "/" + name, body);
        break;
      }
    }
  }
}

}  // namespace graphtier::fuzz
