// OGB heterogeneous node-property datasets (ogbn-mag) in the raw layout the ogb package downloads
// and reads with read_csv_heterograph_raw: raw/num-node-dict.csv.gz (a header of type names over
// one row of counts), raw/triplet-type-list.csv.gz (one `src,rel,dst` a line), per relation
// raw/relations/<src>___<rel>___<dst>/edge.csv.gz (`src,dst` lines, ids per type; its
// edge_reltype.csv.gz and other files are not read), raw/node-feat/<type>/node-feat.csv.gz,
// raw/node-label/<type>/node-label.csv.gz, and split/<name>/<type>/{train,valid,test}.csv.gz.
// Types and relations are numbered in sorted order, as the ogb package orders them.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "convert_typed.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"

namespace graphtier::graph::detail {
namespace {

namespace fs = std::filesystem;
using ::graphtier::detail::concat;

/// `<dir>/<stem>.csv.gz`, or `<dir>/<stem>.csv` for an unpacked copy; empty if neither exists.
std::string find_csv(const std::string& dir, const std::string& stem) {
  for (const char* ext : {".csv.gz", ".csv"}) {
    const std::string path = dir + "/" + stem + ext;
    if (file_exists(path)) return path;
  }
  return {};
}

std::string require_csv(const std::string& dir, const std::string& stem) {
  const std::string path = find_csv(dir, stem);
  if (path.empty()) throw InvalidArgument(concat(dir, "/", stem, ".csv.gz does not exist"));
  return path;
}

/// The lines of a small text file (plain or gzip), without trailing empty lines; FormatError past
/// `limit` bytes (these files list types and counts, a few hundred bytes).
std::vector<std::string> small_lines(const std::string& path) {
  constexpr std::size_t kLimit = std::size_t{1} << 20;
  const auto stream = text_source(path)->open();
  std::string text;
  char buffer[4096];
  while (const std::size_t n = stream->read(buffer, sizeof buffer)) {
    text.append(buffer, n);
    if (text.size() > kLimit) throw FormatError(path, concat("is larger than ", kLimit, " bytes; expected a short list"));
  }
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
    begin = end + 1;
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

std::vector<std::string> split_commas(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = line.find(',', begin);
    fields.push_back(line.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos) return fields;
    begin = comma + 1;
  }
}

/// num-node-dict: a header of type names over one row of counts (one graph).
void read_num_node_dict(const std::string& path, std::vector<std::string>& types, std::vector<int64_t>& counts) {
  const std::vector<std::string> lines = small_lines(path);
  if (lines.size() != 2) {
    throw FormatError(path, concat("has ", lines.size(), " lines; expected a header of node types and one row of ",
                                   "counts (a node-property dataset holds one graph)"));
  }
  types = split_commas(lines[0]);
  const std::vector<std::string> values = split_commas(lines[1]);
  if (values.size() != types.size()) {
    throw FormatError(path, concat("line 2: ", values.size(), " counts for ", types.size(), " node types"));
  }
  counts.clear();
  for (std::size_t t = 0; t < values.size(); ++t) {
    std::size_t used = 0;
    int64_t count = -1;
    try {
      count = std::stoll(values[t], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != values[t].size() || count < 0) {
      throw FormatError(path, concat("line 2: the count of ", types[t], " is '", ::graphtier::detail::printable(values[t]),
                                     "', not a non-negative integer"));
    }
    counts.push_back(count);
  }
}

struct Triplet {
  std::string src, rel, dst;
  auto operator<=>(const Triplet&) const = default;
};

/// The relations: triplet-type-list when present, else the directories under raw/relations/.
std::vector<Triplet> read_triplets(const std::string& raw) {
  std::vector<Triplet> triplets;
  if (const std::string path = find_csv(raw, "triplet-type-list"); !path.empty()) {
    const std::vector<std::string> lines = small_lines(path);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::vector<std::string> f = split_commas(lines[i]);
      if (f.size() != 3) {
        throw FormatError(concat(path, ":", i + 1), concat("expected 'src_type,relation,dst_type', got '",
                                                           ::graphtier::detail::printable(lines[i]), "'"));
      }
      triplets.push_back({f[0], f[1], f[2]});
    }
  } else {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(raw + "/relations", ec)) {
      if (!entry.is_directory()) continue;
      const std::string name = entry.path().filename().string();
      const auto a = name.find("___");
      const auto b = a == std::string::npos ? a : name.find("___", a + 3);
      if (b == std::string::npos) {
        throw FormatError(entry.path().string(), "is not named <src_type>___<relation>___<dst_type>");
      }
      triplets.push_back({name.substr(0, a), name.substr(a + 3, b - a - 3), name.substr(b + 3)});
    }
  }
  if (triplets.empty()) throw FormatError(raw + "/relations", "lists no relations");
  std::sort(triplets.begin(), triplets.end());
  return triplets;
}

}  // namespace

ConvertReport convert_ogb_hetero(const OgbInput& input, const std::string& out, const ConvertOptions& options,
                                 ThreadPool& pool) {
  GRAPHTIER_EXPECTS(input.format != OgbFormat::kNpz, InvalidArgument, input.root,
                    " is a heterogeneous OGB dataset (raw/num-node-dict.csv.gz); only its CSV layout is read");
  const std::string raw = input.root + "/raw";
  const std::string num_node_dict = require_csv(raw, "num-node-dict");
  std::vector<std::string> types;
  std::vector<int64_t> counts;
  read_num_node_dict(num_node_dict, types, counts);
  // Sorted, as the ogb package numbers them (and PyG after it).
  std::vector<std::size_t> order(types.size());
  for (std::size_t t = 0; t < order.size(); ++t) order[t] = t;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return types[a] < types[b]; });
  std::vector<std::string> sorted_types;
  std::vector<int64_t> sorted_counts;
  for (const std::size_t t : order) {
    sorted_types.push_back(types[t]);
    sorted_counts.push_back(counts[t]);
  }

  std::vector<RelationInput> relations;
  for (const Triplet& t : read_triplets(raw)) {
    const std::string dir = concat(raw, "/relations/", t.src, "___", t.rel, "___", t.dst);
    relations.push_back({t.src, t.rel, t.dst, text_edge_source(text_source(require_csv(dir, "edge")), false, std::nullopt)});
  }

  // The labelled type: the one type with raw/node-label/<type>/node-label.csv.gz.
  std::vector<std::string> labelled;
  for (const std::string& t : subdirectories(raw + "/node-label")) {
    if (!find_csv(raw + "/node-label/" + t, "node-label").empty()) labelled.push_back(t);
  }
  if (labelled.size() > 1) {
    throw FormatError(raw + "/node-label", concat("labels node types ", labelled[0], " and ", labelled[1],
                                                  "; a dataset has one labelled type"));
  }

  ConvertSession session(out, options, "ogb heterogeneous (csv)", pool);
  write_typed_input_topology(session, num_node_dict, sorted_types, sorted_counts, relations);
  HeteroSchema& schema = session.manifest().hetero;

  for (int32_t t = 0; t < schema.num_node_types(); ++t) {
    const std::string feat = find_csv(concat(raw, "/node-feat/", schema.node_types[static_cast<std::size_t>(t)].name), "node-feat");
    if (!feat.empty()) session.type_features_csv(t, *text_source(feat));
  }

  const std::string splits = ogb_split_dir(input.root, input.split);
  if (!labelled.empty()) {
    const int32_t type = schema.find_node_type(labelled[0]);
    if (type < 0) {
      throw FormatError(raw + "/node-label/" + labelled[0], concat("labels node type ", labelled[0], ", which ",
                                                                   num_node_dict, " does not list"));
    }
    schema.labelled_type = type;
    const std::string path = require_csv(raw + "/node-label/" + labelled[0], "node-label");
    const int64_t offset = schema.node_type_offset[static_cast<std::size_t>(type)];
    const std::vector<int32_t> of_type = read_labels_csv(*text_source(path), schema.num_nodes_of(type), pool);
    std::vector<int32_t> labels(static_cast<std::size_t>(session.num_nodes()), -1);
    std::copy(of_type.begin(), of_type.end(), labels.begin() + offset);
    session.labels(labels, path);

    if (splits.empty()) {
      log_warn(input.root, " has no split/ directory: the dataset gets no train/valid/test lists");
    } else {
      const std::string dir = splits + "/" + labelled[0];
      GRAPHTIER_EXPECTS(fs::is_directory(dir), InvalidArgument, "split ", splits, " has no ", labelled[0],
                        "/ directory for the labelled type");
      for (const Split s : {Split::kTrain, Split::kValid, Split::kTest}) {
        const std::string split_path = require_csv(dir, std::string(split_name(s)));
        std::vector<int64_t> ids = read_split_csv(*text_source(split_path), pool);
        check_split(ids, schema.num_nodes_of(type), split_path);
        for (int64_t& v : ids) v += offset;
        session.split(s, ids, split_path);
      }
    }
  } else if (!splits.empty()) {
    throw FormatError(splits, "holds a split, but raw/node-label/ labels no node type");
  }
  ConvertReport report = session.commit(concat("graphtier convert ogb: ", input.root, " (raw CSV, heterogeneous)",
                                               splits.empty() ? "" : ", split " + fs::path(splits).filename().string(),
                                               ", reverse relations added as rev_<relation>"));
  report.num_node_types = schema.num_node_types();
  report.num_relations = schema.num_relations();
  return report;
}

}  // namespace graphtier::graph::detail
