// The `graphtier` subcommands: one file per subcommand, each registering itself on the app.
#pragma once

#include <CLI/CLI.hpp>
#include <stdexcept>
#include <string>
#include <utility>

#include "graphtier/core/dtype.hpp"
#include "graphtier/core/units.hpp"

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

/// A validator that runs `parse` on the text as given, so that CLI11 reports its refusal prefixed
/// with the option's name ("--nodes: invalid count 'x' (use e.g. ...)"); the option's callback
/// parses the same text again.
template <typename Parse>
CLI::Validator parsed_by(Parse parse, std::string name) {
  return CLI::Validator(
      [parse](const std::string& text) {
        try {
          (void)parse(text);
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      },
      std::move(name));
}

/// Counts ("10M"), budgets ("4GiB", "25%") and dtype names, checked as their options are read.
inline const CLI::Validator kCount = parsed_by([](const std::string& t) { return parse_count(t); }, "COUNT");
inline const CLI::Validator kBudget = parsed_by([](const std::string& t) { return Budget::parse(t); }, "BUDGET");
inline const CLI::Validator kDType = parsed_by([](const std::string& t) { return parse_dtype(t); }, "DTYPE");

void register_convert(CLI::App& app, const GlobalOptions& global);
void register_generate(CLI::App& app, const GlobalOptions& global);
void register_prepare(CLI::App& app, const GlobalOptions& global);
void register_partition(CLI::App& app, const GlobalOptions& global);
void register_split_links(CLI::App& app, const GlobalOptions& global);
void register_info(CLI::App& app, const GlobalOptions& global);
void register_verify(CLI::App& app, const GlobalOptions& global);
void register_sample(CLI::App& app, const GlobalOptions& global);
void register_bench(CLI::App& app, const GlobalOptions& global);
void register_train(CLI::App& app, const GlobalOptions& global);

}  // namespace graphtier::cli
