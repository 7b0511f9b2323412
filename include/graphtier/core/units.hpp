// Parsing of human-written counts, byte sizes and budgets ("10M", "4GiB", "15%").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace graphtier {

/// "1500", "10K", "10M", "2G", "1T" (powers of 1000), also "1e6". Throws InvalidArgument.
int64_t parse_count(std::string_view text);

/// "4096", "512K"/"512KiB" (1024), "4M"/"4MiB", "2G"/"2GiB", "1T"/"1TiB", "1GB" (10^9). Throws InvalidArgument.
int64_t parse_bytes(std::string_view text);

/// "15,10,5" or "-1,-1" into integers; throws InvalidArgument naming `what` on an empty list, an
/// empty item or a non-integer.
std::vector<int64_t> parse_int_list(const std::string& text, const char* what);

/// "1%,5%,12.5%" (the '%' optional) into fractions in (0, 1]; throws InvalidArgument naming
/// `what` otherwise.
std::vector<double> parse_percent_list(const std::string& text, const char* what);

/// A memory budget: bytes, or a percentage of a total ("25%").
class Budget {
 public:
  Budget() = default;
  static Budget parse(std::string_view text);
  static Budget bytes(int64_t n);
  static Budget percent(double p);

  /// The budget in bytes against a table of `total_bytes` (never more than the table).
  int64_t resolve(int64_t total_bytes) const;
  std::string to_string() const;

 private:
  bool is_percent_ = false;
  double value_ = 0;
};

}  // namespace graphtier
