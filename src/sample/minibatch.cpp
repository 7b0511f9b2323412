#include "graphtier/sample/minibatch.hpp"

#include <nlohmann/json.hpp>

#include "graphtier/core/error.hpp"
#include "cpu/compact_cpu.hpp"
#include "hetero_steps.hpp"

#if GRAPHTIER_WITH_CUDA
#include "cuda/neighbor_sampler_cuda.hpp"
#endif

namespace graphtier::sample {

int64_t MiniBatch::num_edges() const noexcept {
  int64_t total = 0;
  for (const Block& b : blocks) total += b.num_edges();
  return total;
}

namespace {

void check_block(const Block& b, std::span<const int64_t> expected_dst, std::span<const int64_t> expected_trees,
                 std::size_t l, int64_t num_nodes, int64_t num_edges) {
  GRAPHTIER_EXPECTS(b.num_dst == static_cast<int64_t>(expected_dst.size()), InvalidArgument, "block ", l, ": ",
                    b.num_dst, " dst nodes, expected ", expected_dst.size(), " (the previous layer's src nodes)");
  GRAPHTIER_EXPECTS(b.num_src() >= b.num_dst, InvalidArgument, "block ", l, ": fewer src than dst nodes");
  for (int64_t i = 0; i < b.num_dst; ++i) {
    GRAPHTIER_EXPECTS(b.src_nodes[i] == expected_dst[i], InvalidArgument, "block ", l, ": dst node ", i, " is ",
                      b.src_nodes[i], ", expected ", expected_dst[i]);
  }
  const bool trees = !b.src_trees.empty();
  GRAPHTIER_EXPECTS(trees == !expected_trees.empty(), InvalidArgument, "block ", l,
                    ": src_trees must be given in every block of a temporal batch or in none");
  GRAPHTIER_EXPECTS(!trees || b.src_trees.size() == b.src_nodes.size(), InvalidArgument, "block ", l, ": ",
                    b.src_trees.size(), " src_trees for ", b.src_nodes.size(), " src nodes");
  for (int64_t i = 0; trees && i < b.num_dst; ++i) {
    GRAPHTIER_EXPECTS(b.src_trees[i] == expected_trees[i], InvalidArgument, "block ", l, ": dst node ", i,
                      " is in tree ", b.src_trees[i], ", expected ", expected_trees[i]);
  }
  cpu::IdMap seen(b.num_src());
  for (int64_t i = 0; i < b.num_src(); ++i) {
    const int64_t v = b.src_nodes[i];
    GRAPHTIER_EXPECTS(v >= 0 && v < num_nodes, InvalidArgument, "block ", l, ": src node ", v, " outside [0, ", num_nodes, ")");
    const int64_t tree = trees ? b.src_trees[i] : 0;
    GRAPHTIER_EXPECTS(tree >= 0 && tree < (int64_t{1} << 23), InvalidArgument, "block ", l, ": tree ", tree,
                      " of src node ", i, " outside [0, 2^23)");
    GRAPHTIER_EXPECTS(seen.find_or_insert((tree << 40) | v, i) == i, InvalidArgument, "block ", l, ": node ", v,
                      trees ? " appears twice in one tree" : " appears twice");
  }
  GRAPHTIER_EXPECTS(static_cast<int64_t>(b.indptr.size()) == b.num_dst + 1 && b.indptr.front() == 0, InvalidArgument,
                    "block ", l, ": indptr must have num_dst + 1 entries starting at 0");
  for (int64_t i = 0; i < b.num_dst; ++i) {
    GRAPHTIER_EXPECTS(b.indptr[i] <= b.indptr[i + 1], InvalidArgument, "block ", l, ": indptr decreases at ", i);
  }
  GRAPHTIER_EXPECTS(static_cast<int64_t>(b.indices.size()) == b.num_edges(), InvalidArgument, "block ", l, ": ",
                    b.indices.size(), " indices, indptr says ", b.num_edges());
  // New nodes appear in order of first appearance: the k-th new node is first seen after the
  // (k-1)-th.
  int64_t next_new = b.num_dst;
  for (std::size_t e = 0; e < b.indices.size(); ++e) {
    const int64_t u = b.indices[e];
    GRAPHTIER_EXPECTS(u >= 0 && u < b.num_src(), InvalidArgument, "block ", l, ": index ", u, " outside [0, ", b.num_src(), ")");
    GRAPHTIER_EXPECTS(u <= next_new, InvalidArgument, "block ", l, ": src node ", u,
                      " is used before the new nodes that precede it");
    if (u == next_new) ++next_new;
  }
  GRAPHTIER_EXPECTS(next_new == b.num_src(), InvalidArgument, "block ", l, ": ", b.num_src() - next_new,
                    " src nodes are not reached by any edge");
  for (int64_t i = 0; trees && i < b.num_dst; ++i) {
    for (int64_t e = b.indptr[i]; e < b.indptr[i + 1]; ++e) {
      GRAPHTIER_EXPECTS(b.src_trees[b.indices[e]] == b.src_trees[i], InvalidArgument, "block ", l, ": edge ", e,
                        " joins tree ", b.src_trees[b.indices[e]], " to tree ", b.src_trees[i]);
    }
  }
  if (!b.edge_ids.empty()) {
    GRAPHTIER_EXPECTS(b.edge_ids.size() == b.indices.size(), InvalidArgument, "block ", l, ": edge_ids and indices differ in length");
    for (int64_t e : b.edge_ids) {
      GRAPHTIER_EXPECTS(e >= 0 && e < num_edges, InvalidArgument, "block ", l, ": edge id ", e, " outside [0, ", num_edges, ")");
    }
  }
  GRAPHTIER_EXPECTS(b.weights.empty() || b.weights.size() == b.indices.size(), InvalidArgument, "block ", l,
                    ": weights and indices differ in length");
  GRAPHTIER_EXPECTS(b.edge_types.empty() || b.edge_types.size() == b.indices.size(), InvalidArgument, "block ", l,
                    ": edge_types and indices differ in length");
}

void check_typed_block(const Block& b, std::size_t l, const graph::HeteroView& hetero) {
  GRAPHTIER_EXPECTS(static_cast<int64_t>(b.edge_types.size()) == b.num_edges(), InvalidArgument, "block ", l,
                    ": a typed graph's block needs one edge type per edge, has ", b.edge_types.size(), " for ",
                    b.num_edges());
  const int types = hetero.num_node_types();
  const auto type_of = [&](int64_t v) { return typed::node_type_of(hetero.node_type_offset.data(), types, v); };
  for (int64_t i = 0; i < b.num_dst; ++i) {
    const int dst_type = type_of(b.src_nodes[i]);
    for (int64_t e = b.indptr[i]; e < b.indptr[i + 1]; ++e) {
      const int r = b.edge_types[e];
      GRAPHTIER_EXPECTS(r < hetero.num_relations(), InvalidArgument, "block ", l, ": edge ", e, " has relation ", r,
                        " of ", hetero.num_relations());
      GRAPHTIER_EXPECTS(e == b.indptr[i] || b.edge_types[e - 1] <= r, InvalidArgument, "block ", l, ": dst node ",
                        i, "'s relations do not ascend at edge ", e);
      const graph::RelationTypes rel = hetero.relations[r];
      const int src_type = type_of(b.src_nodes[b.indices[e]]);
      GRAPHTIER_EXPECTS(rel.dst_type == dst_type && rel.src_type == src_type, InvalidArgument, "block ", l, ": edge ",
                        e, " of relation ", r, " (type ", rel.src_type, " -> ", rel.dst_type, ") goes from a node of type ",
                        src_type, " to one of type ", dst_type);
      if (!b.edge_ids.empty()) {
        GRAPHTIER_EXPECTS(hetero.type_per_edge[b.edge_ids[e]] == r, InvalidArgument, "block ", l, ": edge ", e,
                          " has relation ", r, ", the graph's edge ", b.edge_ids[e], " relation ",
                          static_cast<int>(hetero.type_per_edge[b.edge_ids[e]]));
      }
    }
  }
}

}  // namespace

void check_minibatch(const MiniBatch& batch, int64_t num_graph_nodes, int64_t num_graph_edges) {
  std::span<const int64_t> dst = batch.seeds;
  // A temporal batch: seed i roots tree i.
  std::vector<int64_t> seed_trees;
  if (!batch.blocks.empty() && !batch.blocks.front().src_trees.empty()) {
    for (std::size_t i = 0; i < batch.seeds.size(); ++i) seed_trees.push_back(static_cast<int64_t>(i));
  }
  std::span<const int64_t> trees = seed_trees;
  for (std::size_t l = 0; l < batch.blocks.size(); ++l) {
    check_block(batch.blocks[l], dst, trees, l, num_graph_nodes, num_graph_edges);
    dst = batch.blocks[l].src_nodes;
    trees = batch.blocks[l].src_trees;
  }
}

void check_minibatch(const MiniBatch& batch, int64_t num_graph_nodes, int64_t num_graph_edges,
                     const graph::HeteroView& hetero) {
  check_minibatch(batch, num_graph_nodes, num_graph_edges);
  if (hetero.empty()) return;
  for (std::size_t l = 0; l < batch.blocks.size(); ++l) check_typed_block(batch.blocks[l], l, hetero);
}

std::string minibatch_to_json(const MiniBatch& batch) {
  nlohmann::json out;
  out["seeds"] = batch.seeds;
  const std::span<const int64_t> input = batch.input_nodes();
  out["input_nodes"] = std::vector<int64_t>(input.begin(), input.end());
  out["blocks"] = nlohmann::json::array();
  for (const Block& b : batch.blocks) {
    nlohmann::json j;
    j["num_dst"] = b.num_dst;
    j["src_nodes"] = b.src_nodes;
    j["indptr"] = b.indptr;
    j["indices"] = b.indices;
    if (!b.edge_ids.empty()) j["edge_ids"] = b.edge_ids;
    if (!b.weights.empty()) j["weights"] = b.weights;
    if (!b.edge_types.empty()) j["edge_types"] = b.edge_types;
    if (!b.src_trees.empty()) j["src_trees"] = b.src_trees;
    out["blocks"].push_back(std::move(j));
  }
  return out.dump();
}

MiniBatch DeviceMiniBatch::to_host() const {
  MiniBatch out;
  out.seeds = seeds;
  out.blocks.reserve(blocks.size());
#if GRAPHTIER_WITH_CUDA
  for (const DeviceBlock& d : blocks) {
    Block& b = out.blocks.emplace_back();
    b.num_dst = d.num_dst;
    b.src_nodes.resize(static_cast<std::size_t>(d.num_src));
    b.indptr.resize(static_cast<std::size_t>(d.num_dst + 1));
    b.indices.resize(static_cast<std::size_t>(d.num_edges));
    cuda::copy_to_host(b.src_nodes.data(), d.src_nodes, d.num_src, stream, device);
    cuda::copy_to_host(b.indptr.data(), d.indptr, d.num_dst + 1, stream, device);
    cuda::copy_to_host(b.indices.data(), d.indices, d.num_edges, stream, device);
    if (d.edge_ids != nullptr) {
      b.edge_ids.resize(static_cast<std::size_t>(d.num_edges));
      cuda::copy_to_host(b.edge_ids.data(), d.edge_ids, d.num_edges, stream, device);
    }
    if (d.weights != nullptr) {
      b.weights.resize(static_cast<std::size_t>(d.num_edges));
      cuda::copy_to_host(b.weights.data(), d.weights, d.num_edges, stream, device);
    }
    if (d.edge_types != nullptr) {
      b.edge_types.resize(static_cast<std::size_t>(d.num_edges));
      cuda::copy_to_host(b.edge_types.data(), d.edge_types, d.num_edges, stream, device);
    }
    if (d.src_trees != nullptr) {
      b.src_trees.resize(static_cast<std::size_t>(d.num_src));
      cuda::copy_to_host(b.src_trees.data(), d.src_trees, d.num_src, stream, device);
    }
  }
  cuda::synchronize(stream, device);
#else
  GRAPHTIER_EXPECTS(blocks.empty(), Unsupported, "DeviceMiniBatch: graphtier was built without CUDA");
#endif
  return out;
}

}  // namespace graphtier::sample
