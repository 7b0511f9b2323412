// Bookkeeping shared by the converter front doors.
#include "convert_session.hpp"

#include <algorithm>
#include <limits>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/test_hook.hpp"

namespace graphtier::graph::detail {

using ::graphtier::detail::concat;

namespace {

const ConvertOptions& validated(const ConvertOptions& o) {
  // FeatureLayout::make names the accepted dtypes and alignments.
  FeatureLayout::make(1, o.feature_dtype, o.alignment);
  if (o.num_nodes) GRAPHTIER_EXPECTS(*o.num_nodes >= 1, InvalidArgument, "number of nodes must be >= 1, got ", *o.num_nodes);
  if (o.num_classes) {
    GRAPHTIER_EXPECTS(*o.num_classes >= 1 && *o.num_classes <= std::numeric_limits<int32_t>::max(), InvalidArgument,
                      "number of classes must be in [1, 2^31), got ", *o.num_classes);
  }
  GRAPHTIER_EXPECTS(o.memory_budget >= 0, InvalidArgument, "memory budget must be >= 0, got ", o.memory_budget);
  GRAPHTIER_EXPECTS(o.chunk_bytes >= 1, InvalidArgument, "chunk size must be >= 1 byte, got ", o.chunk_bytes);
  return o;
}

}  // namespace

std::optional<int64_t> agree_num_nodes(std::optional<int64_t> current, int64_t count, const std::string& what) {
  if (current && *current != count) {
    throw InvalidArgument(concat("number of nodes disagree: ", what, " implies ", count, ", but ", *current,
                                 " was given or found earlier"));
  }
  return count;
}

ConvertSession::ConvertSession(std::string out, const ConvertOptions& options, std::string format, ThreadPool& pool)
    : out_(std::move(out)), options_(validated(options)), pool_(pool), writer_(out_, options.overwrite),
      start_(std::chrono::steady_clock::now()) {
  report_.dataset = out_;
  report_.format = std::move(format);
  report_.feature_dtype = options.feature_dtype;
  report_.alignment = options.alignment;
  manifest_.name = options.name;
}

void ConvertSession::topology(const EdgeSource& edges, std::optional<int64_t> num_nodes,
                              const std::string& num_nodes_from) {
  const auto stage = std::chrono::steady_clock::now();
  CscOptions csc;
  csc.symmetrize = options_.symmetrize;
  csc.keep_self_loops = options_.keep_self_loops;
  csc.num_nodes = num_nodes ? num_nodes : options_.num_nodes;
  if (num_nodes) csc.num_nodes_from = num_nodes_from;
  csc.memory_budget = options_.memory_budget;
  const CscResult r = write_csc(writer_, edges, csc, pool_);
  park_point("convert.topology_written");  // test hook
  if (r.num_nodes == 0) {
    throw FormatError(edges.name(), "has no edges, so the number of nodes is unknown; give it explicitly");
  }
  topology_written(r, seconds_since(stage));
}

void ConvertSession::topology_written(const CscResult& r, double seconds) {
  manifest_.num_nodes = r.num_nodes;
  manifest_.num_edges = r.num_edges;
  manifest_.indices_dtype = r.index_dtype;
  static_cast<TopologyReport&>(report_) = r;
  report_.input_edges = r.input_edges;
  report_.topology_seconds = seconds;
  report_.total_bytes += (r.num_nodes + 1) * 8 + r.num_edges * dtype_size(r.index_dtype);
  has_topology_ = true;
}

FeatureLayout ConvertSession::write_npy_table(const std::string& name, const NpyArray& array, int64_t rows,
                                              bool allow_longer, const std::string& type_name) {
  const auto stage = std::chrono::steady_clock::now();
  if (array.ndim() != 2) {
    throw FormatError(array.name(), concat("features have shape ", array.header().shape_string(), ", expected [",
                                           type_name.empty() ? std::string("num_nodes") : concat("nodes of ", type_name), ", dim]"));
  }
  if (array.dim(0) != rows && !(allow_longer && array.dim(0) > rows)) {
    throw FormatError(array.name(), concat("has ", array.dim(0), " feature rows, expected one per ",
                                           type_name.empty() ? std::string("node") : concat("node of type ", type_name), " (", rows, ")"));
  }
  if (array.dim(1) == 0) return {};
  const FeatureLayout layout = FeatureLayout::make(array.dim(1), options_.feature_dtype, options_.alignment);
  writer_.require_free_space("the features", rows, layout.row_stride);
  log_info("writing ", rows, " x ", layout.dim, " features as ", dtype_name(layout.dtype), " (row stride ",
           layout.row_stride, " B) from ", array.name());
  report_.total_bytes += write_features_npy(writer_.open_array(name), array, rows, layout, options_.chunk_bytes, pool_);
  report_.features_seconds += seconds_since(stage);
  return layout;
}

FeatureLayout ConvertSession::write_csv_table(const std::string& name, const ByteSource& source, int64_t rows,
                                              const std::string& what) {
  const auto stage = std::chrono::steady_clock::now();
  const FeatureLayout layout = write_features_csv(
      writer_.open_array(name), source, rows, options_.feature_dtype, options_.alignment, pool_,
      [&](const FeatureLayout& l) { writer_.require_free_space(what, rows, l.row_stride); });
  report_.total_bytes += rows * layout.row_stride;
  report_.features_seconds += seconds_since(stage);
  return layout;
}

void ConvertSession::features_npy(const NpyArray& array, bool allow_longer) {
  const FeatureLayout layout = write_npy_table("features", array, num_nodes(), allow_longer, "");
  if (layout.dim == 0) return;
  manifest_.features = layout;
  report_.feature_dim = layout.dim;
  report_.row_stride = layout.row_stride;
}

void ConvertSession::features_csv(const ByteSource& source) {
  const FeatureLayout layout = write_csv_table("features", source, num_nodes(), "the features");
  manifest_.features = layout;
  report_.feature_dim = layout.dim;
  report_.row_stride = layout.row_stride;
}

void ConvertSession::type_features_npy(int32_t type, const NpyArray& array) {
  HeteroSchema& h = manifest_.hetero;
  NodeTypeEntry& t = h.node_types.at(static_cast<std::size_t>(type));
  t.features = write_npy_table(HeteroSchema::feature_array(t.name), array, h.num_nodes_of(type), false,
                               t.name);
  report_.type_feature_tables += t.features.dim > 0;
}

void ConvertSession::type_features_csv(int32_t type, const ByteSource& source) {
  HeteroSchema& h = manifest_.hetero;
  NodeTypeEntry& t = h.node_types.at(static_cast<std::size_t>(type));
  t.features = write_csv_table(HeteroSchema::feature_array(t.name), source, h.num_nodes_of(type),
                               concat("the features of ", t.name));
  report_.type_feature_tables += t.features.dim > 0;
}

void ConvertSession::labels(const std::vector<int32_t>& labels, const std::string& name) {
  GRAPHTIER_EXPECTS(static_cast<int64_t>(labels.size()) == num_nodes(), InvalidArgument, name, ": ", labels.size(),
                    " labels for ", num_nodes(), " nodes");
  int32_t max_label = -1;
  int64_t labeled = 0;
  for (const int32_t l : labels) {
    max_label = std::max(max_label, l);
    labeled += l >= 0;
  }
  if (labeled == 0) {
    log_warn(name, ": no node is labeled; the dataset gets no labels");
    return;
  }
  int64_t num_classes = int64_t{max_label} + 1;
  if (options_.num_classes) {
    if (max_label >= *options_.num_classes) {
      throw FormatError(name, concat("holds label ", max_label, ", but the number of classes is ", *options_.num_classes));
    }
    num_classes = *options_.num_classes;
  }
  writer_.write_array("labels", std::span<const int32_t>(labels));
  manifest_.num_classes = num_classes;
  report_.num_classes = num_classes;
  report_.num_labeled = labeled;
  report_.total_bytes += num_nodes() * 4;
}

void ConvertSession::split(Split split, const std::vector<int64_t>& ids, const std::string& name) {
  check_split(ids, num_nodes(), name);
  writer_.write_array(std::string(split_name(split)), std::span<const int64_t>(ids));
  const auto count = static_cast<int64_t>(ids.size());
  switch (split) {
    case Split::kTrain: report_.num_train = count; break;
    case Split::kValid: report_.num_valid = count; break;
    case Split::kTest: report_.num_test = count; break;
  }
  report_.total_bytes += count * 8;
}

void ConvertSession::node_time(const std::vector<int64_t>& times, const std::string& name) {
  if (static_cast<int64_t>(times.size()) != num_nodes()) {
    throw FormatError(name, ::graphtier::detail::concat("has ", times.size(), " timestamps, expected one per node (",
                                                        num_nodes(), ")"));
  }
  writer_.write_array("node_time", std::span<const int64_t>(times));
  report_.total_bytes += num_nodes() * 8;
}

void ConvertSession::edge_time(const std::vector<int64_t>& times, const std::string& name) {
  GRAPHTIER_EXPECTS(has_topology_, InvalidArgument, "edge times of ", out_, " before its topology");
  const int64_t edges = report_.num_edges;
  if (static_cast<int64_t>(times.size()) != edges) {
    throw FormatError(name, ::graphtier::detail::concat("has ", times.size(), " timed edges, the CSC has ", edges));
  }
  writer_.write_array("edge_time", std::span<const int64_t>(times));
  report_.total_bytes += edges * 8;
}

ConvertReport ConvertSession::commit(const std::string& source_description) {
  GRAPHTIER_EXPECTS(has_topology_, InvalidArgument, "conversion of ", out_, " has no topology");
  manifest_.source = source_description;
  writer_.commit(manifest_);
  report_.total_seconds = seconds_since(start_);
  return report_;
}

}  // namespace graphtier::graph::detail
