// graphtier._core: the nanobind extension under the Python package. Thin by design
// (docs/architecture.md, Conventions 10): argument conversion and zero-copy views here; logic in
// the C++ engine; types, docstrings and defaults in python/graphtier.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <stdexcept>

#include "arrays.hpp"
#include "bindings.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/graph/dataset.hpp"

namespace graphtier::python {

graph::Split parse_split(const std::string& name) {
  if (name == "train") return graph::Split::kTrain;
  if (name == "valid" || name == "val") return graph::Split::kValid;
  if (name == "test") return graph::Split::kTest;
  throw InvalidArgument("unknown split '" + name + "' (expected train, valid or test)");
}

namespace {

/// The ids mapped by `map` (Dataset::to_original or from_original) as a new int64 tensor.
TorchArray map_ids(const DatasetHandle& d, const IdArray& ids,
                   void (graph::Dataset::*map)(std::span<const int64_t>, std::span<int64_t>) const) {
  auto out = std::make_shared<std::vector<int64_t>>(ids.shape(0));
  {
    nb::gil_scoped_release release;
    (d.dataset.get()->*map)(std::span<const int64_t>(ids.data(), ids.shape(0)), *out);
  }
  return torch_view(std::span<const int64_t>(*out), owner_capsule(out));
}

void bind_dataset(nb::module_& m) {
  nb::class_<DatasetHandle>(m, "Dataset")
      .def(nb::init<const std::string&>(), nb::arg("path"))
      .def_prop_ro("path", [](const DatasetHandle& d) { return d.dataset->dir(); })
      .def_prop_ro("name", [](const DatasetHandle& d) { return d.dataset->manifest().name; })
      .def_prop_ro("num_nodes", [](const DatasetHandle& d) { return d.dataset->num_nodes(); })
      .def_prop_ro("num_edges", [](const DatasetHandle& d) { return d.dataset->num_edges(); })
      .def_prop_ro("num_classes", [](const DatasetHandle& d) { return d.dataset->manifest().num_classes; })
      .def_prop_ro("feature_dim", [](const DatasetHandle& d) { return d.dataset->manifest().features.dim; })
      .def_prop_ro("feature_dtype",
                   [](const DatasetHandle& d) { return std::string(dtype_name(d.dataset->manifest().features.dtype)); })
      .def_prop_ro("hotness", [](const DatasetHandle& d) { return d.dataset->manifest().hotness; })
      .def_prop_ro(
          "file_checksums",
          [](const DatasetHandle& d) {
            std::map<std::string, std::string> sums;
            for (const auto& [array, entry] : d.dataset->manifest().files) sums[entry.path] = entry.xxh3;
            return sums;
          },
          "Each file's XXH3-64 as the manifest records it ({file name: 16 hex digits}): the dataset's "
          "content, which a training checkpoint identifies it by.")
      .def(
          "split",
          [](const DatasetHandle& d, const std::string& name) {
            const graph::Split s = parse_split(name);
            GRAPHTIER_EXPECTS(d.dataset->manifest().has(std::string(graph::split_name(s))), InvalidArgument,
                              "dataset ", d.dataset->dir(), " has no ", graph::split_name(s), " split");
            return torch_view(d.dataset->split(s), owner_capsule(d.dataset));
          },
          nb::arg("name"))
      .def("labels", [](const DatasetHandle& d) {
        GRAPHTIER_EXPECTS(d.dataset->has_labels(), InvalidArgument, "dataset ", d.dataset->dir(), " has no labels");
        return torch_view(d.dataset->labels(), owner_capsule(d.dataset));
      })
      .def_prop_ro("prepared", [](const DatasetHandle& d) { return d.dataset->has_permutation(); })
      // Timestamps (docs/format.md, Timestamps): int64 views, None when the dataset has none.
      .def_prop_ro("node_time",
                   [](const DatasetHandle& d) -> std::optional<TorchArray> {
                     if (!d.dataset->has_node_time()) return std::nullopt;
                     return torch_view(d.dataset->node_time(), owner_capsule(d.dataset));
                   },
                   nb::rv_policy::automatic)  // the view has its owner (the dataset's maps)
      .def_prop_ro("edge_time",
                   [](const DatasetHandle& d) -> std::optional<TorchArray> {
                     if (!d.dataset->has_edge_time()) return std::nullopt;
                     return torch_view(d.dataset->edge_time(), owner_capsule(d.dataset));
                   },
                   nb::rv_policy::automatic)
      // Typed datasets (docs/format.md, Heterogeneous datasets); empty for a homogeneous one.
      .def_prop_ro("node_types",
                   [](const DatasetHandle& d) {
                     std::vector<std::string> names;
                     for (const auto& t : d.dataset->schema().node_types) names.push_back(t.name);
                     return names;
                   })
      .def_prop_ro("node_type_offset", [](const DatasetHandle& d) { return d.dataset->schema().node_type_offset; })
      .def_prop_ro("node_type_feature_dims",
                   [](const DatasetHandle& d) {
                     std::vector<int64_t> dims;
                     for (const auto& t : d.dataset->schema().node_types) dims.push_back(t.features.dim);
                     return dims;
                   })
      .def(
          "type_features",
          [](const DatasetHandle& d, const std::string& name) {
            const graph::HeteroSchema& schema = d.dataset->schema();
            const int32_t t = schema.find_node_type(name);
            GRAPHTIER_EXPECTS(t >= 0, InvalidArgument, "dataset ", d.dataset->dir(), " has no node type '", name, "'");
            const graph::FeatureLayout& layout = schema.node_types[static_cast<std::size_t>(t)].features;
            GRAPHTIER_EXPECTS(layout.dim > 0, InvalidArgument, "node type '", name, "' of ", d.dataset->dir(),
                              " has no features");
            // [nodes of the type, dim] over the mapped file, each row `row_stride` bytes from the next.
            TensorView view;
            view.data = const_cast<std::byte*>(d.dataset->type_feature_bytes(t).data());
            view.dtype = layout.dtype;
            view.ndim = 2;
            view.shape = {schema.num_nodes_of(t), layout.dim};
            view.strides = {layout.row_stride / dtype_size(layout.dtype), 1};
            return torch_view(view, owner_capsule(d.dataset));
          },
          nb::arg("node_type"),
          "Node type `node_type`'s feature table as a read-only [nodes of the type, dim] view of its "
          "memory-mapped file (rows in the type's own ids; nothing is read until it is indexed).")
      .def_prop_ro("relations",
                   [](const DatasetHandle& d) {
                     std::vector<std::string> names;
                     for (int32_t r = 0; r < d.dataset->schema().num_relations(); ++r) {
                       names.push_back(d.dataset->schema().relation_name(r));
                     }
                     return names;
                   })
      .def_prop_ro("reverse_relations",
                   [](const DatasetHandle& d) {
                     std::vector<int32_t> reverse;
                     for (const auto& r : d.dataset->schema().relations) reverse.push_back(r.reverse);
                     return reverse;
                   })
      .def_prop_ro("labelled_type",
                   [](const DatasetHandle& d) -> std::optional<std::string> {
                     const auto& s = d.dataset->schema();
                     if (s.labelled_type < 0) return std::nullopt;
                     return s.node_types[static_cast<std::size_t>(s.labelled_type)].name;
                   })
      .def(
          "to_original", [](const DatasetHandle& d, const IdArray& ids) { return map_ids(d, ids, &graph::Dataset::to_original); },
          nb::arg("ids").noconvert())
      .def(
          "from_original",
          [](const DatasetHandle& d, const IdArray& ids) { return map_ids(d, ids, &graph::Dataset::from_original); },
          nb::arg("ids").noconvert())
      .def(
          "in_own_numbering",
          [](const DatasetHandle& d, const IdArray& ids, const std::optional<std::string>& numbering,
             const std::string& what) {
            auto out = std::make_shared<std::vector<int64_t>>(ids.data(), ids.data() + ids.shape(0));
            const auto n = numbering ? std::optional(graph::parse_numbering(*numbering)) : std::nullopt;
            {
              nb::gil_scoped_release release;
              d.dataset->to_own_numbering(*out, n, what);
            }
            return torch_view(std::span<const int64_t>(*out), owner_capsule(out));
          },
          nb::arg("ids").noconvert(), nb::arg("numbering").none(), nb::arg("what"),
          "Node ids `ids` (int64 [N]) given in `numbering` (\"prepared\", the dataset's own, \"original\", that of "
          "the input it was converted from, or None: refused on a renumbered dataset, where the two differ) in "
          "the dataset's own numbering, a new tensor; errors name `what` (Dataset::to_own_numbering).");
}

}  // namespace

void set_error(PyObject* type, const char* what) {
  PyObject* text = PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)), "backslashreplace");
  if (text == nullptr) {
    PyErr_Clear();
    PyErr_SetString(type, "(an error whose message could not be decoded)");
    return;
  }
  PyErr_SetObject(type, text);
  Py_DECREF(text);
}

DatasetHandle::DatasetHandle(const std::string& path)
    : dataset(std::make_shared<graph::Dataset>(graph::Dataset::open(path))) {}

}  // namespace graphtier::python

NB_MODULE(_core, m) {
  namespace gp = graphtier::python;
  namespace nb = nanobind;
  // Minibatches free and allocate the same sizes again: keep that memory in the process.
  m.attr("keeps_freed_memory") = graphtier::keep_freed_memory();
  // Typed C++ errors become the matching Python ones (docs/architecture.md, Conventions 5):
  // InvalidArgument and FormatError are std::invalid_argument (ValueError) and OutOfRange
  // std::out_of_range (IndexError) already; IoError is an OSError, Unsupported a
  // NotImplementedError.
  // A message may quote a file's bytes, which need not be UTF-8 (a hostile partition.json):
  // undecodable bytes become \xNN escapes, where PyErr_SetString would leave an empty message.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const graphtier::IoError& e) {
      gp::set_error(PyExc_OSError, e.what());
    } catch (const graphtier::Unsupported& e) {
      gp::set_error(PyExc_NotImplementedError, e.what());
    } catch (const std::invalid_argument& e) {
      gp::set_error(PyExc_ValueError, e.what());
    } catch (const std::out_of_range& e) {
      gp::set_error(PyExc_IndexError, e.what());
    }
  });
  m.attr("cuda_available") = nb::cpp_function([] { return graphtier::cuda_available(); });
  gp::bind_dataset(m);
  gp::bind_options(m);
  gp::bind_feature_store(m);
  gp::bind_loader(m);
  gp::bind_convert(m);
  gp::bind_partition(m);
  gp::bind_sampling(m);
  gp::bind_link(m);
  gp::bind_graph_store(m);
}
