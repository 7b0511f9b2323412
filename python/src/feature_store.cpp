// graphtier.FeatureStore and graphtier.TypedFeatureStore: stores made from FeatureStoreOptions (options.cpp), gathering into new torch tensors.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "arrays.hpp"
#include "bindings.hpp"
#include "graphtier/core/units.hpp"

namespace graphtier::python {
namespace {

nb::dict tier_dict(const feature::TierStats& t) {
  nb::dict d;
  d["rows"] = t.rows;
  d["bytes"] = t.bytes;
  d["seconds"] = t.seconds;
  return d;
}

}  // namespace

nb::dict gather_stats_dict(const feature::GatherStats& s) {
  nb::dict d;
  d["rows"] = s.rows;
  d["seconds"] = s.seconds;
  d["gpu_hot"] = tier_dict(s.gpu_hot);
  d["gpu_cache"] = tier_dict(s.gpu_cache);
  d["host"] = tier_dict(s.host);
  d["host_cache"] = tier_dict(s.host_cache);
  d["storage"] = tier_dict(s.storage);
  d["cache_fills"] = s.cache_fills;
  d["cache_bypasses"] = s.cache_bypasses;
  nb::dict io;
  io["reads"] = s.io.reads;
  io["bytes"] = s.io.bytes;
  io["seconds"] = s.io.seconds;
  io["iops"] = s.io.iops();
  io["mean_latency_seconds"] = s.io.mean_latency_seconds();
  d["io"] = io;
  return d;
}

void bind_feature_store(nb::module_& m) {
  nb::class_<FeatureStoreHandle>(m, "FeatureStore")
      .def(
          "__init__",
          [](FeatureStoreHandle* self, nb::object dataset, const feature::FeatureStoreOptions& options, int threads) {
            // An open graphtier.Dataset is used as it is (its topology was validated when it was
            // opened); a path is opened here, once.
            std::shared_ptr<graph::Dataset> open;
            std::string path;
            if (nb::isinstance<DatasetHandle>(dataset)) {
              open = nb::cast<const DatasetHandle&>(dataset).dataset;
            } else if (nb::isinstance<nb::str>(dataset)) {
              path = nb::cast<std::string>(dataset);
            } else {
              throw nb::type_error("FeatureStore needs a graphtier.Dataset or the path of one (a str)");
            }
            new (self) FeatureStoreHandle();
            self->pool = std::make_unique<ThreadPool>(threads);
            self->device = options.device;
            nb::gil_scoped_release release;  // opening a path and loading the static tiers read files
            if (!open) open = std::make_shared<graph::Dataset>(graph::Dataset::open(path));
            self->store = std::make_unique<feature::FeatureStore>(*open, options, *self->pool);
          },
          nb::arg("dataset"), nb::kw_only(), nb::arg("options"), nb::arg("threads"),
          "The feature store of `dataset` (a graphtier.Dataset, used as opened, or the path of one). The "
          "store keeps no reference to the Dataset.")
      .def_prop_ro("num_nodes", [](const FeatureStoreHandle& s) { return s.store->num_nodes(); })
      .def_prop_ro("io_depth", [](const FeatureStoreHandle& s) { return s.store->io_depth(); })
      .def_prop_ro("tiers",
                   [](const FeatureStoreHandle& s) {
                     const feature::TierLayout& t = s.store->tiers();
                     nb::dict d;
                     d["gpu_end"] = t.ranges.gpu_end;
                     d["cpu_end"] = t.ranges.cpu_end;
                     d["num_nodes"] = t.ranges.num_nodes;
                     d["gpu_cache_rows"] = t.gpu_cache_rows;
                     d["host_cache_rows"] = t.host_cache_rows;
                     d["host_pinned"] = t.host_pinned;
                     return d;
                   })
      .def(
          "gather",
          [](FeatureStoreHandle& s, const IdArray& ids, const std::string& memory) {
            const graph::FeatureLayout& layout = s.store->layout();
            const auto n = static_cast<int64_t>(ids.shape(0));
            const MemoryKind kind = parse_output(memory);
            auto out = std::make_shared<Buffer>(kind, static_cast<std::size_t>(std::max<int64_t>(1, n * layout.row_bytes())),
                                                s.device);
            const TensorView view = TensorView::contiguous(out->data(), layout.dtype, {n, layout.dim}, kind, s.device);
            {
              nb::gil_scoped_release release;
              s.store->gather(std::span<const int64_t>(ids.data(), ids.shape(0)), view);
            }
            return torch_view(view, owner_capsule(std::move(out)));
          },
          nb::arg("ids").noconvert(), nb::arg("memory") = "host",
          "X[ids] as a new [len(ids), dim] tensor, byte for byte, in host, pinned or device memory (the "
          "store's GPU)")
      .def(
          "gather_into",
          [](FeatureStoreHandle& s, const IdArray& ids, nb::ndarray<nb::c_contig> out) {
            const graph::FeatureLayout& layout = s.store->layout();
            const auto n = static_cast<int64_t>(ids.shape(0));
            const bool cuda = out.device_type() == nb::device::cuda::value;
            GRAPHTIER_EXPECTS(cuda || out.device_type() == nb::device::cpu::value, InvalidArgument,
                              "gather_into: out must be in host or CUDA memory");
            GRAPHTIER_EXPECTS(!cuda || out.device_id() == s.device, InvalidArgument, "gather_into: out is on cuda:",
                              out.device_id(), ", the store's GPU is cuda:", s.device);
            GRAPHTIER_EXPECTS(out.ndim() == 2 && static_cast<int64_t>(out.shape(0)) == n &&
                                  static_cast<int64_t>(out.shape(1)) == layout.dim,
                              InvalidArgument, "gather_into: out must be a contiguous [", n, ", ", layout.dim,
                              "] tensor");
            GRAPHTIER_EXPECTS(out.dtype() == dlpack_dtype(layout.dtype), InvalidArgument,
                              "gather_into: out must have the table's dtype ", dtype_name(layout.dtype));
            const MemoryKind kind = cuda ? MemoryKind::kDevice : MemoryKind::kHost;
            const TensorView view = TensorView::contiguous(out.data(), layout.dtype, {n, layout.dim}, kind, s.device);
            nb::gil_scoped_release release;
            s.store->gather(std::span<const int64_t>(ids.data(), ids.shape(0)), view);
          },
          nb::arg("ids").noconvert(), nb::arg("out"),
          "X[ids] into `out`, a contiguous [len(ids), dim] tensor of the table's dtype in host memory or "
          "on the store's GPU (e.g. from torch.empty: PyTorch's allocator owns it). The gather is complete "
          "when this returns; the caller orders it after the work that last used `out`'s memory.")
      .def_prop_ro("device", [](const FeatureStoreHandle& s) { return s.device; })
      .def_prop_ro("feature_dim", [](const FeatureStoreHandle& s) { return s.store->layout().dim; })
      .def_prop_ro("dtype", [](const FeatureStoreHandle& s) { return std::string(dtype_name(s.store->layout().dtype)); })
      .def("stats", [](const FeatureStoreHandle& s) { return gather_stats_dict(s.store->total()); });

  nb::class_<TypedFeatureStoreHandle>(m, "TypedFeatureStore")
      .def(
          "__init__",
          [](TypedFeatureStoreHandle* self, const DatasetHandle& dataset, const feature::FeatureStoreOptions& options,
             int threads) {
            new (self) TypedFeatureStoreHandle();
            self->pool = std::make_unique<ThreadPool>(threads);
            nb::gil_scoped_release release;  // loading the static tiers reads files
            self->store = std::make_unique<feature::TypedFeatureStore>(*dataset.dataset, options, *self->pool);
          },
          nb::arg("dataset"), nb::kw_only(), nb::arg("options"), nb::arg("threads"),
          "The per-type feature tables of a typed `dataset` (graphtier/feature/typed_feature_store.hpp): one "
          "store per node type that has a table, the budgets shared between them. ValueError for a homogeneous "
          "dataset or one whose types have no features. Keeps no reference to the Dataset.")
      .def_prop_ro("feature_dims",
                   [](const TypedFeatureStoreHandle& s) {
                     std::vector<int64_t> dims;
                     for (int32_t t = 0; t < s.store->num_types(); ++t) {
                       const feature::FeatureStore* type = s.store->store(t);
                       dims.push_back(type ? type->layout().dim : 0);
                     }
                     return dims;
                   },
                   "[T] each node type's feature dim, 0 for a type without features.")
      .def(
          "gather",
          [](TypedFeatureStoreHandle& s, int32_t type, const IdArray& ids) {
            const feature::FeatureStore* store = s.store->store(type);
            GRAPHTIER_EXPECTS(store != nullptr, InvalidArgument, "node type ", type, " has no features");
            const graph::FeatureLayout& layout = store->layout();
            const auto n = static_cast<int64_t>(ids.shape(0));
            auto out = std::make_shared<Buffer>(MemoryKind::kHost,
                                                static_cast<std::size_t>(std::max<int64_t>(1, n * layout.row_bytes())), 0);
            const TensorView view = TensorView::contiguous(out->data(), layout.dtype, {n, layout.dim});
            {
              nb::gil_scoped_release release;
              s.store->gather(type, std::span<const int64_t>(ids.data(), ids.shape(0)), view);
            }
            return torch_view(view, owner_capsule(std::move(out)));
          },
          nb::arg("type"), nb::arg("ids").noconvert(),
          "The features of global ids `ids`, all of node type `type`, as a new [len(ids), dim] host tensor "
          "(IndexError naming an id of another type).");
}

}  // namespace graphtier::python
