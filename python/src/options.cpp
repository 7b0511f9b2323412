// graphtier.Budget, graphtier.LoaderOptions and graphtier.FeatureStoreOptions: the engine's own
// option types (core/units.hpp, loader/loader.hpp, feature/feature_store.hpp) bound field by field.
// They are the one description of every loader and store option in Python: the loaders,
// FeatureStore, graphtier.pyg, the distributed fetcher and `python -m graphtier.train` take these
// objects, and read the names, defaults and docs of their keyword options and command-line flags
// from `fields` (python/graphtier/options.py). A new option is a field of the C++ struct and one
// line here.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/loader/loader.hpp"
#include "graphtier/sample/sampler.hpp"

namespace graphtier::python {
namespace {

/// One class of options: every field bound with its doc, its name kept, in order, in the class's
/// `fields` tuple.
template <typename Options>
class OptionClass {
 public:
  /// `python_defaults` changes the C++ defaults where Python's differ (said in the field's doc).
  OptionClass(nb::module_& m, const char* name, const char* doc, void (*python_defaults)(Options&) = nullptr)
      : cls_(m, name, doc) {
    cls_.def("__init__", [python_defaults](Options* o) {
      new (o) Options();
      if (python_defaults != nullptr) python_defaults(*o);
    });
    cls_.def("__copy__", [](const Options& o) { return Options(o); });
  }
  OptionClass(const OptionClass&) = delete;
  OptionClass& operator=(const OptionClass&) = delete;

  /// Publishes the field names, in the order bound, as the class attribute `fields`.
  void finish() { cls_.attr("fields") = nb::tuple(names_); }

  template <typename T>
  OptionClass& field(const char* name, T Options::*member, const char* doc) {
    cls_.def_rw(name, member, doc);
    names_.append(name);
    return *this;
  }
  /// A field read and written through `get`/`set` (a nested member, or an enum as its name).
  template <typename Get, typename Set>
  OptionClass& field(const char* name, Get&& get, Set&& set, const char* doc) {
    cls_.def_prop_rw(name, std::forward<Get>(get), std::forward<Set>(set), doc);
    names_.append(name);
    return *this;
  }

 private:
  nb::class_<Options> cls_;
  nb::list names_;
};

sample::TopologyPlacement parse_topology(const std::string& text) {
  if (text == "device") return sample::TopologyPlacement::kDevice;
  if (text == "pinned") return sample::TopologyPlacement::kPinned;
  if (text == "cached") return sample::TopologyPlacement::kCached;
  throw InvalidArgument("unknown topology placement '" + text + "' (expected device, pinned or cached)");
}

const char* topology_name(sample::TopologyPlacement p) {
  switch (p) {
    case sample::TopologyPlacement::kPinned: return "pinned";
    case sample::TopologyPlacement::kCached: return "cached";
    default: return "device";
  }
}

const char* memory_name(MemoryKind k) {
  switch (k) {
    case MemoryKind::kPinned: return "pinned";
    case MemoryKind::kDevice: return "device";
    default: return "host";
  }
}

feature::PinnedPath parse_pinned_path(const std::string& text) {
  if (text == "measured") return feature::PinnedPath::kMeasured;
  if (text == "zero-copy") return feature::PinnedPath::kZeroCopy;
  if (text == "cpu-copy") return feature::PinnedPath::kCpuCopy;
  throw InvalidArgument("unknown pinned path '" + text + "' (expected measured, zero-copy or cpu-copy)");
}

const char* pinned_path_name(feature::PinnedPath p) {
  switch (p) {
    case feature::PinnedPath::kZeroCopy: return "zero-copy";
    case feature::PinnedPath::kCpuCopy: return "cpu-copy";
    default: return "measured";
  }
}

/// A Budget, or the text or int of one: a bad text is a ValueError naming it (an implicit
/// conversion would report only that the type did not match), another type a TypeError.
Budget to_budget(nb::handle value) {
  if (nb::isinstance<Budget>(value)) return nb::cast<Budget>(value);
  if (nb::isinstance<nb::str>(value)) return Budget::parse(nb::cast<std::string>(value));
  if (nb::isinstance<nb::int_>(value) && !nb::isinstance<nb::bool_>(value)) return Budget::bytes(nb::cast<int64_t>(value));
  throw nb::type_error(("a budget is a graphtier.Budget, a str such as \"10%\" or \"4GiB\", or an int of bytes; got " +
                        std::string(nb::type_name(value.type()).c_str()))
                           .c_str());
}

void bind_budget(nb::module_& m) {
  nb::class_<Budget>(m, "Budget",
                     "A memory budget: bytes (an int, or text such as \"4GiB\", \"512MB\", \"0\") or a percent "
                     "of the feature table (\"10%\"). Options typed Budget also take the text or the int.")
      .def("__init__", [](Budget* b, const std::string& text) { new (b) Budget(Budget::parse(text)); }, nb::arg("text"))
      .def("__init__", [](Budget* b, int64_t bytes) { new (b) Budget(Budget::bytes(bytes)); }, nb::arg("bytes"))
      .def("resolve", &Budget::resolve, nb::arg("total_bytes"),
           "The budget in bytes against a table of `total_bytes` (never more than the table).")
      .def("__str__", &Budget::to_string)
      .def("__repr__", [](const Budget& b) { return "Budget('" + b.to_string() + "')"; })
      .def("__eq__", [](const Budget& a, nb::handle b) { return a.to_string() == to_budget(b).to_string(); });
}

void bind_loader_options(nb::module_& m) {
  using loader::LoaderOptions;
  OptionClass<LoaderOptions>(m, "LoaderOptions", "The options of a loader's pipeline (graphtier/loader/loader.hpp).")
      .field(
          "sampler", [](const LoaderOptions& o) { return std::string(sample::sampler_method(o.sampler).name); },
          [](LoaderOptions& o, const std::string& name) { o.sampler = sample::sampler_method(name).kind; },
          "The sampling method (set by the loader class: neighbor, ladies or fastgcn).")
      .field("fanouts", &LoaderOptions::fanouts,
             "Neighbour fanouts (neighbor; -1 = all) or nodes drawn per layer (layer-wise), blocks[0] first.")
      .field("relation_fanouts", &LoaderOptions::relation_fanouts,
             "Typed datasets: {relation \"src:rel:dst\": fanouts per block} for the relations that do not take "
             "fanouts (one per block as fanouts; -1 = all, 0 = none).")
      .field("replace", &LoaderOptions::replace, "Draw neighbours with replacement (neighbour sampling only).")
      .field("time_attr", &LoaderOptions::time_attr,
             "Temporal sampling (PyG's time_attr): \"\" off, \"node_time\" or \"edge_time\": only neighbours "
             "(by node or edge time) no later than their seed's time (input_time, else its node time); disjoint "
             "trees, CPU neighbour sampling.")
      .field(
          "temporal_strategy",
          [](const LoaderOptions& o) { return std::string(sample::temporal_strategy_name(o.temporal_strategy)); },
          [](LoaderOptions& o, const std::string& name) { o.temporal_strategy = sample::parse_temporal_strategy(name); },
          "With time_attr: uniform (uniform among the eligible neighbours) or last (the most recent).")
      .field("batch_size", &LoaderOptions::batch_size, "Seeds per minibatch.")
      .field("shuffle", &LoaderOptions::shuffle, "Shuffle the ids every epoch (False: in the given order).")
      .field("drop_last", &LoaderOptions::drop_last, "Drop the last batch when it is smaller than batch_size.")
      .field("batch_offset", &LoaderOptions::batch_offset,
             "Striding: a pass delivers batches batch_offset, batch_offset + batch_stride, ... (rank K of P: offset K).")
      .field("batch_stride", &LoaderOptions::batch_stride, "Striding step (rank K of P: stride P); each batch as without striding.")
      .field("seed", &LoaderOptions::seed, "Seed of the sample streams and the shuffle (and of random cache eviction).")
      .field("window", &LoaderOptions::window,
             "Minibatches sampled ahead and announced to the caches (0: no announcing).")
      .field("accumulate", &LoaderOptions::accumulate,
             "Merge the storage reads of waiting minibatches up to the store's queue depth (False: one gather per batch).")
      .field("max_merge", &LoaderOptions::max_merge, "The most minibatches one merged gather serves.")
      .field("prefetch", &LoaderOptions::prefetch, "Ready minibatches queued ahead of training.")
      .field("sample_threads", &LoaderOptions::sample_threads,
             "Sampling threads, also the gather threads of a store the loader makes (0: all cores, or the engine's share "
             "of graphtier.divide_threads(); 4 with gpu_sampling).")
      .field(
          "output", [](const LoaderOptions& o) { return std::string(memory_name(o.output)); },
          [](LoaderOptions& o, const std::string& text) { o.output = parse_output(text); },
          "Where x is gathered to: host, pinned or device (set by the loader from its device).")
      .field("device", &LoaderOptions::device, "CUDA device of the output and of GPU sampling (set by the loader).")
      .field("bulk", &LoaderOptions::bulk,
             "k >= 1: sample k minibatches per call with the bulk matrix samplers (neighbor, ladies); 0: one at a time.")
      .field("gpu_sampling", &LoaderOptions::gpu_sampling, "Sample on the GPU (CUDA builds).")
      .field("device_batches", &LoaderOptions::device_batches,
             "With gpu_sampling: deliver the blocks in device memory (set by the loader for a CUDA device).")
      .field(
          "topology", [](const LoaderOptions& o) { return std::string(topology_name(o.topology.placement)); },
          [](LoaderOptions& o, const std::string& text) { o.topology.placement = parse_topology(text); },
          "Where GPU neighbour sampling reads the topology: device, pinned or cached.")
      .field(
          "topology_cache_bytes", [](const LoaderOptions& o) { return o.topology.cache_bytes; },
          [](LoaderOptions& o, int64_t bytes) { o.topology.cache_bytes = bytes; },
          "topology='cached': device bytes for the hot prefix's neighbour lists.")
      .field(
          "ids_numbering",
          [](const LoaderOptions& o) -> std::optional<std::string> {
            if (!o.ids_numbering) return std::nullopt;
            return std::string(graph::numbering_name(*o.ids_numbering));
          },
          [](LoaderOptions& o, const std::optional<std::string>& text) {
            o.ids_numbering = text ? std::optional(graph::parse_numbering(*text)) : std::nullopt;
          },
          "The numbering the loader's ids are given in: prepared (the dataset's own, as its splits) or original "
          "(the converted input's, e.g. a PyG mask; mapped by Dataset.from_original). None: the dataset's own "
          "where it was never renumbered; a renumbered dataset (Dataset.prepared) refuses ids without it. "
          "Batches are in the dataset's own numbering either way.")
      .finish();
}

void bind_store_options(nb::module_& m) {
  using feature::FeatureStoreOptions;
  const auto budget = [](Budget feature::FeatureBudgets::*member) {
    return std::pair([member](const FeatureStoreOptions& o) { return o.budgets.*member; },
                     [member](FeatureStoreOptions& o, nb::handle b) { o.budgets.*member = to_budget(b); });
  };
  const auto [gpu_hot_get, gpu_hot_set] = budget(&feature::FeatureBudgets::gpu_hot);
  const auto [gpu_cache_get, gpu_cache_set] = budget(&feature::FeatureBudgets::gpu_cache);
  const auto [cpu_get, cpu_set] = budget(&feature::FeatureBudgets::cpu_buffer);
  const auto [host_cache_get, host_cache_set] = budget(&feature::FeatureBudgets::host_cache);
  OptionClass<FeatureStoreOptions>(m, "FeatureStoreOptions",
                                   "The tiers of a feature store (graphtier/feature/feature_store.hpp): budgets "
                                   "in bytes or a percent of the table, larger ones clamped, 0 disabling the tier.",
                                   // In Python the whole table is in host memory unless said otherwise (the
                                   // C++ default, 0, reads every row from storage).
                                   [](FeatureStoreOptions& o) { o.budgets.cpu_buffer = Budget::percent(100); })
      .field("gpu_hot", gpu_hot_get, gpu_hot_set, "Static GPU tier: the hottest rows, on the GPU.")
      .field("gpu_cache", gpu_cache_get, gpu_cache_set, "GPU software cache of the rows below the GPU tier.")
      .field("cpu_buffer", cpu_get, cpu_set, "Static host (pinned) tier: the next hottest rows; the rest is read from storage (default 100%).")
      .field("host_cache", host_cache_get, host_cache_set, "Host cache of storage rows.")
      .field("io_depth", &FeatureStoreOptions::io_depth, "Storage reads in flight (0: calibrated).")
      .field(
          "pinned_path", [](const FeatureStoreOptions& o) { return std::string(pinned_path_name(o.pinned_path)); },
          [](FeatureStoreOptions& o, const std::string& text) { o.pinned_path = parse_pinned_path(text); },
          "How the GPU reads the pinned tier: measured, zero-copy or cpu-copy.")
      .field("seed", &FeatureStoreOptions::seed, "Seed of random cache eviction.")
      .field("device", &FeatureStoreOptions::device, "CUDA device of the GPU tiers (set by a loader from its device).")
      .finish();
}

}  // namespace

void bind_options(nb::module_& m) {
  bind_budget(m);
  bind_loader_options(m);
  bind_store_options(m);
}

}  // namespace graphtier::python
