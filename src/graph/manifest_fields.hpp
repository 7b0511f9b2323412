// The checked reading of manifest.json's fields, shared by the manifest's sections (manifest.cpp,
// hetero_manifest.cpp): every message says "field X: expected Y, got Z" and names the file.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "graphtier/core/dtype.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/graph/dataset.hpp"

namespace graphtier::graph::detail_manifest {

using Json = nlohmann::json;

/// A JSON value for messages: its type, and its value if it is a scalar.
inline std::string describe(const Json& v) {
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
  const Json& array(const char* key) const {
    const Json& v = required(key);
    if (!v.is_array()) wrong(key, "an array", v);
    return v;
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

inline DType dtype_field(const Fields& f, const char* key, const std::string& path) {
  const std::string text = f.string(key);
  try {
    return parse_dtype(text);
  } catch (const InvalidArgument& e) {
    throw FormatError(path, detail::concat("field ", f.name(key), ": ", e.what()));
  }
}

/// The feature table layout at `field` ("features", "hetero.node_types[0].features") of a table
/// of `rows` rows: checked as FeatureLayout::make, row_stride required and matching when dim > 0.
FeatureLayout feature_layout_from_json(const Json& object, const std::string& field, int64_t rows,
                                      const std::string& path);
nlohmann::ordered_json feature_layout_to_json(const FeatureLayout& features);

/// The "hetero" section (hetero_manifest.cpp), checked as HeteroSchema documents.
HeteroSchema hetero_from_json(const Json& object, int64_t num_nodes, const std::string& path);
nlohmann::ordered_json hetero_to_json(const HeteroSchema& schema);

}  // namespace graphtier::graph::detail_manifest
