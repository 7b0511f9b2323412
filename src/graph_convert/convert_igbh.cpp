// IGBH in the typed processed layout of the IGB dataloader (IGBHeteroDGLDataset):
// `<root>/<size>/processed/<type>/node_feat.npy` per node type (paper, author, institute, fos, and
// at the large sizes conference and journal), `<src>__<rel>__<dst>/edge_index.npy` per relation
// ([E, 2] of (src, dst), ids per type), and `paper/node_label_{19,2K}.npy`. Node types and
// relations are numbered in sorted order (as DGL's heterograph orders them); every relation gets
// its reverse rev_<rel>.
#include <algorithm>
#include <filesystem>
#include <map>

#include "convert_typed.hpp"
#include "igb_layout.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"

namespace graphtier::graph::detail {
namespace {

namespace fs = std::filesystem;
using ::graphtier::detail::concat;

constexpr const char* kLabelledType = "paper";

/// The node count of a type from its features: the rows of a .npy array, or a raw float32 file's
/// size in rows of input.feature_dim values (the dataloader's np.memmap for large and full).
struct TypeFeatures {
  int64_t count = 0;
  std::optional<NpyArray> array;
};

TypeFeatures type_features(const IgbInput& input, const std::string& path) {
  TypeFeatures f;
  if (has_npy_magic(path)) {
    f.array = NpyArray::open(file_source(path));
    if (f.array->ndim() != 2) {
      throw FormatError(path, concat("features have shape ", f.array->header().shape_string(), ", expected [nodes, dim]"));
    }
    f.count = f.array->dim(0);
    return f;
  }
  const uint64_t row_bytes = static_cast<uint64_t>(input.feature_dim) * 4;
  const uint64_t bytes = file_size(path);
  if (bytes % row_bytes != 0) {
    throw FormatError(path, concat("raw float32 feature file of ", bytes, " bytes is not a whole number of ",
                                   input.feature_dim, "-value rows (wrong --feature-dim?)"));
  }
  f.count = static_cast<int64_t>(bytes / row_bytes);
  log_info(path, " has no .npy header: reading it as raw float32 [", f.count, ", ", input.feature_dim, "]");
  f.array = NpyArray::raw(file_source(path), NpyType::kFloat32, {f.count, input.feature_dim});
  return f;
}

}  // namespace

ConvertReport convert_igbh(const IgbInput& input, const std::string& out, const ConvertOptions& options,
                           ThreadPool& pool) {
  const std::string processed = igb_processed_dir(input);
  // Directories: `a__b__c` relations, others node types (those with node_feat.npy).
  std::vector<std::string> types;
  std::map<std::string, TypeFeatures> features;
  struct Relation {
    std::string src, rel, dst, path;
  };
  std::vector<Relation> found;
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(processed, ec)) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string dir = processed + "/" + name;
    if (const auto a = name.find("__"); a != std::string::npos) {
      const auto b = name.find("__", a + 2);
      if (b == std::string::npos || name.find("__", b + 2) != std::string::npos) {
        throw FormatError(dir, "is not named <src_type>__<relation>__<dst_type>");
      }
      const std::string path = dir + "/edge_index.npy";
      if (!file_exists(path)) throw FormatError(dir, "holds no edge_index.npy");
      found.push_back({name.substr(0, a), name.substr(a + 2, b - a - 2), name.substr(b + 2), path});
    } else if (const std::string path = dir + "/node_feat.npy"; file_exists(path)) {
      types.push_back(name);
      features.emplace(name, type_features(input, path));
    }
  }
  GRAPHTIER_EXPECTS(!types.empty() && !found.empty(), InvalidArgument, processed,
                    " holds no <type>/node_feat.npy or no <src>__<rel>__<dst>/edge_index.npy: not IGBH's layout");
  for (const Relation& r : found) {
    for (const std::string* t : {&r.src, &r.dst}) {
      if (features.count(*t) == 0) {
        throw FormatError(r.path, concat("relation ", r.src, "__", r.rel, "__", r.dst, " joins node type ", *t,
                                         ", which has no ", processed, "/", *t, "/node_feat.npy to count its nodes"));
      }
    }
  }
  std::vector<int64_t> counts;
  for (const std::string& t : types) counts.push_back(features.at(t).count);

  std::vector<RelationInput> relations;
  for (const Relation& r : found) {
    const NpyArray edge_index = NpyArray::open(file_source(r.path));
    npy_edge_count(edge_index, EdgeLayout::kColumns);
    relations.push_back({r.src, r.rel, r.dst, npy_edge_source(edge_index, EdgeLayout::kColumns)});
  }

  ConvertOptions o = options;
  if (!o.num_classes) o.num_classes = input.label_classes;
  ConvertSession session(out, o, "igbh (typed)", pool);
  write_typed_input_topology(session, processed, types, counts, relations);
  HeteroSchema& schema = session.manifest().hetero;
  for (int32_t t = 0; t < schema.num_node_types(); ++t) {
    const TypeFeatures& f = features.at(schema.node_types[static_cast<std::size_t>(t)].name);
    session.type_features_npy(t, *f.array);
  }

  const int32_t paper = schema.find_node_type(kLabelledType);
  if (paper >= 0) {
    const int64_t num_papers = schema.num_nodes_of(paper);
    const int64_t offset = schema.node_type_offset[static_cast<std::size_t>(paper)];
    const int64_t labeled = igb_labeled_papers(input, num_papers);
    std::string label_path;
    const std::vector<int32_t> of_papers = igb_paper_labels(input, num_papers, labeled, label_path);
    if (!of_papers.empty()) {
      schema.labelled_type = paper;
      std::vector<int32_t> labels(static_cast<std::size_t>(session.num_nodes()), -1);
      std::copy(of_papers.begin(), of_papers.end(), labels.begin() + offset);
      session.labels(labels, label_path);
      const auto splits = igb_split(input, labeled, offset);
      session.split(Split::kTrain, splits[0], "IGB train split");
      session.split(Split::kValid, splits[1], "IGB valid split");
      session.split(Split::kTest, splits[2], "IGB test split");
    }
  } else {
    log_warn(processed, " has no paper/ node type: the dataset gets no labels");
  }
  ConvertReport report = session.commit(concat("graphtier convert igb --hetero: ", input.root, " size ", input.size, ", ",
                                               input.label_classes, " classes on paper, every relation with its reverse ",
                                               "rev_<relation>"));
  report.num_node_types = schema.num_node_types();
  report.num_relations = schema.num_relations();
  return report;
}

}  // namespace graphtier::graph::detail
