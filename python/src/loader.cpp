// graphtier._core.Loader: the C++ pipeline; each minibatch arrives as a dict of torch tensors that
// view the C++ buffers (DLPack, no copies) and keep them alive.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "arrays.hpp"
#include "bindings.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/loader/loader.hpp"
#include "graphtier/sample/sampler.hpp"

namespace graphtier::python {
namespace {

struct LoaderHandle {
  std::shared_ptr<graph::Dataset> dataset;
  std::unique_ptr<loader::Loader> loader;
};

/// Owns a delivered minibatch for the tensors viewing it. When the last of them dies, the streams
/// that free its device memory first wait for the work queued so far on `consumer` (PyTorch's
/// current stream when it was delivered): an event, no host wait.
struct Delivered {
  Delivered(loader::LoadedBatch&& b, CudaStream c) : batch(std::move(b)), consumer(c) { live.fetch_add(1); }
  ~Delivered() {
    try {
      batch.release_after(consumer);
    } catch (const std::exception& e) {
      // A deleter cannot throw; the memory is still freed in order on its own stream.
      log_warn("graphtier: ordering a minibatch's release after the consumer failed: ", e.what());
    }
    live.fetch_sub(1);
  }
  Delivered(const Delivered&) = delete;
  Delivered& operator=(const Delivered&) = delete;

  loader::LoadedBatch batch;
  CudaStream consumer;
  static inline std::atomic<int64_t> live{0};  // for the tests: owners not yet released
};

/// The blocks of a device form as tensors on the device (`cuda`; host tensors for the tests, which
/// fake a device form in host memory): the same code path either way.
void device_blocks(const sample::DeviceMiniBatch& d, nb::handle owner, bool cuda, nb::dict& out) {
  const auto view = [&](const auto* p, int64_t n) {
    return torch_view(p, static_cast<std::size_t>(n), owner, cuda, d.device);
  };
  nb::list blocks;
  for (const sample::DeviceBlock& b : d.blocks) {
    blocks.append(block_dict(b.num_dst, nb::cast(view(b.src_nodes, b.num_src)), nb::cast(view(b.indptr, b.num_dst + 1)),
                             nb::cast(view(b.indices, b.num_edges)),
                             b.edge_ids == nullptr ? nb::none() : nb::cast(view(b.edge_ids, b.num_edges)),
                             b.weights == nullptr ? nb::none() : nb::cast(view(b.weights, b.num_edges))));
  }
  out["blocks"] = blocks;
  if (d.blocks.empty()) return;  // the seeds are the input nodes, on the host
  // The seeds are the first block's dst nodes, and the input nodes the last block's src nodes.
  out["seeds"] = view(d.blocks.front().src_nodes, d.blocks.front().num_dst);
  out["input_nodes"] = view(d.blocks.back().src_nodes, d.blocks.back().num_src);
}

nb::dict batch_dict(loader::LoadedBatch&& loaded, CudaStream consumer, bool cuda = true) {
  auto owned = std::make_shared<Delivered>(std::move(loaded), consumer);
  const nb::capsule owner = owner_capsule(owned);
  const loader::LoadedBatch& lb = owned->batch;
  const sample::MiniBatch& mb = lb.batch;
  nb::dict d;
  d["epoch"] = lb.epoch;
  d["index"] = lb.index;
  d["seeds"] = torch_view(std::span<const int64_t>(mb.seeds), owner);
  d["seed_positions"] = torch_view(std::span<const int64_t>(lb.seed_positions), owner);
  d["input_nodes"] = torch_view(mb.input_nodes(), owner);
  d["labels"] = torch_view(std::span<const int64_t>(lb.labels), owner);
  d["x"] = lb.x.data != nullptr ? nb::object(nb::cast(torch_view(lb.x, owner))) : nb::none();
  // A typed dataset's blocks by type and relation, and each type's features (None without).
  nb::list hetero_blocks;
  for (const sample::HeteroBlock& hb : lb.hetero_blocks) hetero_blocks.append(hetero_block_dict(hb, owner));
  d["hetero_blocks"] = hetero_blocks;
  nb::list type_x;
  for (const TensorView& x : lb.type_x) {
    type_x.append(x.data != nullptr ? nb::object(nb::cast(torch_view(x, owner))) : nb::none());
  }
  d["type_x"] = type_x;
  if (lb.device) {
    device_blocks(*lb.device, owner, cuda, d);
    return d;
  }
  nb::list blocks;
  for (const sample::Block& b : mb.blocks) blocks.append(block_dict(b, owner));
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
  d["blocks_to_host"] = s.blocks_to_host;
  d["features"] = gather_stats_dict(s.features);
  return d;
}

}  // namespace

void bind_loader(nb::module_& m) {
  nb::class_<LoaderHandle>(m, "Loader")
      .def(
          "__init__",
          [](LoaderHandle* self, const DatasetHandle& dataset, FeatureStoreHandle* store, std::optional<IdArray> ids,
             std::optional<std::string> split, loader::LoaderOptions options, TypedFeatureStoreHandle* typed_store,
             std::optional<IdArray> input_time) {
            GRAPHTIER_EXPECTS(ids.has_value() != split.has_value(), InvalidArgument,
                              "give exactly one of split= and ids=");
            GRAPHTIER_EXPECTS(!input_time || ids, InvalidArgument, "input_time goes with ids= (one time per id)");
            options.topology.device = options.device;
            new (self) LoaderHandle{dataset.dataset, nullptr};
            feature::FeatureStore* features = store ? store->store.get() : nullptr;
            const feature::TypedFeatureStore* typed = typed_store ? typed_store->store.get() : nullptr;
            self->loader = split ? loader::Loader::over_split(*dataset.dataset, features, parse_split(*split),
                                                              std::move(options), typed)
                                 : std::make_unique<loader::Loader>(*dataset.dataset, features, to_vector(*ids),
                                                                    std::move(options), typed,
                                                                    input_time ? to_vector(*input_time)
                                                                               : std::vector<int64_t>{});
          },
          nb::kw_only(), nb::arg("dataset"), nb::arg("store").none(), nb::arg("ids").noconvert().none(),
          nb::arg("split").none(), nb::arg("options"), nb::arg("typed_store").none(),
          nb::arg("input_time").noconvert().none(),
          nb::keep_alive<1, 3>(),   // the store outlives the loader that gathers from it
          nb::keep_alive<1, 7>())   // and so does the typed store
      .def_prop_ro("num_batches", [](const LoaderHandle& l) { return l.loader->num_batches(); })
      .def_prop_ro("num_delivered", [](const LoaderHandle& l) { return l.loader->num_delivered(); })
      .def(
          "start",
          [](LoaderHandle& l, int64_t epoch, int64_t first_batch) {
            nb::gil_scoped_release release;
            l.loader->start(epoch, first_batch);
          },
          nb::arg("epoch"), nb::arg("first_batch") = 0)
      .def(
          "next",
          [](LoaderHandle& l, uintptr_t stream) -> nb::object {
            std::optional<loader::LoadedBatch> b;
            {
              nb::gil_scoped_release release;
              b = l.loader->next();
            }
            if (!b) return nb::none();
            return batch_dict(std::move(*b), CudaStream{reinterpret_cast<void*>(stream)});
          },
          nb::arg("stream") = 0,
          "The next minibatch as a dict of tensors (None after the last). `stream`: the CUDA stream "
          "(torch.cuda.current_stream().cuda_stream) that reads its device tensors; their memory is "
          "freed after the work queued on it when the last tensor dies.")
      .def("stop",
           [](LoaderHandle& l) {
             nb::gil_scoped_release release;
             l.loader->stop();
           })
      .def("stats", [](const LoaderHandle& l) { return epoch_stats_dict(l.loader->stats()); });

  // For the tests, without a GPU: a device form faked in host memory (blocks of the given sizes,
  // array k of block l filled with 1000 * l + 100 * k + i, weights i / 2) through the code path of device
  // batches, and the count of delivered minibatches whose owner is still alive.
  m.def("_fake_device_batch", [](std::vector<int64_t> num_dst, std::vector<int64_t> num_src,
                                 std::vector<int64_t> num_edges, bool edge_ids, bool weights) {
    auto d = std::make_shared<sample::DeviceMiniBatch>();
    const auto array = [&](int64_t n, int64_t base) {
      auto v = std::make_shared<std::vector<int64_t>>(static_cast<std::size_t>(n));
      for (int64_t i = 0; i < n; ++i) (*v)[static_cast<std::size_t>(i)] = base + i;
      d->storage.push_back(v);
      return v->data();
    };
    for (std::size_t l = 0; l < num_dst.size(); ++l) {
      sample::DeviceBlock& b = d->blocks.emplace_back();
      const auto base = static_cast<int64_t>(1000 * l);
      b.num_dst = num_dst[l];
      b.num_src = num_src[l];
      b.num_edges = num_edges[l];
      b.src_nodes = array(b.num_src, base);
      b.indptr = array(b.num_dst + 1, base + 100);
      b.indices = array(b.num_edges, base + 200);
      if (edge_ids) b.edge_ids = array(b.num_edges, base + 300);
      if (weights) {  // weights k / 2 (exact in float)
        auto w = std::make_shared<std::vector<float>>(static_cast<std::size_t>(b.num_edges));
        for (int64_t i = 0; i < b.num_edges; ++i) (*w)[static_cast<std::size_t>(i)] = static_cast<float>(i) / 2;
        d->storage.push_back(w);
        b.weights = w->data();
      }
    }
    loader::LoadedBatch lb;
    lb.device = d;
    lb.batch.seeds.assign(d->blocks.empty() ? 0 : static_cast<std::size_t>(num_dst.front()), 0);
    return batch_dict(std::move(lb), CudaStream{}, false);
  }, nb::arg("num_dst"), nb::arg("num_src"), nb::arg("num_edges"), nb::arg("edge_ids"), nb::arg("weights") = false);
  m.def("_live_batches", [] { return Delivered::live.load(); });
}

}  // namespace graphtier::python
