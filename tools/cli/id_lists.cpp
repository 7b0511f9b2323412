#include "id_lists.hpp"

#include <algorithm>
#include <charconv>

#include "graphtier/core/error.hpp"

namespace graphtier::cli {

std::vector<int64_t> parse_id_list(const std::string& text, const char* option) {
  std::vector<int64_t> values;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    int64_t v = 0;
    const char* first = text.data() + begin;
    const char* last = text.data() + end;
    const auto [ptr, ec] = std::from_chars(first, last, v);
    GRAPHTIER_EXPECTS(end > begin && ec == std::errc() && ptr == last, InvalidArgument, option, ": '",
                      std::string(first, last), "' is not an integer (expected a comma-separated list like 15,10,5)");
    values.push_back(v);
    begin = end + 1;
  }
  return values;
}

}  // namespace graphtier::cli
