// Reader of dataset format v1: memory-maps every array and validates it against the manifest.
#include "graphtier/graph/dataset.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "hetero_validate.hpp"
#include "graphtier/graph/csc_view.hpp"

namespace graphtier::graph {

struct Dataset::Impl {
  std::string dir;
  Manifest manifest;
  std::map<std::string, MappedFile> maps;
  // from_original's map (permutation.bin inverted), built once on first use.
  std::once_flag inverse_once;
  std::vector<int64_t> inverse;
  // HeteroView's relation types, contiguous (the manifest keeps them with their names).
  std::vector<RelationTypes> relation_types;

  std::string path_of(const std::string& array) const { return dir + "/" + manifest.files.at(array).path; }
  template <typename T>
  std::span<const T> view(const std::string& array) const {
    auto it = maps.find(array);
    if (it == maps.end()) return {};
    return it->second.as<T>();
  }
};

namespace {

/// Expected size in bytes of each array; nullopt for arrays whose size only needs to be a
/// multiple of the element size (the split id lists).
struct ArraySpec {
  std::size_t element_bytes;
  std::optional<uint64_t> expected_bytes;
};

std::optional<ArraySpec> array_spec(const std::string& array, const Manifest& m) {
  const auto n = static_cast<uint64_t>(m.num_nodes);
  if (array == "indptr") return ArraySpec{8, (n + 1) * 8};
  if (array == "indices") {
    const auto size = static_cast<std::size_t>(dtype_size(m.indices_dtype));
    return ArraySpec{size, static_cast<uint64_t>(m.num_edges) * size};
  }
  if (array == "features") return ArraySpec{1, n * static_cast<uint64_t>(m.features.row_stride)};
  if (array == "labels") return ArraySpec{4, n * 4};
  if (array == "train" || array == "valid" || array == "test") return ArraySpec{8, std::nullopt};
  if (array == "permutation" || array == "hotness" || array == "node_time") return ArraySpec{8, n * 8};
  if (array == "edge_time") return ArraySpec{8, static_cast<uint64_t>(m.num_edges) * 8};
  if (m.links) {
    for (Split s : {Split::kTrain, Split::kValid, Split::kTest}) {
      if (array == LinkSplit::array(s)) return ArraySpec{16, static_cast<uint64_t>(m.links->count(s)) * 16};
      if (array == LinkSplit::time_array(s)) return ArraySpec{8, static_cast<uint64_t>(m.links->count(s)) * 8};
    }
  }
  if (m.hetero.empty()) return std::nullopt;
  if (array == "type_per_edge") return ArraySpec{1, static_cast<uint64_t>(m.num_edges)};
  for (int32_t t = 0; t < m.hetero.num_node_types(); ++t) {
    const NodeTypeEntry& type = m.hetero.node_types[static_cast<std::size_t>(t)];
    if (type.features.dim > 0 && array == HeteroSchema::feature_array(type.name)) {
      return ArraySpec{1, static_cast<uint64_t>(m.hetero.num_nodes_of(t)) * static_cast<uint64_t>(type.features.row_stride)};
    }
  }
  return std::nullopt;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(ENOENT, path + ": cannot open (not a graphtier dataset directory?): " + std::strerror(ENOENT));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

template <typename Index>
void check_indices(std::span<const Index> indices, int64_t num_nodes, const std::string& path) {
  for (std::size_t e = 0; e < indices.size(); ++e) {
    const auto v = static_cast<int64_t>(indices[e]);
    if (v < 0 || v >= num_nodes) {
      throw FormatError(path, detail::concat("node id ", v, " at position ", e, " is out of range [0, ", num_nodes, ")"));
    }
  }
}

void check_ids(std::span<const int64_t> ids, int64_t num_nodes, const std::string& path, bool require_all) {
  std::vector<bool> seen(static_cast<std::size_t>(num_nodes), false);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const int64_t v = ids[i];
    if (v < 0 || v >= num_nodes) {
      throw FormatError(path, detail::concat("node id ", v, " at position ", i, " is out of range [0, ", num_nodes, ")"));
    }
    if (seen[static_cast<std::size_t>(v)]) {
      throw FormatError(path, detail::concat("node id ", v, " appears twice (again at position ", i, ")"));
    }
    seen[static_cast<std::size_t>(v)] = true;
  }
  if (require_all && static_cast<int64_t>(ids.size()) != num_nodes) {
    throw FormatError(path, detail::concat("has ", ids.size(), " entries, expected ", num_nodes));
  }
}

void validate(const Dataset::Impl& d) {
  const Manifest& m = d.manifest;
  const int64_t n = m.num_nodes;

  const auto indptr = d.view<int64_t>("indptr");
  const std::string indptr_path = d.path_of("indptr");
  if (indptr[0] != 0) throw FormatError(indptr_path, detail::concat("indptr[0] is ", indptr[0], ", expected 0"));
  for (int64_t v = 0; v < n; ++v) {
    if (indptr[v + 1] < indptr[v]) {
      throw FormatError(indptr_path, detail::concat("indptr is not monotone: indptr[", v, "] = ", indptr[v], " > indptr[",
                                                    v + 1, "] = ", indptr[v + 1]));
    }
  }
  if (indptr[n] != m.num_edges) {
    throw FormatError(indptr_path, detail::concat("indptr[num_nodes] is ", indptr[n], ", expected num_edges = ", m.num_edges));
  }

  const std::string indices_path = d.path_of("indices");
  if (m.indices_dtype == DType::kInt32) {
    check_indices(d.view<int32_t>("indices"), n, indices_path);
  } else {
    check_indices(d.view<int64_t>("indices"), n, indices_path);
  }

  if (m.num_classes > 0) {
    const auto labels = d.view<int32_t>("labels");
    for (std::size_t v = 0; v < labels.size(); ++v) {
      if (labels[v] < -1 || labels[v] >= m.num_classes) {
        throw FormatError(d.path_of("labels"), detail::concat("label ", labels[v], " of node ", v, " is out of range [-1, ",
                                                             m.num_classes, ")"));
      }
    }
  }
  for (Split s : {Split::kTrain, Split::kValid, Split::kTest}) {
    const std::string array(split_name(s));
    if (m.has(array)) check_ids(d.view<int64_t>(array), n, d.path_of(array), false);
  }
  if (!m.hetero.empty()) {
    using namespace detail_manifest;
    const IndexSpan indices = m.indices_dtype == DType::kInt32 ? IndexSpan(d.view<int32_t>("indices"))
                                                               : IndexSpan(d.view<int64_t>("indices"));
    const HeteroView view{m.hetero.node_type_offset, d.relation_types, d.view<uint8_t>("type_per_edge")};
    const std::string problem = hetero_problem(view, CscView{indptr, indices}, &m.hetero);
    if (!problem.empty()) throw FormatError(d.path_of("type_per_edge"), problem);
    if (m.num_classes > 0) check_labels_in_labelled_type(m.hetero, d.view<int32_t>("labels"), d.path_of("labels"));
    for (Split s : {Split::kTrain, Split::kValid, Split::kTest}) {
      const std::string array(split_name(s));
      if (m.has(array)) check_split_in_labelled_type(m.hetero, d.view<int64_t>(array), d.path_of(array));
    }
  }
  if (m.links) {
    for (Split s : {Split::kTrain, Split::kValid, Split::kTest}) {
      const std::string array = LinkSplit::array(s);
      check_indices(d.view<int64_t>(array), n, d.path_of(array));
    }
  }
  if (m.has("permutation")) check_ids(d.view<int64_t>("permutation"), n, d.path_of("permutation"), true);
  if (m.has("hotness")) {
    const auto scores = d.view<double>("hotness");
    for (std::size_t v = 0; v < scores.size(); ++v) {
      if (!std::isfinite(scores[v])) {
        throw FormatError(d.path_of("hotness"), detail::concat("score of node ", v, " is not finite"));
      }
      // A typed dataset is ordered within each type's range (prepare renumbers per type).
      const bool type_start = !m.hetero.empty() && std::binary_search(m.hetero.node_type_offset.begin(),
                                                                      m.hetero.node_type_offset.end(),
                                                                      static_cast<int64_t>(v));
      if (v > 0 && !type_start && scores[v] > scores[v - 1]) {
        throw FormatError(d.path_of("hotness"), detail::concat("scores increase at node ", v,
                                                               ": ids are not in hotness order"));
      }
    }
  }
}

}  // namespace

Dataset Dataset::open(const std::string& dir) {
  auto impl = std::make_unique<Impl>();
  impl->dir = dir;
  while (impl->dir.size() > 1 && impl->dir.back() == '/') impl->dir.pop_back();
  const std::string manifest_path = impl->dir + "/" + kManifestName;
  impl->manifest = Manifest::from_json(read_text(manifest_path), manifest_path);
  const Manifest& m = impl->manifest;

  for (const char* required : {"indptr", "indices"}) {
    if (!m.has(required)) throw FormatError(manifest_path, detail::concat("no '", required, "' array listed"));
  }
  if (m.features.dim > 0 && !m.has("features")) throw FormatError(manifest_path, "features.dim > 0 but no 'features' array");
  if (m.features.dim == 0 && m.has("features")) throw FormatError(manifest_path, "'features' array listed but features.dim is 0");
  if ((m.num_classes > 0) != m.has("labels")) {
    throw FormatError(manifest_path, "num_classes > 0 and a 'labels' array must come together");
  }
  if (!m.hetero.empty()) {
    if (!m.has("type_per_edge")) throw FormatError(manifest_path, "a typed dataset (hetero) needs a 'type_per_edge' array");
    if (m.hetero.relations.empty() && m.num_edges > 0) {
      throw FormatError(manifest_path, detail::concat("hetero.relations is empty but there are ", m.num_edges, " edges"));
    }
    for (const NodeTypeEntry& type : m.hetero.node_types) {
      const std::string array = HeteroSchema::feature_array(type.name);
      if (type.features.dim > 0 && !m.has(array)) {
        throw FormatError(manifest_path, detail::concat("node type ", type.name, " has features but no '", array, "' array"));
      }
    }
  } else if (m.has("type_per_edge")) {
    throw FormatError(manifest_path, "'type_per_edge' array listed but there is no hetero section");
  }

  if (m.links) {
    for (Split s : {Split::kTrain, Split::kValid, Split::kTest}) {
      const std::string array = LinkSplit::array(s);
      if (!m.has(array)) throw FormatError(manifest_path, detail::concat("a link split (links) needs a '", array, "' array"));
      if (m.has(LinkSplit::time_array(s)) != m.has(LinkSplit::time_array(Split::kTrain))) {
        throw FormatError(manifest_path, "a link split's edge times (link_<split>_time) come for all three splits or none");
      }
    }
  }
  for (const auto& [array, entry] : m.files) {
    const auto spec = array_spec(array, m);
    if (!spec) throw FormatError(manifest_path, detail::concat("unknown array '", detail::printable(array), "'"));
    const std::string path = impl->dir + "/" + entry.path;
    MappedFile file(path);
    if (file.size() != entry.bytes) {
      throw FormatError(path, detail::concat("size is ", file.size(), " bytes but the manifest says ", entry.bytes,
                                             " (truncated or replaced?)"));
    }
    if (spec->expected_bytes && entry.bytes != *spec->expected_bytes) {
      throw FormatError(path, detail::concat("size is ", entry.bytes, " bytes, expected ", *spec->expected_bytes,
                                             " for ", m.num_nodes, " nodes / ", m.num_edges, " edges"));
    }
    if (entry.bytes % spec->element_bytes != 0) {
      throw FormatError(path, detail::concat("size ", entry.bytes, " is not a multiple of the element size ",
                                             spec->element_bytes));
    }
    impl->maps.emplace(array, std::move(file));
  }
  for (const RelationEntry& r : impl->manifest.hetero.relations) impl->relation_types.push_back(r.types);
  validate(*impl);
  return Dataset(std::move(impl));
}

Dataset::Dataset(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Dataset::Dataset(Dataset&&) noexcept = default;
Dataset& Dataset::operator=(Dataset&&) noexcept = default;
Dataset::~Dataset() = default;

const std::string& Dataset::dir() const noexcept { return impl_->dir; }
const Manifest& Dataset::manifest() const noexcept { return impl_->manifest; }
std::span<const int64_t> Dataset::indptr() const { return impl_->view<int64_t>("indptr"); }

IndexSpan Dataset::indices() const {
  if (manifest().indices_dtype == DType::kInt32) return impl_->view<int32_t>("indices");
  return impl_->view<int64_t>("indices");
}

std::span<const std::byte> Dataset::feature_bytes() const { return impl_->view<std::byte>("features"); }
std::span<const int32_t> Dataset::labels() const { return impl_->view<int32_t>("labels"); }
std::span<const int64_t> Dataset::split(Split s) const { return impl_->view<int64_t>(std::string(split_name(s))); }
std::span<const int64_t> Dataset::permutation() const { return impl_->view<int64_t>("permutation"); }
std::span<const int64_t> Dataset::link_edges(Split s) const {
  if (!has_link_split()) return {};
  return impl_->view<int64_t>(LinkSplit::array(s));
}
std::span<const double> Dataset::hotness() const { return impl_->view<double>("hotness"); }
std::span<const int64_t> Dataset::link_time(Split s) const {
  if (!has_link_time()) return {};
  return impl_->view<int64_t>(LinkSplit::time_array(s));
}
std::span<const int64_t> Dataset::node_time() const { return impl_->view<int64_t>("node_time"); }
std::span<const int64_t> Dataset::edge_time() const { return impl_->view<int64_t>("edge_time"); }

HeteroView Dataset::hetero() const {
  const HeteroSchema& s = schema();
  if (s.empty()) return {};
  return HeteroView{s.node_type_offset, impl_->relation_types, impl_->view<uint8_t>("type_per_edge")};
}

std::span<const std::byte> Dataset::type_feature_bytes(int32_t type) const {
  const HeteroSchema& s = schema();
  GRAPHTIER_EXPECTS(type >= 0 && type < s.num_node_types(), OutOfRange, "node type ", type, " is out of range [0, ",
                    s.num_node_types(), ")");
  return impl_->view<std::byte>(HeteroSchema::feature_array(s.node_types[static_cast<std::size_t>(type)].name));
}

std::string_view numbering_name(Numbering n) { return n == Numbering::kOriginal ? "original" : "prepared"; }

Numbering parse_numbering(std::string_view text) {
  if (text == "prepared") return Numbering::kPrepared;
  if (text == "original") return Numbering::kOriginal;
  throw InvalidArgument(detail::concat("unknown node numbering '", detail::printable(text),
                                       "' (expected prepared or original)"));
}

namespace {

/// out[i] = map[ids[i]] (the identity for an empty map), after checking every id: a bad id
/// leaves `out` untouched, also when it aliases `ids`.
void map_ids(std::span<const int64_t> ids, std::span<int64_t> out, std::span<const int64_t> map, int64_t num_nodes,
             Numbering numbering) {
  GRAPHTIER_EXPECTS(out.size() == ids.size(), InvalidArgument, "id map: ", ids.size(), " ids but room for ",
                    out.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= num_nodes) {
      throw OutOfRange(detail::concat(numbering_name(numbering), " node id ", ids[i], " at position ", i,
                                      " is out of range [0, ", num_nodes, ")"));
    }
  }
  if (map.empty()) {
    if (out.data() != ids.data()) std::copy(ids.begin(), ids.end(), out.begin());
    return;
  }
  for (std::size_t i = 0; i < ids.size(); ++i) out[i] = map[static_cast<std::size_t>(ids[i])];
}

}  // namespace

void Dataset::to_original(std::span<const int64_t> ids, std::span<int64_t> out) const {
  map_ids(ids, out, permutation(), num_nodes(), Numbering::kPrepared);
}

void Dataset::from_original(std::span<const int64_t> ids, std::span<int64_t> out) const {
  if (has_permutation()) {
    std::call_once(impl_->inverse_once, [this] {
      const auto perm = permutation();  // validated at open: a permutation of [0, num_nodes)
      impl_->inverse.resize(perm.size());
      for (std::size_t v = 0; v < perm.size(); ++v) impl_->inverse[static_cast<std::size_t>(perm[v])] = static_cast<int64_t>(v);
    });
  }
  map_ids(ids, out, impl_->inverse, num_nodes(), Numbering::kOriginal);
}

void Dataset::to_own_numbering(std::span<int64_t> ids, std::optional<Numbering> numbering, std::string_view what) const {
  GRAPHTIER_EXPECTS(numbering.has_value() || !has_permutation(), InvalidArgument, what, ": dataset ", dir(),
                    " was renumbered by `graphtier prepare`, so its ids and those of the input it was converted "
                    "from differ: say which ids are given, ids_numbering='original' (the input's, e.g. a PyG "
                    "train_mask) or 'prepared' (the dataset's own, as Dataset.split and batches give them)");
  if (numbering != Numbering::kOriginal) return;
  from_original(ids, ids);
  if (has_permutation()) {
    log_info(what, ": ", ids.size(), " ids read in the original numbering, mapped to the dataset's own");
  }
}

void Dataset::verify_checksums(Progress* progress) const {
  for (const auto& [array, entry] : manifest().files) {
    const std::string path = impl_->dir + "/" + entry.path;
    const std::string actual = checksum_file(path, progress);
    if (actual != entry.xxh3) {
      throw FormatError(path, detail::concat("checksum mismatch: computed xxh3 ", actual, ", manifest says ", entry.xxh3,
                                             " (file is corrupt)"));
    }
  }
}

}  // namespace graphtier::graph
