// Sampling by pieces, for the distributed sampler (python/graphtier/distributed): the method table,
// the epoch order, the single-process samplers one minibatch at a time (make_sampler, as the
// loader), and one layer on fetched neighbour rows
// (graphtier/sample/row_sampling.hpp), one batch at a time or k at once with the bulk matrix
// samplers. Blocks come back as the loader's block dicts.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "arrays.hpp"
#include "bindings.hpp"
#include "graphtier/sample/epoch.hpp"
#include "graphtier/sample/random.hpp"
#include "graphtier/sample/row_sampling.hpp"
#include "graphtier/sample/sampler.hpp"

namespace graphtier::python {
namespace {

template <typename T>
TorchArray owned_tensor(std::vector<T>&& values) {
  auto owned = std::make_shared<std::vector<T>>(std::move(values));
  const nb::capsule owner = owner_capsule(owned);
  return torch_view(std::span<const T>(*owned), owner);
}

nb::dict owned_block_dict(sample::Block&& block) {
  auto owned = std::make_shared<const sample::Block>(std::move(block));
  return block_dict(*owned, owner_capsule(owned));
}

sample::NeighborRows to_rows(const IdArray& nodes, const IdArray& indptr, const IdArray& indices,
                             const IdArray& first_edge) {
  return {to_vector(nodes), to_vector(indptr), to_vector(indices), to_vector(first_edge)};
}

}  // namespace

nb::dict block_dict(int64_t num_dst, nb::object src_nodes, nb::object indptr, nb::object indices, nb::object edge_ids,
                    nb::object weights) {
  nb::dict d;
  d["num_dst"] = num_dst;
  d["src_nodes"] = std::move(src_nodes);
  d["indptr"] = std::move(indptr);
  d["indices"] = std::move(indices);
  d["edge_ids"] = std::move(edge_ids);
  d["weights"] = std::move(weights);
  return d;
}

nb::dict block_dict(const sample::Block& b, nb::handle owner) {
  const auto view = [&](const auto& values) {
    return values.empty() ? nb::none() : nb::cast(torch_view(std::span(values), owner));
  };
  return block_dict(b.num_dst, nb::cast(torch_view(std::span<const int64_t>(b.src_nodes), owner)),
                    nb::cast(torch_view(std::span<const int64_t>(b.indptr), owner)),
                    nb::cast(torch_view(std::span<const int64_t>(b.indices), owner)), view(b.edge_ids), view(b.weights));
}

void bind_sampling(nb::module_& m) {
  m.def(
      "sampler_methods",
      [] {
        nb::dict out;
        for (const sample::SamplerMethod& method : sample::sampler_methods()) {
          nb::dict d;
          d["replace"] = method.replace;
          d["bulk"] = method.bulk;
          d["rows"] = method.rows;
          out[nb::str(method.name.data(), method.name.size())] = d;
        }
        return out;
      },
      "{name: {\"replace\", \"bulk\", \"rows\"}} for every sampling method, in the engine's order: "
      "whether it draws with replacement on request, has a bulk matrix sampler, and draws a layer from "
      "fetched neighbour rows (the distributed sampler's methods).");
  m.def(
      "shuffled_ids",
      [](const IdArray& ids, uint64_t seed, uint64_t epoch) {
        return owned_tensor(sample::shuffled_ids(to_vector(ids), seed, epoch));
      },
      nb::arg("ids").noconvert(), nb::arg("seed"), nb::arg("epoch"));
  m.def("minibatch_stream", &sample::minibatch_stream, nb::arg("epoch"), nb::arg("batch"));
  m.def(
      "sample_minibatch",
      [](const DatasetHandle& dataset, const std::string& method, const IdArray& seeds, std::vector<int64_t> fanouts,
         bool replace, uint64_t seed, uint64_t stream) {
        const sample::SampleGraph graph{graph::CscView::of(*dataset.dataset), {}};
        const std::vector<int64_t> s = to_vector(seeds);
        auto batch = std::make_shared<sample::MiniBatch>();
        sample::SamplerSpec spec;
        spec.kind = sample::sampler_method(method).kind;
        spec.fanouts = std::move(fanouts);
        spec.replace = replace;
        spec.seed = seed;
        {
          nb::gil_scoped_release release;
          *batch = sample::make_sampler(spec, graph)->sample(s, stream);
        }
        const nb::capsule owner = owner_capsule(batch);
        nb::dict d;
        d["seeds"] = torch_view(std::span<const int64_t>(batch->seeds), owner);
        d["input_nodes"] = torch_view(batch->input_nodes(), owner);
        nb::list blocks;
        for (const sample::Block& b : batch->blocks) {
          blocks.append(block_dict(b, owner));
        }
        d["blocks"] = blocks;
        return d;
      },
      nb::arg("dataset"), nb::arg("method"), nb::arg("seeds").noconvert(), nb::arg("fanouts"), nb::arg("replace"),
      nb::arg("seed"), nb::arg("stream"));
  m.def(
      "extract_rows",
      [](const DatasetHandle& dataset, const IdArray& nodes, int64_t edge_offset) {
        sample::NeighborRows rows;
        {
          const std::vector<int64_t> n = to_vector(nodes);
          nb::gil_scoped_release release;
          rows = sample::extract_rows(graph::CscView::of(*dataset.dataset), n, edge_offset);
        }
        return nb::make_tuple(owned_tensor(std::move(rows.indptr)), owned_tensor(std::move(rows.indices)),
                              owned_tensor(std::move(rows.first_edge)));
      },
      nb::arg("dataset"), nb::arg("nodes").noconvert(), nb::arg("edge_offset"));
  m.def(
      "sample_neighbor_layer",
      [](const IdArray& nodes, const IdArray& indptr, const IdArray& indices, const IdArray& first_edge,
         const IdArray& dst, int64_t fanout, bool replace, uint64_t seed, uint64_t stream, int layer) {
        const sample::NeighborRows rows = to_rows(nodes, indptr, indices, first_edge);
        const std::vector<int64_t> d = to_vector(dst);
        sample::Block block;
        {
          nb::gil_scoped_release release;
          block = sample::sample_neighbor_layer(rows, d, fanout, replace, /*edge_ids=*/true, seed,
                                                sample::layer_stream(stream, layer));
        }
        return owned_block_dict(std::move(block));
      },
      nb::arg("nodes").noconvert(), nb::arg("indptr").noconvert(), nb::arg("indices").noconvert(),
      nb::arg("first_edge").noconvert(), nb::arg("dst").noconvert(), nb::arg("fanout"), nb::arg("replace"),
      nb::arg("seed"), nb::arg("stream"), nb::arg("layer"));
  m.def(
      "sample_ladies_layer",
      [](const IdArray& nodes, const IdArray& indptr, const IdArray& indices, const IdArray& first_edge,
         const IdArray& dst, int64_t layer_size, uint64_t seed, uint64_t stream, int layer) {
        const sample::NeighborRows rows = to_rows(nodes, indptr, indices, first_edge);
        const std::vector<int64_t> d = to_vector(dst);
        sample::Block block;
        {
          nb::gil_scoped_release release;
          block = sample::sample_ladies_layer(rows, d, layer_size, seed, sample::layer_stream(stream, layer));
        }
        return owned_block_dict(std::move(block));
      },
      nb::arg("nodes").noconvert(), nb::arg("indptr").noconvert(), nb::arg("indices").noconvert(),
      nb::arg("first_edge").noconvert(), nb::arg("dst").noconvert(), nb::arg("layer_size"), nb::arg("seed"),
      nb::arg("stream"), nb::arg("layer"));
  m.def(
      "sample_bulk_layer",
      [](const IdArray& nodes, const IdArray& indptr, const IdArray& indices, const IdArray& first_edge,
         const std::vector<IdArray>& dsts, const std::vector<uint64_t>& streams, const std::string& method,
         std::vector<int64_t> fanouts, bool replace, uint64_t seed, int layer) {
        const sample::NeighborRows rows = to_rows(nodes, indptr, indices, first_edge);
        std::vector<std::vector<int64_t>> d;
        for (const IdArray& dst : dsts) d.push_back(to_vector(dst));
        sample::SamplerSpec spec;
        spec.kind = sample::sampler_method(method).kind;
        spec.fanouts = std::move(fanouts);
        spec.replace = replace;
        spec.seed = seed;
        const sample::BulkSamplerOptions o = sample::bulk_options(spec);
        std::vector<sample::Block> blocks;
        {
          nb::gil_scoped_release release;
          const std::vector<std::span<const int64_t>> spans(d.begin(), d.end());
          blocks = sample::sample_bulk_layer(rows, spans, streams, o, layer);
        }
        nb::list out;
        for (sample::Block& block : blocks) out.append(owned_block_dict(std::move(block)));
        return out;
      },
      nb::arg("nodes").noconvert(), nb::arg("indptr").noconvert(), nb::arg("indices").noconvert(),
      nb::arg("first_edge").noconvert(), nb::arg("dsts"), nb::arg("streams"), nb::arg("method"), nb::arg("fanouts"),
      nb::arg("replace"), nb::arg("seed"), nb::arg("layer"));
}

}  // namespace graphtier::python
