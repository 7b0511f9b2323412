// Link prediction (python/graphtier/link.py): a dataset's seed edges (docs/format.md, Link
// splits) and one link minibatch at a time: negatives and seed numbering (draw_link_seeds), the
// neighbour sampler over the seeds, and seed-edge exclusion (graphtier/sample/link_batch.hpp).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/sample/link_batch.hpp"
#include "graphtier/sample/sampler.hpp"

namespace graphtier::python {
namespace {

/// One link minibatch, owned by the capsule its tensors view.
struct LinkMiniBatch {
  sample::LinkSeeds seeds;
  sample::MiniBatch batch;
};

}  // namespace

void bind_link(nb::module_& m) {
  m.def(
      "link_split",
      [](const DatasetHandle& d) -> nb::object {
        const auto& links = d.dataset->manifest().links;
        if (!links) return nb::none();
        nb::dict out;
        out["seed"] = links->seed;
        out["val"] = links->val;
        out["test"] = links->test;
        out["disjoint"] = links->disjoint;
        out["num_train"] = links->num_train;
        out["num_valid"] = links->num_valid;
        out["num_test"] = links->num_test;
        return out;
      },
      nb::arg("dataset"),
      "The dataset's link split (the manifest's \"links\": seed, val, test, disjoint, num_train, "
      "num_valid, num_test), or None.");
  m.def(
      "link_edges",
      [](nb::object dataset, const std::string& split) {
        const DatasetHandle& d = nb::cast<const DatasetHandle&>(dataset);
        GRAPHTIER_EXPECTS(d.dataset->has_link_split(), InvalidArgument, d.dataset->dir(),
                          " has no link split (make one with `graphtier split-links`)");
        // A view of the memory map, kept alive by the Dataset object.
        return torch_view(d.dataset->link_edges(parse_split(split)), dataset);
      },
      nb::arg("dataset"), nb::arg("split"),
      "Split `split`'s seed edges, flattened (src, dst) pairs (int64 [2 K], rows sorted), viewing the "
      "dataset's memory map.");
  m.def(
      "graph_edges",
      [](const DatasetHandle& d) {
        const graph::CscView csc = graph::CscView::of(*d.dataset);
        auto pairs = std::make_shared<std::vector<int64_t>>();
        {
          nb::gil_scoped_release release;
          pairs->reserve(static_cast<std::size_t>(2 * csc.num_edges()));
          std::visit(
              [&](auto indices) {
                for (int64_t v = 0; v < csc.num_nodes(); ++v) {
                  for (int64_t p = csc.indptr[v]; p < csc.indptr[v + 1]; ++p) {
                    pairs->push_back(static_cast<int64_t>(indices[static_cast<std::size_t>(p)]));
                    pairs->push_back(v);
                  }
                }
              },
              csc.indices);
        }
        return torch_view(std::span<const int64_t>(*pairs), owner_capsule(pairs));
      },
      nb::arg("dataset"),
      "Every edge of the dataset's graph as flattened (src, dst) pairs (int64 [2 E]), in CSC order.");
  m.def(
      "sample_link_minibatch",
      [](const DatasetHandle& dataset, const IdArray& pairs, std::vector<int64_t> fanouts, bool replace, uint64_t seed,
         uint64_t stream, const std::string& negatives, double amount, bool non_edges, bool exclude,
         const std::optional<IdArray>& known) {
        const graph::CscView csc = graph::CscView::of(*dataset.dataset);
        GRAPHTIER_EXPECTS(!dataset.dataset->is_hetero(), InvalidArgument,
                          "link minibatches sample homogeneous datasets only");
        sample::NegativeOptions o;
        o.mode = sample::parse_negative_mode(negatives);
        o.amount = amount;
        o.non_edges = non_edges;
        const std::vector<int64_t> p = to_vector(pairs);
        const std::vector<int64_t> k = known ? to_vector(*known) : std::vector<int64_t>{};
        sample::SamplerSpec spec;
        spec.fanouts = std::move(fanouts);
        spec.replace = replace;
        spec.seed = seed;
        auto out = std::make_shared<LinkMiniBatch>();
        {
          nb::gil_scoped_release release;
          out->seeds = sample::draw_link_seeds(p, csc.num_nodes(), o, seed, stream, &csc, k);
          out->batch = sample::make_sampler(spec, {csc, {}, {}})->sample(out->seeds.nodes, stream);
          if (exclude) out->batch = sample::exclude_seed_edges(out->batch, p, /*reverse=*/true);
        }
        const nb::capsule owner = owner_capsule(out);
        const auto view = [&](const std::vector<int64_t>& v) { return torch_view(std::span<const int64_t>(v), owner); };
        nb::dict d;
        d["seeds"] = view(out->batch.seeds);
        d["input_nodes"] = torch_view(out->batch.input_nodes(), owner);
        d["label_src"] = view(out->seeds.label_src);
        d["label_dst"] = view(out->seeds.label_dst);
        d["src_index"] = view(out->seeds.src_index);
        d["dst_pos_index"] = view(out->seeds.dst_pos_index);
        d["dst_neg_index"] = view(out->seeds.dst_neg_index);
        d["negatives"] = view(out->seeds.negatives);
        d["unverified"] = out->seeds.unverified;
        nb::list blocks;
        for (const sample::Block& b : out->batch.blocks) blocks.append(block_dict(b, owner));
        d["blocks"] = blocks;
        return d;
      },
      nb::arg("dataset"), nb::arg("pairs").noconvert(), nb::arg("fanouts"), nb::arg("replace"), nb::arg("seed"),
      nb::arg("stream"), nb::arg("negatives"), nb::arg("amount"), nb::arg("non_edges"), nb::arg("exclude"),
      nb::arg("known") = nb::none(),
      "The link minibatch of the supervision edges `pairs` (flattened (src, dst), int64 [2 P]) for "
      "minibatch `stream`: negatives (\"none\", \"binary\" or \"triplet\", `amount`; with `non_edges` "
      "redrawn while they are edges of the graph, of the batch or of `known`, a (src, dst)-sorted flattened "
      "list), the neighbour sampler's blocks over the distinct endpoints (`seeds`, ascending) and, with "
      "`exclude`, the blocks without the messages along the batch's positives and their reverses. "
      "{\"seeds\", \"input_nodes\", \"blocks\", \"label_src\", \"label_dst\" (binary: positives then "
      "negatives, positions in seeds), \"src_index\", \"dst_pos_index\", \"dst_neg_index\" (triplet), "
      "\"negatives\" (global ids), \"unverified\"}.");
}

}  // namespace graphtier::python
