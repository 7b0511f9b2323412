// Labels and split id lists of converted datasets, from .npy arrays or one-value-per-line text.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "convert_nodes.hpp"
#include "text_lines.hpp"
#include "graphtier/core/error.hpp"

namespace graphtier::graph::detail {

using ::graphtier::detail::concat;

namespace {

constexpr int64_t kLabelBlock = int64_t{1} << 16;

/// -1 for NaN or -1; the label for an integral value in [0, 2^31); nullopt otherwise.
std::optional<int32_t> to_label(double value) {
  if (std::isnan(value) || value == -1.0) return -1;
  if (value < 0 || value > std::numeric_limits<int32_t>::max() || value != std::floor(value)) return std::nullopt;
  return static_cast<int32_t>(value);
}

std::string describe(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

/// for_each_line with each line trimmed of blanks (and '\r') and each problem followed by the
/// quoted line: calls fn(trimmed_line) -> problem or nothing.
template <typename Fn>
std::optional<ParseError> for_each_trimmed_line(std::string_view text, const Fn& fn) {
  return for_each_line(text, [&](const char* line, const char* eol) -> std::optional<std::string> {
    const char* last = eol;
    while (last > line && (last[-1] == '\r' || last[-1] == ' ' || last[-1] == '\t')) --last;
    const char* first = line;
    while (first < last && (*first == ' ' || *first == '\t')) ++first;
    if (auto problem = fn(std::string_view(first, static_cast<std::size_t>(last - first)))) {
      return *problem + " in " + quote_line(text, static_cast<std::size_t>(line - text.data()));
    }
    return std::nullopt;
  });
}

}  // namespace

std::vector<int32_t> read_labels_npy(const NpyArray& array, int64_t num_nodes) {
  const bool column = array.ndim() == 2 && array.dim(1) == 1;
  if (array.ndim() != 1 && !column) {
    throw FormatError(array.name(), concat("labels have shape ", array.header().shape_string(),
                                           ", expected [num_nodes] or [num_nodes, 1] (multi-task labels are not supported)"));
  }
  if (array.dim(0) < num_nodes) {
    throw FormatError(array.name(), concat("has ", array.dim(0), " labels, expected ", num_nodes, " (one per node)"));
  }
  std::vector<int32_t> labels(static_cast<std::size_t>(num_nodes));
  std::vector<double> values(static_cast<std::size_t>(std::min(kLabelBlock, std::max<int64_t>(num_nodes, 1))));
  NpyReader reader = array.reader(0);
  for (int64_t begin = 0; begin < num_nodes; begin += kLabelBlock) {
    const int64_t n = std::min(kLabelBlock, num_nodes - begin);
    reader.read(values.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const auto label = to_label(values[i]);
      if (!label) {
        throw FormatError(array.name(), concat("label of node ", begin + i, " is ", describe(values[i]),
                                               "; expected an integer class >= 0, or -1 / NaN for unlabeled"));
      }
      labels[static_cast<std::size_t>(begin + i)] = *label;
    }
  }
  return labels;
}

std::vector<int32_t> read_labels_csv(const ByteSource& source, int64_t num_nodes, ThreadPool& pool) {
  std::vector<int32_t> labels;
  labels.reserve(static_cast<std::size_t>(num_nodes));
  parse_lines<std::vector<int32_t>>(
      source, pool, nullptr,
      [](std::string_view text, std::vector<int32_t>& out) {
        return for_each_trimmed_line(text, [&](std::string_view field) -> std::optional<std::string> {
          // An empty line is a missing value, as a NaN that pandas wrote.
          double value = std::numeric_limits<double>::quiet_NaN();
          if (!field.empty()) {
            if (field.find(',') != std::string_view::npos) {
              return std::string("expected one label per line (multi-task labels are not supported)");
            }
            const char* start = field.data() + (field[0] == '+' ? 1 : 0);
            const auto [next, ec] = std::from_chars(start, field.data() + field.size(), value);
            if (ec != std::errc() || next != field.data() + field.size()) return std::string("not a number");
          }
          const auto label = to_label(value);
          if (!label) return concat("label ", describe(value), " is not an integer class >= 0 (or -1 / NaN)");
          out.push_back(*label);
          return std::nullopt;
        });
      },
      [&](std::vector<std::vector<int32_t>>& parts, const TextBlock&) {
        for (const auto& part : parts) {
          if (static_cast<int64_t>(labels.size() + part.size()) > num_nodes) {
            throw FormatError(source.name(), concat("has more than ", num_nodes, " labels (one per node expected)"));
          }
          labels.insert(labels.end(), part.begin(), part.end());
        }
      });
  if (static_cast<int64_t>(labels.size()) != num_nodes) {
    throw FormatError(source.name(), concat("has ", labels.size(), " labels, expected ", num_nodes, " (one per node)"));
  }
  return labels;
}

std::vector<int64_t> read_split_npy(const NpyArray& array, int64_t num_nodes) {
  const bool column = array.ndim() == 2 && array.dim(1) == 1;
  if (array.ndim() != 1 && !column) {
    throw FormatError(array.name(), concat("split has shape ", array.header().shape_string(),
                                           ", expected a list of node ids [K] or a bool mask [num_nodes]"));
  }
  const int64_t n = array.dim(0);
  std::vector<int64_t> ids;
  NpyReader reader = array.reader(0);
  if (array.header().type == NpyType::kBool) {
    if (n != num_nodes) {
      throw FormatError(array.name(), concat("bool mask has ", n, " entries, expected one per node (", num_nodes, ")"));
    }
    std::vector<uint8_t> mask(static_cast<std::size_t>(std::min(kLabelBlock, std::max<int64_t>(n, 1))));
    for (int64_t begin = 0; begin < n; begin += kLabelBlock) {
      const int64_t count = std::min(kLabelBlock, n - begin);
      reader.read(mask.data(), count);
      for (int64_t i = 0; i < count; ++i) {
        if (mask[i] != 0) ids.push_back(begin + i);
      }
    }
    return ids;
  }
  ids.resize(static_cast<std::size_t>(n));
  reader.read(ids.data(), n);
  return ids;
}

std::vector<int64_t> read_split_csv(const ByteSource& source, ThreadPool& pool) {
  std::vector<int64_t> ids;
  parse_lines<std::vector<int64_t>>(
      source, pool, nullptr,
      [](std::string_view text, std::vector<int64_t>& out) {
        return for_each_trimmed_line(text, [&](std::string_view field) -> std::optional<std::string> {
          if (field.empty()) return std::nullopt;
          int64_t id = 0;
          const auto [next, ec] = std::from_chars(field.data(), field.data() + field.size(), id);
          if (ec != std::errc() || next != field.data() + field.size() || id < 0) {
            return std::string("expected one non-negative integer node id per line");
          }
          out.push_back(id);
          return std::nullopt;
        });
      },
      [&](std::vector<std::vector<int64_t>>& parts, const TextBlock&) {
        for (const auto& part : parts) ids.insert(ids.end(), part.begin(), part.end());
      });
  return ids;
}

std::vector<int64_t> read_times_csv(const ByteSource& source, ThreadPool& pool) {
  std::vector<int64_t> times;
  parse_lines<std::vector<int64_t>>(
      source, pool, nullptr,
      [](std::string_view text, std::vector<int64_t>& out) {
        return for_each_trimmed_line(text, [&](std::string_view field) -> std::optional<std::string> {
          if (field.empty()) return std::nullopt;
          int64_t time = 0;
          const auto [next, ec] = std::from_chars(field.data(), field.data() + field.size(), time);
          if (ec != std::errc() || next != field.data() + field.size()) {
            return std::string("expected one integer timestamp per line, got '") +
                   ::graphtier::detail::printable(field.substr(0, 40)) + "'";
          }
          out.push_back(time);
          return std::nullopt;
        });
      },
      [&](std::vector<std::vector<int64_t>>& parts, const TextBlock&) {
        for (const auto& part : parts) times.insert(times.end(), part.begin(), part.end());
      });
  return times;
}

void check_split(std::span<const int64_t> ids, int64_t num_nodes, const std::string& name) {
  std::vector<bool> seen(static_cast<std::size_t>(num_nodes), false);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const int64_t v = ids[i];
    if (v < 0 || v >= num_nodes) {
      throw FormatError(name, concat("node id ", v, " at position ", i, " is out of range [0, ", num_nodes, ")"));
    }
    if (seen[static_cast<std::size_t>(v)]) {
      throw FormatError(name, concat("node id ", v, " appears twice (again at position ", i, ")"));
    }
    seen[static_cast<std::size_t>(v)] = true;
  }
}

}  // namespace graphtier::graph::detail
