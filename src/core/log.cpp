#include "graphtier/core/log.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace graphtier {
namespace {

LogLevel level_from_env() {
  const char* env = std::getenv("GRAPHTIER_LOG_LEVEL");
  if (env == nullptr) return LogLevel::kInfo;
  if (std::strcmp(env, "debug") == 0) return LogLevel::kDebug;
  if (std::strcmp(env, "warn") == 0) return LogLevel::kWarn;
  if (std::strcmp(env, "error") == 0) return LogLevel::kError;
  if (std::strcmp(env, "quiet") == 0) return LogLevel::kQuiet;
  return LogLevel::kInfo;
}

std::atomic<int>& level_storage() {
  static std::atomic<int> level{static_cast<int>(level_from_env())};
  return level;
}

std::mutex& stderr_mutex() {
  static std::mutex m;
  return m;
}

std::string format_scaled(double value, double base, const char* const* prefixes, int count) {
  int i = 0;
  while (std::fabs(value) >= base && i + 1 < count) {
    value /= base;
    ++i;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, i == 0 ? "%.0f %s" : "%.2f %s", value, prefixes[i]);
  return buf;
}

}  // namespace

void set_log_level(LogLevel level) { level_storage().store(static_cast<int>(level)); }
LogLevel log_level() { return static_cast<LogLevel>(level_storage().load(std::memory_order_relaxed)); }

void log_message(LogLevel level, const std::string& message) {
  if (log_level() > level) return;
  static const char* const kNames[] = {"debug", "info", "warning", "error"};
  std::lock_guard lock(stderr_mutex());
  std::cerr << "graphtier: " << kNames[static_cast<int>(level)] << ": " << message << '\n';
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string format_count(double value) {
  static const char* const kPrefixes[] = {"", "K", "M", "G", "T", "P"};
  return format_scaled(value, 1000.0, kPrefixes, 6);
}

std::string format_bytes(double bytes) {
  static const char* const kPrefixes[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  return format_scaled(bytes, 1024.0, kPrefixes, 6);
}

Progress::Progress(std::string label, int64_t total, std::string unit)
    : label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      start_(std::chrono::steady_clock::now()),
      tty_(isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() {
  if (!finished_ && tty_ && log_level() <= LogLevel::kInfo && last_print_ns_.load() != 0) {
    std::lock_guard lock(stderr_mutex());
    std::cerr << '\n';
  }
}

double Progress::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::add(int64_t n) {
  done_.fetch_add(n, std::memory_order_relaxed);
  if (log_level() > LogLevel::kInfo) return;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - start_).count();
  const int64_t interval = tty_ ? 100'000'000 : 5'000'000'000;
  int64_t last = last_print_ns_.load(std::memory_order_relaxed);
  if (now - last < interval) return;
  if (!last_print_ns_.compare_exchange_strong(last, now)) return;  // another thread prints
  print(false);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (log_level() > LogLevel::kInfo) return;
  print(true);
}

void Progress::print(bool final_line) {
  const double seconds = elapsed_seconds();
  const int64_t done = done_.load(std::memory_order_relaxed);
  const double rate = seconds > 0 ? done / seconds : 0.0;
  char buf[256];
  if (final_line) {
    std::snprintf(buf, sizeof buf, "%s: %s%s in %.1f s (%s%s/s)", label_.c_str(), format_count(done).c_str(),
                  unit_.c_str(), seconds, format_count(rate).c_str(), unit_.c_str());
  } else if (total_ > 0) {
    const double eta = rate > 0 ? (total_ - done) / rate : 0.0;
    std::snprintf(buf, sizeof buf, "%s: %5.1f%% %s/%s%s, %s%s/s, ETA %.0f s", label_.c_str(),
                  100.0 * done / total_, format_count(done).c_str(), format_count(total_).c_str(), unit_.c_str(),
                  format_count(rate).c_str(), unit_.c_str(), eta);
  } else {
    std::snprintf(buf, sizeof buf, "%s: %s%s, %s%s/s", label_.c_str(), format_count(done).c_str(), unit_.c_str(),
                  format_count(rate).c_str(), unit_.c_str());
  }
  std::lock_guard lock(stderr_mutex());
  if (tty_) {
    std::cerr << "\r\033[K" << buf << (final_line ? "\n" : "") << std::flush;
  } else {
    std::cerr << buf << '\n';
  }
}

}  // namespace graphtier
