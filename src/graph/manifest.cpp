// Manifest of dataset format v1: JSON in, JSON out, checked field by field.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/graph/dataset.hpp"
#include "manifest_fields.hpp"

namespace graphtier::graph {

std::string_view split_name(Split s) {
  switch (s) {
    case Split::kTrain: return "train";
    case Split::kValid: return "valid";
    case Split::kTest: return "test";
  }
  return "unknown";
}

std::string LinkSplit::array(Split s) { return "link_" + std::string(split_name(s)); }
std::string LinkSplit::time_array(Split s) { return array(s) + "_time"; }

DType index_dtype_for(int64_t num_nodes) {
  return num_nodes <= int64_t{1} << 31 ? DType::kInt32 : DType::kInt64;
}

int64_t max_nodes_for(int64_t bytes_per_node) {
  const int64_t memory = physical_memory_bytes();
  if (bytes_per_node <= 0 || memory <= 0) return kMaxNodes;
  return std::min(kMaxNodes, memory / bytes_per_node);
}

std::string node_count_problem(int64_t num_nodes, int64_t bytes_per_node, std::string_view what) {
  if (num_nodes > kMaxNodes) {
    return detail::concat(num_nodes, " nodes exceed the format's limit of ", kMaxNodes,
                          " (indptr.bin holds num_nodes + 1 int64 offsets)");
  }
  const int64_t memory = physical_memory_bytes();
  if (num_nodes <= max_nodes_for(bytes_per_node)) return {};
  return detail::concat(num_nodes, " nodes need ",
                        format_bytes(static_cast<double>(num_nodes) * static_cast<double>(bytes_per_node)),
                        " in memory for ", what, " (", bytes_per_node, " B per node) but the machine has ",
                        format_bytes(static_cast<double>(memory)));
}

FeatureLayout FeatureLayout::make(int64_t dim, DType dtype, int64_t alignment) {
  GRAPHTIER_EXPECTS(dim >= 0, InvalidArgument, "feature dim must be >= 0, got ", dim);
  GRAPHTIER_EXPECTS(dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kBFloat16,
                    InvalidArgument, "feature dtype must be float32, float16 or bfloat16, got ", dtype_name(dtype));
  GRAPHTIER_EXPECTS(alignment == 0 || alignment == 512 || alignment == 4096, InvalidArgument,
                    "feature row alignment must be 0, 512 or 4096 bytes, got ", alignment);
  // Byte counts are int64_t: a row rounded up to its alignment must fit.
  GRAPHTIER_EXPECTS(dim <= (std::numeric_limits<int64_t>::max() - 4096) / dtype_size(dtype), InvalidArgument,
                    "feature dim ", dim, " is too large: a row of ", dtype_name(dtype),
                    " values does not fit in 64-bit byte counts");
  FeatureLayout layout;
  layout.dim = dim;
  layout.dtype = dtype;
  layout.alignment = alignment;
  const int64_t bytes = layout.row_bytes();
  if (alignment == 0 || bytes == 0) {
    layout.row_stride = bytes;
  } else if (bytes <= alignment) {
    int64_t stride = 1;
    while (stride < bytes) stride <<= 1;  // a power of two below the alignment divides it
    layout.row_stride = stride;
  } else {
    layout.row_stride = (bytes + alignment - 1) / alignment * alignment;
  }
  return layout;
}

namespace detail_manifest {

FeatureLayout feature_layout_from_json(const Json& object, const std::string& field, int64_t rows,
                                      const std::string& path) {
  const Fields f(object, field + ".", path);
  FeatureLayout layout;
  const int64_t dim = f.integer("dim", 0);
  const int64_t alignment = f.integer("alignment", 0);
  const int64_t stride = f.integer("row_stride", 0);
  f.string("dtype", "");  // checked by type also when there are no features
  if (dim > 0) {
    try {
      layout = FeatureLayout::make(dim, dtype_field(f, "dtype", path), alignment);
    } catch (const InvalidArgument& e) {
      throw FormatError(path, e.what());
    }
    f.integer("row_stride");  // required with features
    if (stride != layout.row_stride) {
      throw FormatError(path, detail::concat(field, ".row_stride ", stride, " does not match dim/dtype/alignment (expected ",
                                             layout.row_stride, ")"));
    }
  }
  if (layout.row_stride > 0 && rows > std::numeric_limits<int64_t>::max() / layout.row_stride) {
    throw FormatError(path, detail::concat(field, ": ", rows, " rows of ", layout.row_stride,
                                           " bytes do not fit in 64 bits"));
  }
  return layout;
}

nlohmann::ordered_json feature_layout_to_json(const FeatureLayout& features) {
  return {{"dim", features.dim},
          {"dtype", dtype_name(features.dtype)},
          {"alignment", features.alignment},
          {"row_stride", features.row_stride}};
}

/// The "links" section: counts non-negative, fractions in [0, 1) (JSON numbers of any kind).
LinkSplit links_from_json(const Json& object, const std::string& path) {
  const Fields f(object, "links.", path);
  LinkSplit links;
  const auto fraction = [&](const char* key) {
    const Json& v = f.required(key);
    if (!v.is_number() || !(v.get<double>() >= 0.0 && v.get<double>() < 1.0)) f.wrong(key, "a number in [0, 1)", v);
    return v.get<double>();
  };
  const auto count = [&](const char* key) {
    const int64_t c = f.integer(key);
    if (c < 0) f.wrong(key, "a non-negative integer", f.required(key));
    return c;
  };
  const Json& seed = f.required("seed");
  if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<int64_t>() >= 0)) {
    f.wrong("seed", "a non-negative 64-bit integer", seed);
  }
  links.seed = seed.get<uint64_t>();
  links.val = fraction("val");
  links.test = fraction("test");
  links.disjoint = fraction("disjoint");
  // Optional: splits written before time-ordered splits existed are random.
  if (const Json* by_time = f.find("by_time")) {
    if (!by_time->is_boolean()) f.wrong("by_time", "true or false", *by_time);
    links.by_time = by_time->get<bool>();
  }
  links.num_train = count("num_train");
  links.num_valid = count("num_valid");
  links.num_test = count("num_test");
  return links;
}

}  // namespace detail_manifest

using detail_manifest::Fields;
using detail_manifest::links_from_json;
using detail_manifest::Json;
using detail_manifest::dtype_field;
using detail_manifest::feature_layout_from_json;
using detail_manifest::feature_layout_to_json;
using detail_manifest::hetero_from_json;
using detail_manifest::hetero_to_json;

std::string Manifest::to_json() const {
  nlohmann::ordered_json j;
  j["format"] = "graphtier-dataset";
  j["version"] = version;
  j["name"] = name;
  j["num_nodes"] = num_nodes;
  j["num_edges"] = num_edges;
  j["indices_dtype"] = dtype_name(indices_dtype);
  j["features"] = feature_layout_to_json(features);
  j["num_classes"] = num_classes;
  j["hotness"] = hotness;
  j["source"] = source;
  nlohmann::ordered_json files_json = nlohmann::ordered_json::object();
  for (const auto& [array, entry] : files) {
    files_json[array] = {{"path", entry.path}, {"bytes", entry.bytes}, {"xxh3", entry.xxh3}};
  }
  j["files"] = files_json;
  if (!hetero.empty()) j["hetero"] = hetero_to_json(hetero);
  if (links) {
    j["links"] = {{"seed", links->seed},           {"val", links->val},
                  {"test", links->test},           {"disjoint", links->disjoint},
                  {"num_train", links->num_train}, {"num_valid", links->num_valid},
                  {"num_test", links->num_test}};
    if (links->by_time) j["links"]["by_time"] = true;  // absent: a random split, as before the field
  }
  return j.dump(2) + "\n";
}

Manifest Manifest::from_json(const std::string& text, const std::string& path) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number beyond a double
    throw FormatError(path, detail::concat("not valid JSON (", e.what(), ")"));
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != "graphtier-dataset") {
    throw FormatError(path, "not a graphtier dataset manifest (field 'format' is not \"graphtier-dataset\")");
  }
  const Fields top(j, "", path);
  Manifest m;
  const int64_t version = top.integer("version");
  if (version != kFormatVersion) {
    throw FormatError(path, detail::concat("unsupported format version ", version, " (this build reads version ",
                                           kFormatVersion, ")"));
  }
  m.version = static_cast<int>(version);
  m.name = top.string("name", "");
  m.num_nodes = top.integer("num_nodes");
  m.num_edges = top.integer("num_edges");
  if (m.num_nodes < 0 || m.num_edges < 0) throw FormatError(path, "negative node or edge count");
  if (m.num_nodes > kMaxNodes) throw FormatError(path, detail::concat("num_nodes: ", node_count_problem(m.num_nodes, 0)));
  m.indices_dtype = dtype_field(top, "indices_dtype", path);
  if (m.indices_dtype != DType::kInt32 && m.indices_dtype != DType::kInt64) {
    throw FormatError(path, "indices_dtype must be int32 or int64");
  }
  if (m.indices_dtype == DType::kInt32 && m.num_nodes > (int64_t{1} << 31)) {
    throw FormatError(path, "int32 indices cannot address more than 2^31 nodes");
  }
  m.features = feature_layout_from_json(top.object_or_empty("features"), "features", m.num_nodes, path);
  m.num_classes = top.integer("num_classes", 0);
  if (m.num_classes < 0) throw FormatError(path, "negative num_classes");
  m.hotness = top.string("hotness", "");
  m.source = top.string("source", "");
  if (top.find("files") == nullptr) throw FormatError(path, "missing object 'files'");
  for (const auto& [array, entry] : top.object("files").items()) {
    const std::string name = "files." + detail::printable(array);
    if (!entry.is_object()) top.wrong(name, "an object", entry);
    const Fields fe(entry, name + ".", path);
    FileEntry e;
    e.path = fe.string("path");
    const int64_t bytes = fe.integer("bytes");
    if (bytes < 0) fe.wrong("bytes", "a non-negative integer", fe.required("bytes"));
    e.bytes = static_cast<uint64_t>(bytes);
    e.xxh3 = fe.string("xxh3");
    if (e.path.empty() || e.path.find('/') != std::string::npos || e.path[0] == '.') {
      throw FormatError(path, detail::concat("file entry '", detail::printable(array), "' has an invalid path '",
                                             detail::printable(e.path), "'"));
    }
    m.files[array] = e;
  }
  if (top.find("links") != nullptr) m.links = links_from_json(top.object("links"), path);
  if (top.find("hetero") != nullptr) {
    m.hetero = hetero_from_json(top.object("hetero"), m.num_nodes, path);
    if (m.features.dim > 0) {
      throw FormatError(path, "a typed dataset keeps its features per node type (hetero.node_types[].features), "
                              "but features.dim is not 0");
    }
    if (m.num_classes > 0 && m.hetero.labelled_type < 0) {
      throw FormatError(path, "num_classes > 0 but hetero.labelled_type is missing (which type is labelled?)");
    }
  }
  return m;
}

}  // namespace graphtier::graph
