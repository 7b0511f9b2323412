#include "graphtier/core/units.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "graphtier/core/error.hpp"

namespace graphtier {
namespace {

/// Splits "12.5GiB" into 12.5 and "GiB"; throws unless the number part is a plain number.
std::pair<double, std::string> split_number(std::string_view text, const char* what) {
  std::string s(text);
  char* end = nullptr;
  const double value = std::strtod(s.c_str(), &end);
  GRAPHTIER_EXPECTS(end != s.c_str() && std::isfinite(value) && value >= 0, InvalidArgument, "invalid ", what, " '",
                    text, "'");
  std::string suffix(end);
  suffix.erase(std::remove_if(suffix.begin(), suffix.end(), [](unsigned char c) { return std::isspace(c); }),
               suffix.end());
  return {value, suffix};
}

int64_t checked_round(double value, std::string_view text, const char* what) {
  GRAPHTIER_EXPECTS(value < 9.2e18, InvalidArgument, what, " '", text, "' is too large");
  return static_cast<int64_t>(std::llround(value));
}

/// Calls item(first, last) for each comma-separated item of `text`.
template <typename Item>
void for_each_item(const std::string& text, Item&& item) {
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    item(text.data() + begin, text.data() + end);
    begin = end + 1;
  }
}

}  // namespace

int64_t parse_count(std::string_view text) {
  auto [value, suffix] = split_number(text, "count");
  double scale = 1;
  if (suffix == "K" || suffix == "k") scale = 1e3;
  else if (suffix == "M") scale = 1e6;
  else if (suffix == "G" || suffix == "B") scale = 1e9;
  else if (suffix == "T") scale = 1e12;
  else GRAPHTIER_EXPECTS(suffix.empty(), InvalidArgument, "invalid count '", text, "' (use e.g. 1500, 10K, 10M, 2G)");
  return checked_round(value * scale, text, "count");
}

int64_t parse_bytes(std::string_view text) {
  auto [value, suffix] = split_number(text, "byte size");
  std::string unit = suffix;
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K" || unit == "KIB") scale = 1024.0;
  else if (unit == "M" || unit == "MIB") scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GIB") scale = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TIB") scale = 1024.0 * 1024 * 1024 * 1024;
  else if (unit == "KB") scale = 1e3;
  else if (unit == "MB") scale = 1e6;
  else if (unit == "GB") scale = 1e9;
  else if (unit == "TB") scale = 1e12;
  else throw InvalidArgument(detail::concat("invalid byte size '", text, "' (use e.g. 4096, 512K, 4MiB, 2GiB, 1GB)"));
  return checked_round(value * scale, text, "byte size");
}

Budget Budget::parse(std::string_view text) {
  if (!text.empty() && text.back() == '%') {
    auto [value, suffix] = split_number(text.substr(0, text.size() - 1), "percentage");
    GRAPHTIER_EXPECTS(suffix.empty(), InvalidArgument, "invalid percentage '", text, "'");
    return percent(value);
  }
  return bytes(parse_bytes(text));
}

Budget Budget::bytes(int64_t n) {
  GRAPHTIER_EXPECTS(n >= 0, InvalidArgument, "a budget cannot be negative (", n, " bytes)");
  Budget b;
  b.value_ = static_cast<double>(n);
  return b;
}

Budget Budget::percent(double p) {
  GRAPHTIER_EXPECTS(p >= 0 && p <= 100, InvalidArgument, "a percentage budget must lie in [0, 100], got ", p, "%");
  Budget b;
  b.is_percent_ = true;
  b.value_ = p;
  return b;
}

int64_t Budget::resolve(int64_t total_bytes) const {
  const double bytes = is_percent_ ? std::floor(total_bytes * value_ / 100.0) : value_;
  return std::min<int64_t>(static_cast<int64_t>(bytes), total_bytes);
}

std::string Budget::to_string() const {
  if (is_percent_) return detail::concat(value_, "%");
  return detail::concat(static_cast<int64_t>(value_), " B");
}

std::vector<int64_t> parse_int_list(const std::string& text, const char* what) {
  std::vector<int64_t> values;
  for_each_item(text, [&](const char* first, const char* last) {
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(first, last, v);
    GRAPHTIER_EXPECTS(last > first && ec == std::errc() && ptr == last, InvalidArgument, what, ": '",
                      std::string(first, last), "' is not an integer (expected a comma-separated list like 15,10,5)");
    values.push_back(v);
  });
  return values;
}

std::vector<double> parse_percent_list(const std::string& text, const char* what) {
  std::vector<double> values;
  for_each_item(text, [&](const char* first, const char* last) {
    if (last > first && last[-1] == '%') --last;
    double v = 0;
    const auto [ptr, ec] = std::from_chars(first, last, v);
    GRAPHTIER_EXPECTS(last > first && ec == std::errc() && ptr == last && v > 0 && v <= 100, InvalidArgument, what,
                      ": '", std::string(first, last), "' is not a percentage in (0, 100] (expected a list like 1%,10%)");
    values.push_back(v / 100);
  });
  return values;
}

}  // namespace graphtier
