#include "id_lists.hpp"

#include <algorithm>
#include <charconv>

#include "graphtier/core/error.hpp"

namespace graphtier::cli {

namespace {

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

std::vector<int64_t> parse_id_list(const std::string& text, const char* option) {
  std::vector<int64_t> values;
  for_each_item(text, [&](const char* first, const char* last) {
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(first, last, v);
    GRAPHTIER_EXPECTS(last > first && ec == std::errc() && ptr == last, InvalidArgument, option, ": '",
                      std::string(first, last), "' is not an integer (expected a comma-separated list like 15,10,5)");
    values.push_back(v);
  });
  return values;
}

std::vector<double> parse_percent_list(const std::string& text, const char* option) {
  std::vector<double> values;
  for_each_item(text, [&](const char* first, const char* last) {
    if (last > first && last[-1] == '%') --last;
    double v = 0;
    const auto [ptr, ec] = std::from_chars(first, last, v);
    GRAPHTIER_EXPECTS(last > first && ec == std::errc() && ptr == last && v > 0 && v <= 100, InvalidArgument, option,
                      ": '", std::string(first, last), "' is not a percentage in (0, 100] (expected a list like 1%,10%)");
    values.push_back(v / 100);
  });
  return values;
}

}  // namespace graphtier::cli
