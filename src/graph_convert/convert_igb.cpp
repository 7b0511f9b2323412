// Front door of IGB260M / IGBH conversion, following the IGB dataloader (IGB260M class):
// paper features and labels, paper-cites-paper edges, and its 60/20/20 split by node id.
#include <filesystem>

#include "convert_session.hpp"
#include "igb_layout.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::graph {
namespace {

namespace fs = std::filesystem;
using ::graphtier::detail::concat;

// The dataloader's counts of labeled papers in `full` (the rest carry no label).
constexpr int64_t kFullLabeled19 = 227'130'858;
constexpr int64_t kFullLabeled2K = 157'675'969;

bool is_fraction(double x) { return x >= 0.0 && x <= 1.0; }

/// `<root>/<size>/processed/paper/<file>`, or for `large` without one the `full` copy (whose first
/// rows are large's nodes, as the dataloader reads them). Second: whether it came from `full`.
std::pair<std::string, bool> paper_file(const IgbInput& in, const std::string& file) {
  const std::string own = in.root + "/" + in.size + "/processed/paper/" + file;
  if (detail::file_exists(own) || in.size != "large") return {own, false};
  const std::string full = in.root + "/full/processed/paper/" + file;
  if (detail::file_exists(full)) return {full, true};
  return {own, false};
}

}  // namespace

std::optional<int64_t> igb_num_papers(const std::string& size) {
  if (size == "experimental" || size == "tiny") return 100'000;
  if (size == "small") return 1'000'000;
  if (size == "medium") return 10'000'000;
  if (size == "large") return 100'000'000;
  if (size == "full") return 269'346'174;
  return std::nullopt;
}

namespace detail {

std::string igb_processed_dir(const IgbInput& input) {
  GRAPHTIER_EXPECTS(!input.size.empty(), InvalidArgument, "IGB size is required (experimental, small, medium, large, full)");
  GRAPHTIER_EXPECTS(input.label_classes == 19 || input.label_classes == 2983, InvalidArgument,
                    "IGB label classes must be 19 or 2983, got ", input.label_classes);
  GRAPHTIER_EXPECTS(input.feature_dim >= 1, InvalidArgument, "feature dimension must be >= 1, got ", input.feature_dim);
  GRAPHTIER_EXPECTS(is_fraction(input.train_fraction) && is_fraction(input.valid_fraction) &&
                        input.train_fraction + input.valid_fraction <= 1.0,
                    InvalidArgument, "train and valid fractions must lie in [0, 1] and add up to at most 1, got ",
                    input.train_fraction, " and ", input.valid_fraction);
  const std::string processed = input.root + "/" + input.size + "/processed";
  std::error_code ec;
  GRAPHTIER_EXPECTS(fs::is_directory(processed, ec), InvalidArgument, processed,
                    " does not exist (expected <root>/<size>/processed/ as the IGB download lays it out)");
  return processed;
}

int64_t igb_labeled_papers(const IgbInput& input, int64_t num_papers) {
  int64_t labeled = num_papers;
  if (input.labeled_nodes) {
    labeled = *input.labeled_nodes;
  } else if (input.size == "full") {
    labeled = input.label_classes == 19 ? kFullLabeled19 : kFullLabeled2K;
  }
  GRAPHTIER_EXPECTS(labeled >= 0 && labeled <= num_papers, InvalidArgument, "labeled nodes (", labeled,
                    ") must lie in [0, ", num_papers, "]");
  return labeled;
}

std::vector<int32_t> igb_paper_labels(const IgbInput& input, int64_t num_papers, int64_t labeled, std::string& path) {
  const auto [label_path, label_from_full] =
      paper_file(input, input.label_classes == 19 ? "node_label_19.npy" : "node_label_2K.npy");
  path = label_path;
  if (!file_exists(label_path)) {
    log_warn(label_path, " does not exist: the dataset gets no labels");
    return {};
  }
  const NpyArray array = has_npy_magic(label_path)
                             ? NpyArray::open(file_source(label_path))
                             : NpyArray::raw(file_source(label_path), NpyType::kFloat32, {num_papers});
  if (!label_from_full && array.dim(0) != num_papers) {
    throw FormatError(label_path, concat("has ", array.dim(0), " labels, expected ", num_papers, " (one per paper)"));
  }
  std::vector<int32_t> labels = read_labels_npy(array, num_papers);
  std::fill(labels.begin() + labeled, labels.end(), -1);
  return labels;
}

std::array<std::vector<int64_t>, 3> igb_split(const IgbInput& input, int64_t labeled, int64_t offset) {
  // As the dataloader: int() truncation of the fractions of the labeled prefix.
  const auto num_train = static_cast<int64_t>(static_cast<double>(labeled) * input.train_fraction);
  const auto num_valid = static_cast<int64_t>(static_cast<double>(labeled) * input.valid_fraction);
  const auto range = [offset](int64_t lo, int64_t hi) {
    std::vector<int64_t> ids(static_cast<std::size_t>(hi - lo));
    for (int64_t v = lo; v < hi; ++v) ids[static_cast<std::size_t>(v - lo)] = offset + v;
    return ids;
  };
  return {range(0, num_train), range(num_train, num_train + num_valid), range(num_train + num_valid, labeled)};
}

}  // namespace detail

ConvertReport convert_igb(const IgbInput& input, const std::string& out, const ConvertOptions& options,
                          ThreadPool& pool) {
  if (input.hetero) return detail::convert_igbh(input, out, options, pool);
  const std::string processed = detail::igb_processed_dir(input);

  const std::string edge_path = processed + "/paper__cites__paper/edge_index.npy";
  const auto edge_index = detail::NpyArray::open(detail::file_source(edge_path));
  detail::npy_edge_count(edge_index, EdgeLayout::kColumns);

  // Node count: --num-nodes, else the .npy feature rows, else the size's paper count, else the
  // raw feature file's size.
  const auto [feat_path, feat_from_full] = paper_file(input, "node_feat.npy");
  std::optional<detail::NpyArray> features;
  bool raw_features = false;
  std::optional<int64_t> n = options.num_nodes;
  std::string n_from;  // the input that set n, when not the options
  const auto from_size = [&] {
    n = igb_num_papers(input.size);
    if (n) n_from = concat("IGB size '", input.size, "'");
  };
  if (detail::file_exists(feat_path)) {
    if (has_npy_magic(feat_path)) {
      features = detail::NpyArray::open(detail::file_source(feat_path));
      if (!n && !feat_from_full && features->ndim() == 2) {
        n = features->dim(0);
        n_from = feat_path + " (rows)";
      }
    }
    if (!n) from_size();
    if (!features) {
      const uint64_t row_bytes = static_cast<uint64_t>(input.feature_dim) * 4;
      const uint64_t bytes = detail::file_size(feat_path);
      if (!n) {
        if (bytes % row_bytes != 0) {
          throw FormatError(feat_path, concat("raw float32 feature file of ", bytes, " bytes is not a whole number of ",
                                              input.feature_dim, "-value rows (wrong --feature-dim?)"));
        }
        n = static_cast<int64_t>(bytes / row_bytes);
        n_from = feat_path + " (size)";
      }
      log_info(feat_path, " has no .npy header: reading it as raw float32 [", *n, ", ", input.feature_dim, "]");
      features = detail::NpyArray::raw(detail::file_source(feat_path), NpyType::kFloat32, {*n, input.feature_dim});
      raw_features = true;
    }
  } else {
    log_warn(feat_path, " does not exist: the dataset gets no features");
    if (!n) from_size();
  }
  GRAPHTIER_EXPECTS(n.has_value(), InvalidArgument, "cannot tell the number of paper nodes of IGB size '", input.size,
                    "' without features; pass --num-nodes");
  const int64_t num_nodes = *n;
  const int64_t labeled = detail::igb_labeled_papers(input, num_nodes);

  ConvertOptions o = options;
  if (!o.num_classes) o.num_classes = input.label_classes;
  detail::ConvertSession session(out, o, raw_features ? "igb (raw features)" : "igb (npy)", pool);
  session.topology(*detail::npy_edge_source(edge_index, EdgeLayout::kColumns), num_nodes, n_from);
  // A raw file may be longer than the rows read (large's nodes are a prefix of full's file).
  if (features) session.features_npy(*features, /*allow_longer=*/feat_from_full || raw_features);

  std::string label_path;
  if (const std::vector<int32_t> labels = detail::igb_paper_labels(input, num_nodes, labeled, label_path); !labels.empty()) {
    session.labels(labels, label_path);
  }
  const auto splits = detail::igb_split(input, labeled, 0);
  session.split(Split::kTrain, splits[0], "IGB train split");
  session.split(Split::kValid, splits[1], "IGB valid split");
  session.split(Split::kTest, splits[2], "IGB test split");
  return session.commit(concat("graphtier convert igb: ", input.root, " size ", input.size, ", ", input.label_classes,
                               " classes, paper nodes and paper__cites__paper edges",
                               options.symmetrize ? " (symmetrized)" : " (directed as stored)"));
}

}  // namespace graphtier::graph
