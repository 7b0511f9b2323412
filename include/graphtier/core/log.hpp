// Logging to stderr and a progress display for long jobs.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "graphtier/core/error.hpp"

namespace graphtier {

enum class LogLevel : int { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kQuiet = 4 };

/// Messages below this level are dropped. Initialised from GRAPHTIER_LOG_LEVEL (debug, info, warn,
/// error, quiet); the CLI's --quiet sets kWarn.
void set_log_level(LogLevel level);
LogLevel log_level();

void log_message(LogLevel level, const std::string& message);

template <typename... Args>
void log_info(Args&&... args) {
  if (log_level() <= LogLevel::kInfo) log_message(LogLevel::kInfo, detail::concat(std::forward<Args>(args)...));
}
template <typename... Args>
void log_warn(Args&&... args) {
  if (log_level() <= LogLevel::kWarn) log_message(LogLevel::kWarn, detail::concat(std::forward<Args>(args)...));
}

/// Progress of a long job on stderr: done/total, rate and ETA. On a terminal the line is redrawn
/// at most 10 times a second; otherwise one line is printed every few seconds. add() is
/// thread-safe and cheap (an atomic add and a clock read at most every few thousand calls are
/// avoided by the caller adding in chunks). Silent when the log level is above kInfo.
class Progress {
 public:
  Progress(std::string label, int64_t total, std::string unit);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void add(int64_t n);
  /// Prints the final line with the elapsed time and mean rate.
  void finish();
  double elapsed_seconds() const;

 private:
  void print(bool final_line);

  std::string label_;
  int64_t total_;
  std::string unit_;
  std::atomic<int64_t> done_{0};
  std::chrono::steady_clock::time_point start_;
  std::atomic<int64_t> last_print_ns_{0};
  std::mutex print_mutex_;
  bool tty_;
  bool finished_ = false;
};

/// Wall-clock seconds since `start` (steady clock): the stage timings of every report.
double seconds_since(std::chrono::steady_clock::time_point start);

/// "1.23 G", "456 M", ... for rates and counts; bytes use binary prefixes via format_bytes.
std::string format_count(double value);
std::string format_bytes(double bytes);

}  // namespace graphtier
