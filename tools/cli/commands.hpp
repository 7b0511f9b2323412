// The `graphtier` subcommands: one file per subcommand, each registering itself on the app.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace graphtier::cli {

/// Options shared by every subcommand.
struct GlobalOptions {
  bool json = false;   // machine-readable output on stdout
  bool quiet = false;  // no progress display
  int threads = 0;     // 0: all cores
};

/// Refuses a negative number as given, before CLI11 converts it: "-1" for an unsigned option
/// (a seed) would otherwise wrap to 2^64 - 1 without a word.
inline const CLI::Validator kNonNegative(
    [](const std::string& text) {
      double value = 0;
      if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
      return value >= 0 ? std::string() : "must not be negative, got " + text;
    },
    "NONNEGATIVE");

/// Refuses zero and negative numbers, in one short line (CLI::PositiveNumber prints its range).
inline const CLI::Validator kPositive(
    [](const std::string& text) {
      double value = 0;
      if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
      return value > 0 ? std::string() : "must be positive, got " + text;
    },
    "POSITIVE");

void register_convert(CLI::App& app, const GlobalOptions& global);
void register_generate(CLI::App& app, const GlobalOptions& global);
void register_prepare(CLI::App& app, const GlobalOptions& global);
void register_info(CLI::App& app, const GlobalOptions& global);
void register_verify(CLI::App& app, const GlobalOptions& global);
void register_sample(CLI::App& app, const GlobalOptions& global);
void register_bench(CLI::App& app, const GlobalOptions& global);
void register_train(CLI::App& app, const GlobalOptions& global);

}  // namespace graphtier::cli
