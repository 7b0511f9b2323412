// The dataset's topology as PyG's GraphStore hands it out (python/graphtier/pyg_store.py): the
// CSC as views of the memory maps, a typed graph's relations as CSCs of their own.
#include <nanobind/stl/tuple.h>

#include <memory>
#include <tuple>
#include <variant>

#include "arrays.hpp"
#include "bindings.hpp"
#include "graphtier/graph/csc_view.hpp"
#include "graphtier/graph/relation_csc.hpp"

namespace graphtier::python {

void bind_graph_store(nb::module_& m) {
  m.def(
      "graph_csc",
      [](nb::object dataset) {
        const DatasetHandle& d = nb::cast<const DatasetHandle&>(dataset);
        const graph::CscView csc = graph::CscView::of(*d.dataset);
        // Views of the memory maps, kept alive by the Dataset object: nothing is copied or read.
        TorchArray indices = std::visit([&](auto span) { return torch_view(span, dataset); }, csc.indices);
        return std::make_tuple(torch_view(csc.indptr, dataset), indices);
      },
      nb::arg("dataset"),
      "The dataset's CSC as read-only views of its memory maps: (indptr int64 [N + 1], indices int32 or "
      "int64 [E], the file's width); column v's sources are indices[indptr[v]:indptr[v + 1]].");
  m.def(
      "relation_csc",
      [](const DatasetHandle& d, int32_t relation) {
        auto rel = std::make_shared<graph::RelationCsc>();
        {
          nb::gil_scoped_release release;
          *rel = graph::relation_csc(graph::CscView::of(*d.dataset), d.dataset->hetero(), relation);
        }
        const nb::capsule owner = owner_capsule(rel);
        return std::make_tuple(torch_view(std::span<const int64_t>(rel->indptr), owner),
                               torch_view(std::span<const int64_t>(rel->indices), owner),
                               torch_view(std::span<const int64_t>(rel->edge_ids), owner));
      },
      nb::arg("dataset"), nb::arg("relation"),
      "Relation `relation` of a typed dataset as its own CSC (graphtier/graph/relation_csc.hpp): (indptr int64 "
      "[nodes of the dst type + 1], indices int64 [E_r] ids within the src type, edge_ids int64 [E_r] positions "
      "in the dataset's CSC). An IndexError for a relation the dataset does not have.");
}

}  // namespace graphtier::python
