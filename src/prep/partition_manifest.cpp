// partition.json written and read back (docs/format.md, "Partition directory").
#include "partition_manifest.hpp"

#include <cstdio>
#include <filesystem>
#include <iterator>
#include <nlohmann/json.hpp>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"

namespace graphtier::prep::impl {
namespace {

using Json = nlohmann::ordered_json;

std::string field_text(const char* key) { return std::string("\"") + key + "\""; }

const Json& field(const Json& j, const char* key, const std::string& path) {
  if (!j.is_object() || !j.contains(key)) throw FormatError(path, "missing field " + field_text(key));
  return j.at(key);
}

int64_t integer(const Json& j, const char* key, const std::string& path) {
  const Json& v = field(j, key, path);
  if (!v.is_number_integer()) throw FormatError(path, field_text(key) + " must be an integer");
  return v.get<int64_t>();
}

std::string string_field(const Json& j, const char* key, const std::string& path) {
  const Json& v = field(j, key, path);
  if (!v.is_string()) throw FormatError(path, field_text(key) + " must be a string");
  return v.get<std::string>();
}

std::vector<int64_t> integers(const Json& j, const char* key, const std::string& path) {
  const Json& v = field(j, key, path);
  if (!v.is_array()) throw FormatError(path, field_text(key) + " must be an array of integers");
  std::vector<int64_t> out;
  for (const Json& x : v) {
    if (!x.is_number_integer()) throw FormatError(path, field_text(key) + " must be an array of integers");
    out.push_back(x.get<int64_t>());
  }
  return out;
}

void expect(bool cond, const std::string& path, const std::string& problem) {
  if (!cond) throw FormatError(path, problem);
}

/// b_0 = 0, b_n = N, non-decreasing.
void check_bounds(const std::vector<int64_t>& b, size_t size, int64_t n, const char* key, const std::string& path) {
  expect(b.size() == size, path, detail::concat(field_text(key), " has ", b.size(), " entries, expected ", size));
  expect(b.front() == 0 && b.back() == n, path,
         detail::concat(field_text(key), " must start at 0 and end at num_nodes ", n, ", got ", b.front(), " .. ",
                        b.back()));
  for (size_t i = 1; i < b.size(); ++i) {
    expect(b[i - 1] <= b[i], path,
           detail::concat(field_text(key), " must be non-decreasing: entry ", i, " (", b[i], ") is below entry ", i - 1,
                          " (", b[i - 1], ")"));
  }
}

Json local_ranges_json(const PartitionLayout& l, int64_t row) {
  Json ranges = Json::array();
  for (const auto& [lo, hi] : l.local_ranges(row)) ranges.push_back(Json::array({lo, hi}));
  return ranges;
}

/// type_feature_bounds: T >= 1 lists of R + 1 non-decreasing ids, each starting where the one
/// before ends (type t's range [o_t, o_{t+1})), the first at 0, the last ending at N.
std::vector<std::vector<int64_t>> type_bounds(const Json& j, size_t size, int64_t n, const std::string& path) {
  const char* key = "type_feature_bounds";
  const Json& v = field(j, key, path);
  expect(v.is_array() && !v.empty(), path, field_text(key) + " must be a non-empty array of arrays of integers");
  std::vector<std::vector<int64_t>> out;
  int64_t start = 0;
  for (size_t t = 0; t < v.size(); ++t) {
    const std::string name = detail::concat(field_text(key), "[", t, "]");
    expect(v[t].is_array() && v[t].size() == size, path, detail::concat(name, " must hold ", size, " integers"));
    std::vector<int64_t> b;
    for (const Json& x : v[t]) {
      expect(x.is_number_integer(), path, name + " must hold integers");
      b.push_back(x.get<int64_t>());
    }
    expect(b.front() == start, path, detail::concat(name, " must start at ", start, " (where the type before ends), got ",
                                                    b.front()));
    for (size_t i = 1; i < b.size(); ++i) {
      expect(b[i - 1] <= b[i] && b[i] <= n, path, detail::concat(name, " must be non-decreasing and at most num_nodes ",
                                                                 n, ": entry ", i, " is ", b[i]));
    }
    start = b.back();
    out.push_back(std::move(b));
  }
  expect(start == n, path, detail::concat(field_text(key), " must end at num_nodes ", n, ", got ", start));
  return out;
}

}  // namespace

std::string rank_dir_name(int64_t rank) {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%04lld", static_cast<long long>(rank));
  return name;
}

std::string partition_json(const PartitionManifest& m) {
  const PartitionLayout& l = m.layout;
  Json j;
  j["format"] = kPartitionFormat;
  j["version"] = kPartitionVersion;
  j["ranks"] = l.ranks;
  j["replication"] = l.replication;
  j["process_rows"] = l.process_rows;
  j["graph"] = partition_graph_name(l.graph);
  j["balance"] = partition_balance_name(l.balance);
  j["num_nodes"] = l.num_nodes;
  j["num_edges"] = l.num_edges;
  j["hot_rows"] = l.hot_rows;
  // One of the two: a typed source's rows split per type, any other's by one id split.
  if (l.typed()) {
    j["type_feature_bounds"] = l.type_feature_bounds;
  } else {
    j["feature_bounds"] = l.feature_bounds;
  }
  j["topology_bounds"] = l.topology_bounds;
  j["edge_offsets"] = l.edge_offsets;
  Json ranges = Json::array();
  for (int64_t i = 0; i < l.process_rows; ++i) ranges.push_back(local_ranges_json(l, i));
  j["local_ranges"] = ranges;
  Json files = Json::object();
  for (const auto& [file, hash] : m.source.files) files[file] = hash;
  j["source"] = {{"name", m.source.name},
                 {"path", m.source.path},
                 {"manifest_xxh3", m.source.manifest_xxh3},
                 {"files", files}};
  j["rank_dirs"] = m.rank_dirs;
  if (m.rank) j["rank"] = *m.rank;
  // One key a line, each value compact: readable, and linear in the ranks (indented arrays would
  // spend a line on every bound and every rank directory).
  std::string text = "{\n";
  for (auto it = j.begin(); it != j.end(); ++it) {
    text += "  " + Json(it.key()).dump() + ": " + it.value().dump(-1, ' ', false, Json::error_handler_t::replace);
    text += std::next(it) == j.end() ? "\n" : ",\n";
  }
  return text + "}\n";
}

PartitionManifest parse_partition_json(const std::string& text, const std::string& path) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(path, std::string("not valid JSON: ") + e.what());
  }
  expect(j.is_object(), path, "must hold a JSON object");
  expect(string_field(j, "format", path) == kPartitionFormat, path,
         detail::concat("\"format\" must be \"", kPartitionFormat, "\""));
  const int64_t version = integer(j, "version", path);
  expect(version == kPartitionVersion, path,
         detail::concat("partition format version ", version, " is not supported (this build reads version ",
                        kPartitionVersion, ")"));
  PartitionManifest m;
  PartitionLayout& l = m.layout;
  l.ranks = integer(j, "ranks", path);
  l.replication = integer(j, "replication", path);
  l.process_rows = integer(j, "process_rows", path);
  expect(l.ranks >= 1 && l.replication >= 1 && l.process_rows >= 1, path,
         "\"ranks\", \"replication\" and \"process_rows\" must be >= 1");
  // Compared by division: hostile counts must not overflow the product.
  expect(l.ranks % l.replication == 0 && l.ranks / l.replication == l.process_rows, path,
         detail::concat("\"ranks\" (", l.ranks, ") must equal process_rows x replication (", l.process_rows, " x ",
                        l.replication, ")"));
  try {
    l.graph = parse_partition_graph(string_field(j, "graph", path));
    l.balance = parse_partition_balance(string_field(j, "balance", path));
    if (l.balance == PartitionBalance::kAuto) throw InvalidArgument("\"balance\": \"auto\" is an option, not a layout");
  } catch (const InvalidArgument& e) {
    throw FormatError(path, e.what());
  }
  l.num_nodes = integer(j, "num_nodes", path);
  l.num_edges = integer(j, "num_edges", path);
  expect(l.num_nodes >= l.process_rows && l.num_edges >= 0, path,
         detail::concat("\"num_nodes\" (", l.num_nodes, ") must be at least process_rows (", l.process_rows,
                        ") and \"num_edges\" non-negative"));
  l.hot_rows = integer(j, "hot_rows", path);
  expect(l.hot_rows >= 0 && l.hot_rows <= l.num_nodes, path,
         detail::concat("\"hot_rows\" (", l.hot_rows, ") must lie in [0, num_nodes]"));
  const auto R = static_cast<size_t>(l.process_rows);
  if (j.contains("type_feature_bounds")) {
    expect(!j.contains("feature_bounds"), path, "\"feature_bounds\" and \"type_feature_bounds\" exclude each other");
    expect(l.hot_rows == 0, path, "\"hot_rows\" must be 0 with \"type_feature_bounds\"");
    l.type_feature_bounds = type_bounds(j, R + 1, l.num_nodes, path);
  } else {
    l.feature_bounds = integers(j, "feature_bounds", path);
    check_bounds(l.feature_bounds, R + 1, l.num_nodes, "feature_bounds", path);
  }
  l.topology_bounds = integers(j, "topology_bounds", path);
  l.edge_offsets = integers(j, "edge_offsets", path);
  if (l.graph == PartitionGraph::kPartitioned) {
    check_bounds(l.topology_bounds, R + 1, l.num_nodes, "topology_bounds", path);
    expect(l.edge_offsets.size() == R, path,
           detail::concat("\"edge_offsets\" has ", l.edge_offsets.size(), " entries, expected ", R));
    expect(l.edge_offsets.front() == 0, path, "\"edge_offsets\" must start at 0");
    for (size_t i = 1; i < R; ++i) {
      expect(l.edge_offsets[i - 1] <= l.edge_offsets[i] && l.edge_offsets[i] <= l.num_edges, path,
             detail::concat("\"edge_offsets\" must be non-decreasing and at most num_edges: entry ", i, " is ",
                            l.edge_offsets[i]));
    }
  } else {
    check_bounds(l.topology_bounds, 2, l.num_nodes, "topology_bounds", path);
    expect(l.edge_offsets == std::vector<int64_t>{0}, path, "\"edge_offsets\" must be [0] with the graph replicated");
  }
  const Json& ranges = field(j, "local_ranges", path);
  expect(ranges.is_array() && ranges.size() == R, path,
         detail::concat("\"local_ranges\" must hold one entry per process row (", R, ")"));
  for (size_t i = 0; i < R; ++i) {
    const Json expected = local_ranges_json(l, static_cast<int64_t>(i));
    expect(ranges[i] == expected, path,
           detail::concat("\"local_ranges\"[", i, "] is ", ranges[i].dump(), ", but ",
                          l.typed() ? "type_feature_bounds give " : "feature_bounds and hot_rows give ",
                          expected.dump()));
  }
  const Json& source = field(j, "source", path);
  m.source.name = string_field(source, "name", path);
  m.source.path = string_field(source, "path", path);
  m.source.manifest_xxh3 = string_field(source, "manifest_xxh3", path);
  const Json& files = field(source, "files", path);
  expect(files.is_object(), path, "\"source\".\"files\" must be an object");
  for (const auto& [file, hash] : files.items()) {
    expect(hash.is_string(), path, "\"source\".\"files\" values must be strings");
    m.source.files[file] = hash.get<std::string>();
  }
  const Json& dirs = field(j, "rank_dirs", path);
  expect(dirs.is_array() && dirs.size() == static_cast<size_t>(l.ranks), path,
         detail::concat("\"rank_dirs\" must name one directory per rank (", l.ranks, ")"));
  for (size_t k = 0; k < dirs.size(); ++k) {
    expect(dirs[k].is_string() && dirs[k].get<std::string>() == rank_dir_name(static_cast<int64_t>(k)), path,
           detail::concat("\"rank_dirs\"[", k, "] must be \"", rank_dir_name(static_cast<int64_t>(k)), "\""));
    m.rank_dirs.push_back(dirs[k].get<std::string>());
  }
  if (j.contains("rank")) {
    const int64_t rank = integer(j, "rank", path);
    expect(rank >= 0 && rank < l.ranks, path, detail::concat("\"rank\" ", rank, " is outside [0, ", l.ranks, ")"));
    m.rank = rank;
  }
  return m;
}

PartitionSource describe_source(const graph::Dataset& source) {
  PartitionSource s;
  s.name = source.manifest().name;
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(source.dir(), ec);
  s.path = ec ? source.dir() : absolute.lexically_normal().string();
  while (s.path.size() > 1 && s.path.back() == '/') s.path.pop_back();
  s.manifest_xxh3 = checksum_file(source.dir() + "/" + graph::kManifestName);
  for (const auto& [array, entry] : source.manifest().files) s.files[entry.path] = entry.xxh3;
  return s;
}

}  // namespace graphtier::prep::impl
