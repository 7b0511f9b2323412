// Sampling by pieces, for the distributed sampler (python/graphtier/distributed): the method table,
// the epoch order, the single-process samplers one minibatch at a time (make_sampler, as the
// loader), and one layer on fetched neighbour rows
// (graphtier/sample/row_sampling.hpp), one batch at a time or k at once with the bulk matrix
// samplers. Blocks come back as the loader's block dicts.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <optional>

#include "arrays.hpp"
#include "bindings.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/sample/epoch.hpp"
#include "graphtier/sample/hetero_block.hpp"
#include "graphtier/sample/random.hpp"
#include "graphtier/sample/row_sampling.hpp"
#include "graphtier/sample/row_wire.hpp"
#include "graphtier/sample/sampler.hpp"
#include "graphtier/sample/temporal.hpp"

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

using TypeArray = nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using RelationList = std::vector<std::pair<int32_t, int32_t>>;

/// A typed graph's types as the arguments give them (node_type_offset int64 [T + 1], relations
/// [(src_type, dst_type)] * R, type_per_edge uint8 [E]), owned for the call; all three or none.
struct TypedArgs {
  std::vector<int64_t> node_type_offset;
  std::vector<graph::RelationTypes> relations;
  std::span<const uint8_t> type_per_edge;

  TypedArgs(const std::optional<IdArray>& offsets, const std::optional<RelationList>& rels,
            const std::optional<TypeArray>& types) {
    GRAPHTIER_EXPECTS(offsets.has_value() == rels.has_value() && rels.has_value() == types.has_value(),
                      InvalidArgument, "a typed graph needs node_type_offset, relations and type_per_edge together");
    if (!offsets) return;
    node_type_offset = to_vector(*offsets);
    for (const auto& [src, dst] : *rels) relations.push_back({src, dst});
    type_per_edge = {types->data(), types->shape(0)};
  }
  graph::HeteroView view() const { return {node_type_offset, relations, type_per_edge}; }
};

/// {relation id: per-hop fanouts} as NeighborSamplerOptions::relation_fanouts: one list per
/// relation, empty for those the dict leaves out (they take the fanouts).
std::vector<std::vector<int64_t>> relation_fanout_lists(const std::map<int64_t, std::vector<int64_t>>& by_relation,
                                                        std::size_t num_relations) {
  if (by_relation.empty()) return {};
  GRAPHTIER_EXPECTS(num_relations > 0, InvalidArgument,
                    "relation_fanouts: the graph has no relations (no node and edge types); use fanouts");
  std::vector<std::vector<int64_t>> lists(num_relations);
  for (const auto& [r, fanouts] : by_relation) {
    GRAPHTIER_EXPECTS(r >= 0 && static_cast<std::size_t>(r) < num_relations, InvalidArgument,
                      "relation_fanouts: unknown relation ", r, " (the graph has ", num_relations, " relations, 0 to ",
                      num_relations - 1, ")");
    GRAPHTIER_EXPECTS(!fanouts.empty(), InvalidArgument, "relation_fanouts[", r, "] is empty: give one fanout per hop");
    lists[static_cast<std::size_t>(r)] = fanouts;
  }
  return lists;
}

nb::dict owned_hetero_block_dict(sample::HeteroBlock&& split) {
  auto owned = std::make_shared<const sample::HeteroBlock>(std::move(split));
  return hetero_block_dict(*owned, owner_capsule(owned));
}

sample::NeighborRows to_rows(const IdArray& nodes, const IdArray& indptr, const IdArray& indices,
                             const IdArray& first_edge) {
  return {to_vector(nodes), to_vector(indptr), to_vector(indices), to_vector(first_edge)};
}

}  // namespace

nb::dict hetero_block_dict(const sample::HeteroBlock& b, nb::handle owner) {
  nb::list src_nodes;
  for (const auto& nodes : b.src_nodes) src_nodes.append(torch_view(std::span<const int64_t>(nodes), owner));
  nb::list relations;
  for (const sample::RelationBlock& rb : b.relations) {
    nb::dict r;
    r["indptr"] = torch_view(std::span<const int64_t>(rb.indptr), owner);
    r["indices"] = torch_view(std::span<const int64_t>(rb.indices), owner);
    r["block_edges"] = torch_view(std::span<const int64_t>(rb.block_edges), owner);
    relations.append(r);
  }
  nb::dict d;
  d["num_dst"] = b.num_dst;
  d["src_nodes"] = src_nodes;
  d["relations"] = relations;
  if (b.src_trees.empty()) {
    d["src_trees"] = nb::none();
  } else {  // temporal blocks: each src node's tree, per type
    nb::list trees;
    for (const auto& t : b.src_trees) trees.append(torch_view(std::span<const int64_t>(t), owner));
    d["src_trees"] = trees;
  }
  return d;
}

nb::dict block_dict(int64_t num_dst, nb::object src_nodes, nb::object indptr, nb::object indices, nb::object edge_ids,
                    nb::object weights, nb::object edge_types) {
  nb::dict d;
  d["num_dst"] = num_dst;
  d["src_nodes"] = std::move(src_nodes);
  d["indptr"] = std::move(indptr);
  d["indices"] = std::move(indices);
  d["edge_ids"] = std::move(edge_ids);
  d["weights"] = std::move(weights);
  d["edge_types"] = std::move(edge_types);
  return d;
}

nb::dict block_dict(const sample::Block& b, nb::handle owner) {
  const auto view = [&](const auto& values) {
    return values.empty() ? nb::none() : nb::cast(torch_view(std::span(values), owner));
  };
  nb::dict d = block_dict(b.num_dst, nb::cast(torch_view(std::span<const int64_t>(b.src_nodes), owner)),
                          nb::cast(torch_view(std::span<const int64_t>(b.indptr), owner)),
                          nb::cast(torch_view(std::span<const int64_t>(b.indices), owner)), view(b.edge_ids),
                          view(b.weights), view(b.edge_types));
  d["src_trees"] = view(b.src_trees);  // temporal batches: each src node's tree (seed index), else None
  return d;
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
      "temporal_names",
      [] {
        const auto names = [](const auto& list) {
          nb::list out;
          for (const std::string_view name : list) out.append(nb::str(name.data(), name.size()));
          return out;
        };
        nb::dict out;
        out["time_attrs"] = names(sample::kTimeAttrNames);
        out["strategies"] = names(sample::kTemporalStrategyNames);
        return out;
      },
      "{\"time_attrs\": [...], \"strategies\": [...]}: the values of PyG's time_attr and temporal_strategy the "
      "temporal samplers take (graphtier/sample/temporal.hpp), in the engine's order.");
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
         bool replace, uint64_t seed, uint64_t stream, const std::map<int64_t, std::vector<int64_t>>& relation_fanouts,
         const std::optional<IdArray>& node_type_offset, const std::optional<RelationList>& relations,
         const std::optional<TypeArray>& type_per_edge) {
        // The types handed in, or a typed dataset's own.
        const TypedArgs typed(node_type_offset, relations, type_per_edge);
        const graph::HeteroView view = node_type_offset ? typed.view() : dataset.dataset->hetero();
        const sample::SampleGraph graph{graph::CscView::of(*dataset.dataset), {}, view};
        const std::vector<int64_t> s = to_vector(seeds);
        auto batch = std::make_shared<sample::MiniBatch>();
        sample::SamplerSpec spec;
        spec.kind = sample::sampler_method(method).kind;
        spec.fanouts = std::move(fanouts);
        spec.relation_fanouts = relation_fanout_lists(relation_fanouts, view.relations.size());
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
      nb::arg("seed"), nb::arg("stream"), nb::kw_only(),
      nb::arg("relation_fanouts") = std::map<int64_t, std::vector<int64_t>>{}, nb::arg("node_type_offset") = nb::none(),
      nb::arg("relations") = nb::none(), nb::arg("type_per_edge") = nb::none(),
      "The minibatch of `seeds` as the loader samples it. A typed graph (a typed dataset's own types, or "
      "node_type_offset int64 [T + 1], relations [(src_type, dst_type)] * R, type_per_edge uint8 [E], sorted "
      "by relation within each column) is sampled per relation: relation_fanouts {relation id: fanout per hop} "
      "for those that do not take `fanouts`; its blocks carry edge_types.");
  m.def(
      "split_block",
      [](int64_t num_dst, const IdArray& src_nodes, const IdArray& indptr, const IdArray& indices,
         const TypeArray& edge_types, const IdArray& node_type_offset, const RelationList& relations) {
        sample::Block block;
        block.num_dst = num_dst;
        block.src_nodes = to_vector(src_nodes);
        block.indptr = to_vector(indptr);
        block.indices = to_vector(indices);
        block.edge_types.assign(edge_types.data(), edge_types.data() + edge_types.shape(0));
        std::vector<graph::RelationTypes> rels;
        for (const auto& [src, dst] : relations) rels.push_back({src, dst});
        const std::vector<int64_t> offsets = to_vector(node_type_offset);
        GRAPHTIER_EXPECTS(!offsets.empty() && num_dst >= 0 && num_dst <= block.num_src(), InvalidArgument,
                          "split_block: ", num_dst, " dst nodes of ", block.num_src(), " src nodes, or no node types");
        // The block's shape and ids (its dst nodes as the seeds), before split_block trusts them.
        sample::MiniBatch one;
        one.seeds.assign(block.src_nodes.begin(), block.src_nodes.begin() + num_dst);
        one.blocks.push_back(block);
        sample::check_minibatch(one, offsets.back(), INT64_MAX);
        sample::HeteroBlock split;
        {
          nb::gil_scoped_release release;
          split = sample::split_block(block, {offsets, rels, {}});
        }
        return owned_hetero_block_dict(std::move(split));
      },
      nb::arg("num_dst"), nb::arg("src_nodes").noconvert(), nb::arg("indptr").noconvert(),
      nb::arg("indices").noconvert(), nb::arg("edge_types").noconvert(), nb::arg("node_type_offset").noconvert(),
      nb::arg("relations"),
      "A typed graph's block split by node type and relation (graphtier/sample/hetero_block.hpp): "
      "{\"num_dst\": [T], \"src_nodes\": [T tensors of global ids, the type's dst nodes first], "
      "\"relations\": [R dicts of \"indptr\", \"indices\" (positions in the src type's list), "
      "\"block_edges\" (positions in the block)]}; every type and relation present, empty ones too.");
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
      "draw_rows",
      [](const DatasetHandle& dataset, const IdArray& nodes, const IdArray& segment_sizes, const IdArray& streams,
         int layer, int64_t fanout, bool replace, uint64_t seed, int64_t edge_offset, bool bulk) {
        const std::vector<int64_t> n = to_vector(nodes), sizes = to_vector(segment_sizes);
        std::vector<uint64_t> layer_streams;
        for (int64_t k = 0; k < static_cast<int64_t>(streams.shape(0)); ++k) {
          layer_streams.push_back(sample::layer_stream(static_cast<uint64_t>(streams(k)), layer));
        }
        sample::RowDraws draws;
        {
          nb::gil_scoped_release release;
          const auto draw = bulk ? sample::draw_bulk_rows : sample::draw_rows;
          draws = draw(graph::CscView::of(*dataset.dataset), edge_offset, n, sizes, layer_streams, fanout, replace, seed,
                       nullptr);
        }
        return nb::make_tuple(owned_tensor(std::move(draws.counts)), owned_tensor(std::move(draws.neighbors)),
                              owned_tensor(std::move(draws.edge_ids)));
      },
      nb::arg("dataset"), nb::arg("nodes").noconvert(), nb::arg("segment_sizes").noconvert(),
      nb::arg("streams").noconvert(), nb::arg("layer"), nb::arg("fanout"), nb::arg("replace"), nb::arg("seed"),
      nb::arg("edge_offset"), nb::kw_only(), nb::arg("bulk") = false,
      "GraphSAGE's layer drawn by the owner of the rows (graphtier/sample/row_sampling.hpp, draw_rows; with "
      "bulk=True draw_bulk_rows, the bulk matrix sampler's draws): segment s = the next segment_sizes[s] nodes, "
      "drawn from layer `layer` of minibatch stream streams[s] (its uint64 bits as int64). Returns (counts [n], "
      "neighbours, edge ids), int64.");
  m.def(
      "pack_ids",
      [](const IdArray& ids) {
        const std::vector<int64_t> v = to_vector(ids);
        return owned_tensor(sample::pack_ids(v));
      },
      nb::arg("ids").noconvert(),
      "Ids (a request to an owner) as they cross (graphtier/sample/row_wire.hpp): a uint8 tensor.");
  m.def(
      "unpack_ids", [](const ByteArray& message) { return owned_tensor(sample::unpack_ids({message.data(), message.shape(0)})); },
      nb::arg("message").noconvert(),
      "The int64 ids of a pack_ids message; ValueError naming the byte for a malformed message.");
  m.def(
      "pack_rows",
      [](const IdArray& indptr, const IdArray& indices, const IdArray& first_edge) {
        const sample::NeighborRows rows{{}, to_vector(indptr), to_vector(indices), to_vector(first_edge)};
        std::vector<uint8_t> message;
        {
          nb::gil_scoped_release release;
          message = sample::pack_rows(rows);
        }
        return owned_tensor(std::move(message));
      },
      nb::arg("indptr").noconvert(), nb::arg("indices").noconvert(), nb::arg("first_edge").noconvert(),
      "extract_rows' rows as they cross to the requester (graphtier/sample/row_wire.hpp): a uint8 tensor.");
  m.def(
      "unpack_rows",
      [](const ByteArray& message, const IdArray& nodes) {
        const std::vector<int64_t> n = to_vector(nodes);
        sample::NeighborRows rows;
        {
          nb::gil_scoped_release release;
          rows = sample::unpack_rows({message.data(), message.shape(0)}, n);
        }
        return nb::make_tuple(owned_tensor(std::move(rows.indptr)), owned_tensor(std::move(rows.indices)),
                              owned_tensor(std::move(rows.first_edge)));
      },
      nb::arg("message").noconvert(), nb::arg("nodes").noconvert(),
      "The rows of `nodes` (the ids asked for, in order) from a pack_rows message: (indptr, indices, first_edge), "
      "int64; ValueError naming the byte for a malformed message.");
  m.def(
      "pack_draws",
      [](const IdArray& counts, const IdArray& neighbors, const IdArray& edge_ids) {
        const sample::RowDraws draws{to_vector(counts), to_vector(neighbors), to_vector(edge_ids)};
        std::vector<uint8_t> message;
        {
          nb::gil_scoped_release release;
          message = sample::pack_draws(draws);
        }
        return owned_tensor(std::move(message));
      },
      nb::arg("counts").noconvert(), nb::arg("neighbors").noconvert(), nb::arg("edge_ids").noconvert(),
      "draw_rows' picks as they cross to the requester (graphtier/sample/row_wire.hpp): a uint8 tensor.");
  m.def(
      "unpack_draws",
      [](const ByteArray& message, int64_t requests) {
        sample::RowDraws draws;
        {
          nb::gil_scoped_release release;
          draws = sample::unpack_draws({message.data(), message.shape(0)}, requests);
        }
        return nb::make_tuple(owned_tensor(std::move(draws.counts)), owned_tensor(std::move(draws.neighbors)),
                              owned_tensor(std::move(draws.edge_ids)));
      },
      nb::arg("message").noconvert(), nb::arg("requests"),
      "The draws of `requests` requests from a pack_draws message: (counts, neighbours, edge ids), int64; "
      "ValueError naming the byte for a malformed message.");
  m.def(
      "neighbor_blocks_of_draws",
      [](const std::vector<IdArray>& dsts, const IdArray& request_nodes, const IdArray& request_batches,
         const IdArray& counts, const IdArray& neighbors, const IdArray& edge_ids) {
        std::vector<std::vector<int64_t>> d;
        for (const IdArray& dst : dsts) d.push_back(to_vector(dst));
        const std::vector<int64_t> nodes = to_vector(request_nodes), batches = to_vector(request_batches);
        const sample::RowDraws draws{to_vector(counts), to_vector(neighbors), to_vector(edge_ids)};
        std::vector<sample::Block> blocks;
        {
          nb::gil_scoped_release release;
          const std::vector<std::span<const int64_t>> spans(d.begin(), d.end());
          blocks = sample::neighbor_blocks_of_draws(spans, nodes, batches, draws, /*edge_ids=*/true);
        }
        nb::list out;
        for (sample::Block& block : blocks) out.append(owned_block_dict(std::move(block)));
        return out;
      },
      nb::arg("dsts"), nb::arg("request_nodes").noconvert(), nb::arg("request_batches").noconvert(),
      nb::arg("counts").noconvert(), nb::arg("neighbors").noconvert(), nb::arg("edge_ids").noconvert(),
      "The GraphSAGE blocks of k batches (dsts[b]: batch b's dst nodes) from the owners' draw_rows replies, "
      "request i being node request_nodes[i] of batch request_batches[i] (graphtier/sample/row_sampling.hpp).");
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
