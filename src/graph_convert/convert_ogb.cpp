// Front door of OGB node-property conversion, from the raw layout the ogb package downloads:
// CSV.gz files (read_csv_graph_raw) or data.npz / node-label.npz (read_binary_graph_raw).
#include <algorithm>
#include <filesystem>
#include <vector>

#include "convert_session.hpp"
#include "convert_typed.hpp"
#include "zip_reader.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::graph {
namespace {

namespace fs = std::filesystem;
using ::graphtier::detail::concat;

/// `<dir>/<stem>.csv.gz`, or `<dir>/<stem>.csv` for an unpacked copy; empty if neither exists.
std::string find_csv(const std::string& dir, const std::string& stem) {
  for (const char* ext : {".csv.gz", ".csv"}) {
    const std::string path = dir + "/" + stem + ext;
    if (detail::file_exists(path)) return path;
  }
  return {};
}

std::string require_csv(const std::string& dir, const std::string& stem) {
  const std::string path = find_csv(dir, stem);
  if (path.empty()) throw InvalidArgument(concat(dir, "/", stem, ".csv.gz does not exist"));
  return path;
}

/// The single count of a num-node-list / num-edge-list file: node-property datasets hold one graph.
int64_t single_count(const std::string& path, ThreadPool& pool) {
  const auto values = detail::read_split_csv(*detail::text_source(path), pool);
  if (values.size() != 1) {
    throw FormatError(path, concat("lists ", values.size(), " graphs; a node-property dataset has exactly one"));
  }
  return values[0];
}

}  // namespace

namespace detail {

std::vector<std::string> subdirectories(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ogb_split_dir(const std::string& root, const std::string& name) {
  const std::string base = root + "/split";
  if (!name.empty()) {
    const std::string dir = base + "/" + name;
    std::error_code ec;
    GRAPHTIER_EXPECTS(fs::is_directory(dir, ec), InvalidArgument, "split directory ", dir, " does not exist");
    return dir;
  }
  const std::vector<std::string> names = subdirectories(base);
  if (names.empty()) return {};
  if (names.size() > 1) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw InvalidArgument(concat(base, " holds several splits (", list, "); choose one with --split"));
  }
  return base + "/" + names[0];
}

}  // namespace detail

ConvertReport convert_ogb(const OgbInput& input, const std::string& out, const ConvertOptions& options,
                          ThreadPool& pool) {
  const std::string raw = input.root + "/raw";
  std::error_code ec;
  GRAPHTIER_EXPECTS(fs::is_directory(raw, ec), InvalidArgument, input.root,
                    " has no raw/ directory (expected an OGB dataset directory such as dataset/ogbn_arxiv)");
  if (!find_csv(raw, "num-node-dict").empty()) return detail::convert_ogb_hetero(input, out, options, pool);
  OgbFormat format = input.format;
  if (format == OgbFormat::kAuto) format = detail::file_exists(raw + "/data.npz") ? OgbFormat::kNpz : OgbFormat::kCsv;
  const std::string splits = detail::ogb_split_dir(input.root, input.split);
  const bool csv = format == OgbFormat::kCsv;

  detail::ConvertSession session(out, options, csv ? "ogb (csv)" : "ogb (npz)", pool);
  if (csv) {
    const std::string edge_path = require_csv(raw, "edge");
    const std::string n_from = require_csv(raw, "num-node-list");
    const int64_t n = *detail::agree_num_nodes(options.num_nodes, single_count(n_from, pool),
                                               raw + "/num-node-list.csv.gz");
    const int64_t e = single_count(require_csv(raw, "num-edge-list"), pool);
    session.topology(*detail::text_edge_source(detail::text_source(edge_path), false, n), n,
                     options.num_nodes ? std::string() : n_from);
    if (session.report().input_edges != e) {
      throw FormatError(edge_path, concat("has ", session.report().input_edges, " edges, num-edge-list says ", e));
    }
    if (const std::string feat = find_csv(raw, "node-feat"); !feat.empty()) {
      session.features_csv(*detail::text_source(feat));
    }
    if (const std::string label = find_csv(raw, "node-label"); !label.empty()) {
      session.labels(detail::read_labels_csv(*detail::text_source(label), n, pool), label);
    }
    if (const std::string year = find_csv(raw, "node_year"); !year.empty()) {
      session.node_time(detail::read_times_csv(*detail::text_source(year), pool), year);
    }
  } else {
    const detail::ZipArchive data(raw + "/data.npz");
    const auto small_array = [&](const std::string& key) {
      const auto a = detail::NpyArray::open(data.member_source(key + ".npy"));
      std::vector<int64_t> values(static_cast<std::size_t>(a.header().numel()));
      a.reader(0).read(values.data(), a.header().numel());
      if (values.size() != 1) {
        throw FormatError(a.name(), concat("lists ", values.size(), " graphs; a node-property dataset has exactly one"));
      }
      return values[0];
    };
    const int64_t n = *detail::agree_num_nodes(options.num_nodes, small_array("num_nodes_list"),
                                               data.path() + ":num_nodes_list.npy");
    const int64_t e = small_array("num_edges_list");
    const auto edge_index = detail::NpyArray::open(data.member_source("edge_index.npy"));
    if (detail::npy_edge_count(edge_index, EdgeLayout::kRows) != e) {
      throw FormatError(edge_index.name(), concat("has ", detail::npy_edge_count(edge_index, EdgeLayout::kRows),
                                                  " edges, num_edges_list says ", e));
    }
    session.topology(*detail::npy_edge_source(edge_index, EdgeLayout::kRows), n,
                     options.num_nodes ? std::string() : data.path() + ":num_nodes_list.npy");
    if (data.find("node_feat.npy") != nullptr) {
      session.features_npy(detail::NpyArray::open(data.member_source("node_feat.npy")));
    }
    if (data.find("node_year.npy") != nullptr) {
      const auto array = detail::NpyArray::open(data.member_source("node_year.npy"));
      std::vector<int64_t> years(static_cast<std::size_t>(array.header().numel()));
      array.reader(0).read(years.data(), array.header().numel());
      session.node_time(years, array.name());
    }
    if (detail::file_exists(raw + "/node-label.npz")) {
      const detail::ZipArchive labels(raw + "/node-label.npz");
      const auto array = detail::NpyArray::open(labels.member_source("node_label.npy"));
      session.labels(detail::read_labels_npy(array, n), array.name());
    }
  }

  if (splits.empty()) {
    log_warn(input.root, " has no split/ directory: the dataset gets no train/valid/test lists");
  } else {
    for (const Split s : {Split::kTrain, Split::kValid, Split::kTest}) {
      const std::string path = require_csv(splits, std::string(split_name(s)));
      session.split(s, detail::read_split_csv(*detail::text_source(path), pool), path);
    }
  }
  return session.commit(concat("graphtier convert ogb: ", input.root, csv ? " (raw CSV)" : " (raw npz)",
                               splits.empty() ? "" : ", split " + fs::path(splits).filename().string(),
                               options.symmetrize ? ", symmetrized" : ", directed as stored"));
}

}  // namespace graphtier::graph
