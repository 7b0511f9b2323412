// Manifest of dataset format v1: JSON in, JSON out, checked field by field.
#include <nlohmann/json.hpp>

#include "graphtier/core/error.hpp"
#include "graphtier/graph/dataset.hpp"

namespace graphtier::graph {

std::string_view split_name(Split s) {
  switch (s) {
    case Split::kTrain: return "train";
    case Split::kValid: return "valid";
    case Split::kTest: return "test";
  }
  return "unknown";
}

DType index_dtype_for(int64_t num_nodes) {
  return num_nodes <= int64_t{1} << 31 ? DType::kInt32 : DType::kInt64;
}

FeatureLayout FeatureLayout::make(int64_t dim, DType dtype, int64_t alignment) {
  GRAPHTIER_EXPECTS(dim >= 0, InvalidArgument, "feature dim must be >= 0, got ", dim);
  GRAPHTIER_EXPECTS(dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kBFloat16,
                    InvalidArgument, "feature dtype must be float32, float16 or bfloat16, got ", dtype_name(dtype));
  GRAPHTIER_EXPECTS(alignment == 0 || alignment == 512 || alignment == 4096, InvalidArgument,
                    "feature row alignment must be 0, 512 or 4096 bytes, got ", alignment);
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

std::string Manifest::to_json() const {
  nlohmann::ordered_json j;
  j["format"] = "graphtier-dataset";
  j["version"] = version;
  j["name"] = name;
  j["num_nodes"] = num_nodes;
  j["num_edges"] = num_edges;
  j["indices_dtype"] = dtype_name(indices_dtype);
  j["features"] = {{"dim", features.dim},
                   {"dtype", dtype_name(features.dtype)},
                   {"alignment", features.alignment},
                   {"row_stride", features.row_stride}};
  j["num_classes"] = num_classes;
  j["hotness"] = hotness;
  j["source"] = source;
  nlohmann::ordered_json files_json = nlohmann::ordered_json::object();
  for (const auto& [array, entry] : files) {
    files_json[array] = {{"path", entry.path}, {"bytes", entry.bytes}, {"xxh3", entry.xxh3}};
  }
  j["files"] = files_json;
  return j.dump(2) + "\n";
}

namespace {

template <typename T>
T field(const nlohmann::json& j, const char* key, const std::string& path) {
  if (!j.contains(key)) throw FormatError(path, detail::concat("missing field '", key, "'"));
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw FormatError(path, detail::concat("field '", key, "' has the wrong type"));
  }
}

DType dtype_field(const nlohmann::json& j, const char* key, const std::string& path) {
  try {
    return parse_dtype(field<std::string>(j, key, path));
  } catch (const InvalidArgument& e) {
    throw FormatError(path, detail::concat("field '", key, "': ", e.what()));
  }
}

}  // namespace

Manifest Manifest::from_json(const std::string& text, const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw FormatError(path, detail::concat("not valid JSON (", e.what(), ")"));
  }
  if (!j.is_object() || j.value("format", "") != "graphtier-dataset") {
    throw FormatError(path, "not a graphtier dataset manifest (field 'format' is not \"graphtier-dataset\")");
  }
  Manifest m;
  m.version = field<int>(j, "version", path);
  if (m.version != kFormatVersion) {
    throw FormatError(path, detail::concat("unsupported format version ", m.version, " (this build reads version ",
                                           kFormatVersion, ")"));
  }
  m.name = j.value("name", "");
  m.num_nodes = field<int64_t>(j, "num_nodes", path);
  m.num_edges = field<int64_t>(j, "num_edges", path);
  if (m.num_nodes < 0 || m.num_edges < 0) throw FormatError(path, "negative node or edge count");
  m.indices_dtype = dtype_field(j, "indices_dtype", path);
  if (m.indices_dtype != DType::kInt32 && m.indices_dtype != DType::kInt64) {
    throw FormatError(path, "indices_dtype must be int32 or int64");
  }
  if (m.indices_dtype == DType::kInt32 && m.num_nodes > (int64_t{1} << 31)) {
    throw FormatError(path, "int32 indices cannot address more than 2^31 nodes");
  }
  const auto& f = j.contains("features") ? j["features"] : nlohmann::json::object();
  const int64_t dim = f.value("dim", int64_t{0});
  if (dim > 0) {
    try {
      m.features = FeatureLayout::make(dim, dtype_field(f, "dtype", path), f.value("alignment", int64_t{0}));
    } catch (const InvalidArgument& e) {
      throw FormatError(path, e.what());
    }
    const int64_t stride = field<int64_t>(f, "row_stride", path);
    if (stride != m.features.row_stride) {
      throw FormatError(path, detail::concat("features.row_stride ", stride, " does not match dim/dtype/alignment (expected ",
                                             m.features.row_stride, ")"));
    }
  }
  m.num_classes = j.value("num_classes", int64_t{0});
  if (m.num_classes < 0) throw FormatError(path, "negative num_classes");
  m.hotness = j.value("hotness", "");
  m.source = j.value("source", "");
  if (!j.contains("files") || !j["files"].is_object()) throw FormatError(path, "missing object 'files'");
  for (const auto& [array, entry] : j["files"].items()) {
    FileEntry e;
    e.path = field<std::string>(entry, "path", path);
    e.bytes = field<uint64_t>(entry, "bytes", path);
    e.xxh3 = field<std::string>(entry, "xxh3", path);
    if (e.path.empty() || e.path.find('/') != std::string::npos || e.path[0] == '.') {
      throw FormatError(path, detail::concat("file entry '", array, "' has an invalid path '", e.path, "'"));
    }
    m.files[array] = e;
  }
  return m;
}

}  // namespace graphtier::graph
