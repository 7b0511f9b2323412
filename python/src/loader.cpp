// graphtier._core.Loader: the C++ pipeline; each minibatch arrives as a dict of torch tensors that
// view the C++ buffers (DLPack, no copies) and keep them alive.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "arrays.hpp"
#include "bindings.hpp"
#include "graphtier/loader/loader.hpp"

namespace graphtier::python {
namespace {

struct LoaderHandle {
  std::shared_ptr<graph::Dataset> dataset;
  std::unique_ptr<loader::Loader> loader;
};

sample::TopologyPlacement parse_topology(const std::string& text) {
  if (text == "device") return sample::TopologyPlacement::kDevice;
  if (text == "pinned") return sample::TopologyPlacement::kPinned;
  if (text == "cached") return sample::TopologyPlacement::kCached;
  throw InvalidArgument("unknown topology placement '" + text + "' (expected device, pinned or cached)");
}

nb::dict batch_dict(loader::LoadedBatch&& loaded) {
  auto owned = std::make_shared<loader::LoadedBatch>(std::move(loaded));
  const nb::capsule owner = owner_capsule(owned);
  const sample::MiniBatch& mb = owned->batch;
  nb::dict d;
  d["epoch"] = owned->epoch;
  d["index"] = owned->index;
  d["seeds"] = torch_view(std::span<const int64_t>(mb.seeds), owner);
  d["input_nodes"] = torch_view(mb.input_nodes(), owner);
  d["labels"] = torch_view(std::span<const int64_t>(owned->labels), owner);
  d["x"] = owned->x.data != nullptr ? nb::object(nb::cast(torch_view(owned->x, owner))) : nb::none();
  nb::list blocks;
  for (const sample::Block& b : mb.blocks) {
    nb::dict block;
    block["num_dst"] = b.num_dst;
    block["src_nodes"] = torch_view(std::span<const int64_t>(b.src_nodes), owner);
    block["indptr"] = torch_view(std::span<const int64_t>(b.indptr), owner);
    block["indices"] = torch_view(std::span<const int64_t>(b.indices), owner);
    block["edge_ids"] = b.edge_ids.empty() ? nb::none() : nb::cast(torch_view(std::span<const int64_t>(b.edge_ids), owner));
    block["weights"] = b.weights.empty() ? nb::none() : nb::cast(torch_view(std::span<const float>(b.weights), owner));
    blocks.append(block);
  }
  d["blocks"] = blocks;
  return d;
}

nb::dict epoch_stats_dict(const loader::EpochStats& s) {
  nb::dict d;
  d["epoch"] = s.epoch;
  d["batches"] = s.batches;
  d["seconds"] = s.seconds;
  d["sample_seconds"] = s.sample_seconds;
  d["gather_seconds"] = s.gather_seconds;
  d["wait_seconds"] = s.wait_seconds;
  d["window_wait_seconds"] = s.window_wait_seconds;
  d["gathers"] = s.gathers;
  d["window_fill"] = s.window_fill;
  d["ready_fill"] = s.ready_fill;
  d["expected_storage_reads"] = s.expected_storage_reads;
  d["features"] = gather_stats_dict(s.features);
  return d;
}

}  // namespace

void bind_loader(nb::module_& m) {
  nb::class_<LoaderHandle>(m, "Loader")
      .def(
          "__init__",
          [](LoaderHandle* self, const DatasetHandle& dataset, FeatureStoreHandle* store, const IdArray& ids,
             const std::string& sampler, std::vector<int64_t> fanouts, bool replace, int64_t batch_size, bool shuffle,
             bool drop_last, int64_t batch_offset, int64_t batch_stride, uint64_t seed, int window, bool accumulate,
             int max_merge, int prefetch, int sample_threads, const std::string& output, int device, int bulk,
             bool gpu_sampling,
             const std::string& topology, int64_t topology_cache_bytes) {
            loader::LoaderOptions o;
            o.sampler = loader::parse_sampler_kind(sampler);
            o.fanouts = std::move(fanouts);
            o.replace = replace;
            o.batch_size = batch_size;
            o.shuffle = shuffle;
            o.drop_last = drop_last;
            o.batch_offset = batch_offset;
            o.batch_stride = batch_stride;
            o.seed = seed;
            o.window = window;
            o.accumulate = accumulate;
            o.max_merge = max_merge;
            o.prefetch = prefetch;
            o.sample_threads = sample_threads;
            o.output = parse_output(output);
            o.device = device;
            o.bulk = bulk;
            o.gpu_sampling = gpu_sampling;
            o.topology.placement = parse_topology(topology);
            o.topology.cache_bytes = topology_cache_bytes;
            o.topology.device = device;
            new (self) LoaderHandle{dataset.dataset, nullptr};
            self->loader = std::make_unique<loader::Loader>(*dataset.dataset, store ? store->store.get() : nullptr,
                                                            to_vector(ids), std::move(o));
          },
          // Keyword-only and without defaults (the Python layer owns them): a misspelt or missing
          // option is a TypeError, and no reordering can bind one option's value to another.
          nb::kw_only(), nb::arg("dataset"), nb::arg("store").none(), nb::arg("ids").noconvert(), nb::arg("sampler"),
          nb::arg("fanouts"), nb::arg("replace"), nb::arg("batch_size"), nb::arg("shuffle"), nb::arg("drop_last"),
          nb::arg("batch_offset"), nb::arg("batch_stride"), nb::arg("seed"), nb::arg("window"), nb::arg("accumulate"),
          nb::arg("max_merge"), nb::arg("prefetch"), nb::arg("sample_threads"), nb::arg("output"), nb::arg("device"),
          nb::arg("bulk"), nb::arg("gpu_sampling"), nb::arg("topology"), nb::arg("topology_cache_bytes"),
          nb::keep_alive<1, 3>())  // the store outlives the loader that gathers from it
      .def_prop_ro("num_batches", [](const LoaderHandle& l) { return l.loader->num_batches(); })
      .def_prop_ro("num_delivered", [](const LoaderHandle& l) { return l.loader->num_delivered(); })
      .def(
          "start",
          [](LoaderHandle& l, int64_t epoch, int64_t first_batch) {
            nb::gil_scoped_release release;
            l.loader->start(epoch, first_batch);
          },
          nb::arg("epoch"), nb::arg("first_batch") = 0)
      .def("next",
           [](LoaderHandle& l) -> nb::object {
             std::optional<loader::LoadedBatch> b;
             {
               nb::gil_scoped_release release;
               b = l.loader->next();
             }
             if (!b) return nb::none();
             return batch_dict(std::move(*b));
           })
      .def("stop",
           [](LoaderHandle& l) {
             nb::gil_scoped_release release;
             l.loader->stop();
           })
      .def("stats", [](const LoaderHandle& l) { return epoch_stats_dict(l.loader->stats()); });
}

}  // namespace graphtier::python
