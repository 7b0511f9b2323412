// Manifest of dataset format v1: JSON in, JSON out, checked field by field.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/memory.hpp"
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

using Json = nlohmann::json;

/// A JSON value for messages: its type, and its value if it is a scalar.
std::string describe(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case Json::value_t::string: {
      constexpr std::size_t kMax = 40;
      const auto& s = v.get_ref<const std::string&>();
      return "string \"" + detail::printable(s.substr(0, kMax)) + (s.size() > kMax ? "...\"" : "\"");
    }
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return "number " + v.dump();
    case Json::value_t::array: return "an array";
    case Json::value_t::object: return "an object";
    default: return v.type_name();
  }
}

/// The fields of one JSON object of the manifest, each checked by type: "field X: expected Y,
/// got Z". A missing optional field takes its default; a present one must have the right type.
class Fields {
 public:
  Fields(const Json& object, std::string prefix, const std::string& path)
      : object_(object), prefix_(std::move(prefix)), path_(path) {}

  const Json* find(const char* key) const {
    const auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }
  std::string name(const std::string& key) const { return prefix_ + key; }

  [[noreturn]] void wrong(const std::string& key, const char* expected, const Json& v) const {
    throw FormatError(path_, detail::concat("field ", name(key), ": expected ", expected, ", got ", describe(v)));
  }
  const Json& required(const char* key) const {
    const Json* v = find(key);
    if (v == nullptr) throw FormatError(path_, detail::concat("missing field '", name(key), "'"));
    return *v;
  }

  std::string string(const char* key) const { return as_string(key, required(key)); }
  std::string string(const char* key, const std::string& fallback) const {
    const Json* v = find(key);
    return v == nullptr ? fallback : as_string(key, *v);
  }
  int64_t integer(const char* key) const { return as_integer(key, required(key)); }
  int64_t integer(const char* key, int64_t fallback) const {
    const Json* v = find(key);
    return v == nullptr ? fallback : as_integer(key, *v);
  }
  const Json& object(const char* key) const {
    const Json& v = required(key);
    if (!v.is_object()) wrong(key, "an object", v);
    return v;
  }
  /// An optional object; an empty one when missing.
  const Json& object_or_empty(const char* key) const {
    static const Json kEmpty = Json::object();
    const Json* v = find(key);
    if (v == nullptr) return kEmpty;
    if (!v->is_object()) wrong(key, "an object", *v);
    return *v;
  }

 private:
  std::string as_string(const char* key, const Json& v) const {
    if (!v.is_string()) wrong(key, "a string", v);
    return v.get<std::string>();
  }
  int64_t as_integer(const char* key, const Json& v) const {
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))) {
      wrong(key, "a 64-bit integer", v);
    }
    return v.get<int64_t>();
  }

  const Json& object_;
  std::string prefix_;
  const std::string& path_;
};

DType dtype_field(const Fields& f, const char* key, const std::string& path) {
  const std::string text = f.string(key);
  try {
    return parse_dtype(text);
  } catch (const InvalidArgument& e) {
    throw FormatError(path, detail::concat("field ", f.name(key), ": ", e.what()));
  }
}

}  // namespace

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
  const Fields f(top.object_or_empty("features"), "features.", path);
  const int64_t dim = f.integer("dim", 0);
  const int64_t alignment = f.integer("alignment", 0);
  const int64_t stride = f.integer("row_stride", 0);
  f.string("dtype", "");  // checked by type also when there are no features
  if (dim > 0) {
    try {
      m.features = FeatureLayout::make(dim, dtype_field(f, "dtype", path), alignment);
    } catch (const InvalidArgument& e) {
      throw FormatError(path, e.what());
    }
    f.integer("row_stride");  // required with features
    if (stride != m.features.row_stride) {
      throw FormatError(path, detail::concat("features.row_stride ", stride, " does not match dim/dtype/alignment (expected ",
                                             m.features.row_stride, ")"));
    }
  }
  if (m.features.row_stride > 0 && m.num_nodes > std::numeric_limits<int64_t>::max() / m.features.row_stride) {
    throw FormatError(path, detail::concat("features: ", m.num_nodes, " rows of ", m.features.row_stride,
                                           " bytes do not fit in 64 bits"));
  }
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
  return m;
}

}  // namespace graphtier::graph
