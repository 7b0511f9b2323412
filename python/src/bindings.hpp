// The handles the extension exposes and the functions that bind them, one file per class.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <string>

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/feature/feature_store.hpp"
#include "graphtier/feature/typed_feature_store.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/sample/hetero_block.hpp"
#include "graphtier/sample/minibatch.hpp"

namespace graphtier::python {

namespace nb = nanobind;

/// graphtier.Dataset: an opened dataset, shared with the arrays viewing its memory maps.
struct DatasetHandle {
  explicit DatasetHandle(const std::string& path);
  std::shared_ptr<graph::Dataset> dataset;
};

/// graphtier.FeatureStore: a store and the pool that serves its gathers.
struct FeatureStoreHandle {
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<feature::FeatureStore> store;
  int device = 0;  // CUDA device of the GPU tiers
};

/// graphtier.TypedFeatureStore: a typed dataset's per-type tables and the pool that serves their gathers.
struct TypedFeatureStoreHandle {
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<feature::TypedFeatureStore> store;
};

/// "host", "pinned" or "device": where gathered features are written.
inline MemoryKind parse_output(const std::string& text) {
  if (text == "host") return MemoryKind::kHost;
  if (text == "pinned") return MemoryKind::kPinned;
  if (text == "device") return MemoryKind::kDevice;
  throw InvalidArgument("unknown output memory '" + text + "' (expected host, pinned or device)");
}

void bind_options(nb::module_& m);
void bind_feature_store(nb::module_& m);
void bind_loader(nb::module_& m);
void bind_convert(nb::module_& m);
void bind_partition(nb::module_& m);
void bind_sampling(nb::module_& m);
void bind_link(nb::module_& m);
void bind_graph_store(nb::module_& m);

/// A minibatch layer as python/graphtier/loader.py's Block.from_dict reads it: {"num_dst",
/// "src_nodes", "indptr", "indices", "edge_ids", "weights", "edge_types"} (edge_ids and weights
/// None when the sampler keeps none, edge_types None unless the graph is typed). The one place the
/// keys are written: the caller makes the tensors (host views, or device views of a DeviceBlock).
nb::dict block_dict(int64_t num_dst, nb::object src_nodes, nb::object indptr, nb::object indices, nb::object edge_ids,
                    nb::object weights, nb::object edge_types = nb::none());
/// A host Block's dict, its tensors viewing `b`'s memory, which `owner` keeps alive.
nb::dict block_dict(const sample::Block& b, nb::handle owner);

/// A typed graph's block by node type and relation (sample/hetero_block.hpp) as
/// python/graphtier/loader.py's TypedBlock.from_dict reads it: {"num_dst": [T] ints, "src_nodes": [T]
/// tensors, "relations": [R] dicts of "indptr", "indices", "block_edges"}, viewing `b`'s memory,
/// which `owner` keeps alive. The one place the keys are written.
nb::dict hetero_block_dict(const sample::HeteroBlock& b, nb::handle owner);

/// {"rows", "seconds", "gpu_hot": {"rows", "bytes", "seconds"}, ..., "io": {...}}
nb::dict gather_stats_dict(const feature::GatherStats& s);

/// Raises `type` with the message `what`, its bytes that are not UTF-8 as \xNN escapes.
void set_error(PyObject* type, const char* what);

/// "train", "valid" (or "val"), "test"; throws InvalidArgument naming the choices otherwise.
graph::Split parse_split(const std::string& name);

}  // namespace graphtier::python
