// Schemas of generated typed graphs (generate.hpp, GraphSchema): the JSON reader, the built-in
// IGBH-shaped schema (parsed by the same reader) and scaling to a node count.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "graphtier/core/error.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph_generate/generate.hpp"

namespace graphtier::graph {
namespace {

using ::graphtier::detail::concat;
using Json = nlohmann::ordered_json;

// IGBH (the Illinois Graph Benchmark's heterogeneous graph): its four node types in the counts of
// IGBH-full (paper and author from the IGB dataloader; institute and fos as published), 1024
// float32 features on every type, labels on paper (19 classes; 2983 with --classes), and its four
// relations, each with a reverse, at about IGBH-full's average degrees.
constexpr const char* kIgbhSchema = R"({
  "node_types": [
    {"name": "paper", "count": 269346174, "feature_dim": 1024, "dtype": "float32"},
    {"name": "author", "count": 277220883, "feature_dim": 1024, "dtype": "float32"},
    {"name": "institute", "count": 26918, "feature_dim": 1024, "dtype": "float32"},
    {"name": "fos", "count": 712960, "feature_dim": 1024, "dtype": "float32"}
  ],
  "relations": [
    {"name": "paper:cites:paper", "degree": 14.8, "reverse": "rev_cites"},
    {"name": "paper:written_by:author", "degree": 2.7, "reverse": "rev_written_by"},
    {"name": "author:affiliated_to:institute", "degree": 1.7, "reverse": "rev_affiliated_to"},
    {"name": "paper:topic:fos", "degree": 3.9, "reverse": "rev_topic"}
  ],
  "labelled_type": "paper",
  "num_classes": 19
})";

class SchemaReader {
 public:
  explicit SchemaReader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw FormatError(source_, field.empty() ? problem : concat(field, ": ", problem));
  }

  /// Rejects keys other than `allowed` in the object at `field`.
  void only_keys(const Json& object, const std::string& field, std::initializer_list<const char*> allowed) const {
    if (!object.is_object()) fail(field, "must be a JSON object");
    for (const auto& [key, value] : object.items()) {
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) {
        std::string names;
        for (const char* a : allowed) names += concat(names.empty() ? "" : ", ", a);
        fail(field, concat("unknown key '", key, "' (expected ", names, ")"));
      }
    }
  }

  const Json& required(const Json& object, const std::string& field, const char* key) const {
    const auto it = object.find(key);
    if (it == object.end()) fail(field, concat("'", key, "' is missing"));
    return *it;
  }

  std::string name(const Json& value, const std::string& field) const {
    if (!value.is_string() || !is_valid_type_name(value.get<std::string>())) {
      fail(field, concat("must be a name of 1 to 64 of A-Z a-z 0-9 _, got ", value.dump()));
    }
    return value.get<std::string>();
  }

  int64_t count(const Json& value, const std::string& field, int64_t minimum) const {
    if (!value.is_number_integer() || value.get<int64_t>() < minimum) {
      fail(field, concat("must be an integer >= ", minimum, ", got ", value.dump()));
    }
    return value.get<int64_t>();
  }

 private:
  std::string source_;
};

}  // namespace

GraphSchema parse_graph_schema(const std::string& text, const std::string& source) {
  const SchemaReader in(source);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    in.fail("", concat("is not valid JSON: ", e.what()));
  }
  in.only_keys(j, "", {"node_types", "relations", "labelled_type", "num_classes"});
  GraphSchema schema;

  const Json& types = in.required(j, "", "node_types");
  if (!types.is_array() || types.empty()) in.fail("node_types", "must be a non-empty array");
  std::set<std::string> type_names;
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::string field = concat("node_types[", i, "]");
    in.only_keys(types[i], field, {"name", "count", "feature_dim", "dtype"});
    NodeTypeSpec t;
    t.name = in.name(in.required(types[i], field, "name"), field + ".name");
    if (!type_names.insert(t.name).second) in.fail(field + ".name", concat("type '", t.name, "' is declared twice"));
    t.count = in.count(in.required(types[i], field, "count"), field + ".count", 1);
    if (types[i].contains("feature_dim")) t.feature_dim = in.count(types[i]["feature_dim"], field + ".feature_dim", 0);
    if (types[i].contains("dtype")) {
      const Json& d = types[i]["dtype"];
      const std::string text_dtype = d.is_string() ? d.get<std::string>() : d.dump();
      if (text_dtype == "float32") {
        t.feature_dtype = DType::kFloat32;
      } else if (text_dtype == "float16") {
        t.feature_dtype = DType::kFloat16;
      } else if (text_dtype == "bfloat16") {
        t.feature_dtype = DType::kBFloat16;
      } else {
        in.fail(field + ".dtype", concat("must be float32, float16 or bfloat16, got ", d.dump()));
      }
    }
    schema.node_types.push_back(t);
  }

  const Json& relations = in.required(j, "", "relations");
  if (!relations.is_array()) in.fail("relations", "must be an array");
  std::set<std::string> relation_names;
  const auto add_relation_name = [&](const std::string& full, const std::string& field) {
    if (!relation_names.insert(full).second) in.fail(field, concat("relation ", full, " is declared twice"));
  };
  for (std::size_t i = 0; i < relations.size(); ++i) {
    const std::string field = concat("relations[", i, "]");
    in.only_keys(relations[i], field, {"name", "degree", "reverse"});
    const Json& name = in.required(relations[i], field, "name");
    const std::string text_name = name.is_string() ? name.get<std::string>() : std::string();
    const auto a = text_name.find(':');
    const auto b = a == std::string::npos ? a : text_name.find(':', a + 1);
    RelationSpec r;
    if (b != std::string::npos) {
      r.src = text_name.substr(0, a);
      r.name = text_name.substr(a + 1, b - a - 1);
      r.dst = text_name.substr(b + 1);
    }
    if (b == std::string::npos || !is_valid_type_name(r.src) || !is_valid_type_name(r.name) || !is_valid_type_name(r.dst)) {
      in.fail(field + ".name", concat("must be written src:rel:dst (names of 1 to 64 of A-Z a-z 0-9 _), got ", name.dump()));
    }
    for (const std::string* t : {&r.src, &r.dst}) {
      if (type_names.count(*t) == 0) in.fail(field + ".name", concat("node type '", *t, "' is not in node_types"));
    }
    add_relation_name(text_name, field + ".name");
    const Json& degree = in.required(relations[i], field, "degree");
    if (!degree.is_number() || !std::isfinite(degree.get<double>()) || degree.get<double>() < 0) {
      in.fail(field + ".degree", concat("must be a number >= 0 (average edges per source node), got ", degree.dump()));
    }
    r.degree = degree.get<double>();
    if (relations[i].contains("reverse") && !relations[i]["reverse"].is_null()) {
      r.reverse = in.name(relations[i]["reverse"], field + ".reverse");
    }
    schema.relations.push_back(r);
  }
  // Reverses after every forward relation, so that a reverse may not repeat a declared name.
  for (std::size_t i = 0; i < schema.relations.size(); ++i) {
    const RelationSpec& r = schema.relations[i];
    if (!r.reverse.empty()) add_relation_name(concat(r.dst, ":", r.reverse, ":", r.src), concat("relations[", i, "].reverse"));
  }
  if (relation_names.size() > static_cast<std::size_t>(kMaxRelations)) {
    in.fail("relations", concat(relation_names.size(), " relations with their reverses, at most ", kMaxRelations));
  }

  if (j.contains("labelled_type") && !j["labelled_type"].is_null()) {
    schema.labelled_type = in.name(j["labelled_type"], "labelled_type");
    if (type_names.count(schema.labelled_type) == 0) {
      in.fail("labelled_type", concat("type '", schema.labelled_type, "' is not in node_types"));
    }
    schema.num_classes = in.count(in.required(j, "", "num_classes"), "num_classes", 1);
  } else if (j.contains("num_classes")) {
    in.fail("num_classes", "is given without a labelled_type");
  }
  return schema;
}

GraphSchema load_graph_schema(const std::string& name_or_path) {
  if (name_or_path == "igbh") return parse_graph_schema(kIgbhSchema, "the built-in igbh schema");
  std::ifstream file(name_or_path, std::ios::binary);
  if (!file) {
    throw InvalidArgument(concat("schema '", name_or_path, "' is neither a built-in one (igbh) nor a readable file"));
  }
  std::ostringstream text;
  text << file.rdbuf();
  return parse_graph_schema(text.str(), name_or_path);
}

void scale_graph_schema(GraphSchema& schema, int64_t total_nodes) {
  GRAPHTIER_EXPECTS(total_nodes >= static_cast<int64_t>(schema.node_types.size()), InvalidArgument,
                    "--nodes must be at least the number of node types (", schema.node_types.size(), "), got ",
                    total_nodes);
  long double total = 0;
  for (const NodeTypeSpec& t : schema.node_types) total += static_cast<long double>(t.count);
  for (NodeTypeSpec& t : schema.node_types) {
    const long double share = static_cast<long double>(t.count) / total * static_cast<long double>(total_nodes);
    t.count = std::max<int64_t>(1, std::llround(share));
  }
}

}  // namespace graphtier::graph
