// The edge times of an edge list with a time column (EdgeListInput::edge_time): each line's third
// field, placed where write_csc puts the line's edge.
#include <algorithm>
#include <charconv>
#include <tuple>
#include <vector>

#include "convert_nodes.hpp"
#include "text_lines.hpp"
#include "graphtier/core/error.hpp"

namespace graphtier::graph::detail {
namespace {

struct TimedEdge {
  int64_t dst;
  int64_t src;
  int64_t time;
};

/// The next field of [*p, end): blanks and one comma separate fields.
std::string_view next_field(const char*& p, const char* end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == ',')) ++p;
  const char* first = p;
  while (p < end && *p != ' ' && *p != '\t' && *p != '\r' && *p != ',') ++p;
  return {first, static_cast<std::size_t>(p - first)};
}

bool parse_int(std::string_view field, int64_t& out) {
  const auto [next, ec] = std::from_chars(field.data(), field.data() + field.size(), out);
  return ec == std::errc() && next == field.data() + field.size() && !field.empty();
}

}  // namespace

std::vector<int64_t> read_edge_list_times(const ByteSource& source, bool symmetrize, bool keep_self_loops,
                                          ThreadPool& pool) {
  std::vector<TimedEdge> edges;
  parse_lines<std::vector<TimedEdge>>(
      source, pool, nullptr,
      [&](std::string_view text, std::vector<TimedEdge>& out) {
        return for_each_line(text, [&](const char* line, const char* eol) -> std::optional<std::string> {
          const char* p = line;
          while (p < eol && (*p == ' ' || *p == '\t')) ++p;
          if (p == eol || *p == '#' || *p == '%' || *p == '\r') return std::nullopt;
          int64_t src = 0, dst = 0, time = 0;
          const std::string_view s = next_field(p, eol), d = next_field(p, eol), t = next_field(p, eol);
          if (!parse_int(s, src) || !parse_int(d, dst)) return std::string("expected `src dst time`");
          if (t.empty()) return std::string("no time column (expected `src dst time`)");
          if (!parse_int(t, time)) {
            return "the time '" + ::graphtier::detail::printable(t.substr(0, 40)) + "' is not an integer";
          }
          if (src == dst && !keep_self_loops) return std::nullopt;
          out.push_back({dst, src, time});
          if (symmetrize && src != dst) out.push_back({src, dst, time});
          return std::nullopt;
        });
      },
      [&](std::vector<std::vector<TimedEdge>>& parts, const TextBlock&) {
        for (const auto& part : parts) edges.insert(edges.end(), part.begin(), part.end());
      });
  // The CSC's order: by column, then source; a repeated edge is one entry, at its earliest time.
  std::sort(edges.begin(), edges.end(), [](const TimedEdge& a, const TimedEdge& b) {
    return std::tie(a.dst, a.src, a.time) < std::tie(b.dst, b.src, b.time);
  });
  std::vector<int64_t> times;
  times.reserve(edges.size());
  for (std::size_t i = 0; i < edges.size(); ++i) {
    if (i > 0 && edges[i].dst == edges[i - 1].dst && edges[i].src == edges[i - 1].src) continue;
    times.push_back(edges[i].time);
  }
  return times;
}

}  // namespace graphtier::graph::detail
