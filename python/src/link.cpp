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
#include "graphtier/sample/temporal.hpp"

namespace graphtier::python {
namespace {

/// One link minibatch, owned by the capsule its tensors view.
struct LinkMiniBatch {
  sample::LinkSeeds seeds;
  sample::MiniBatch batch;
  std::vector<int64_t> seed_time;  // temporal batches: each seed's time
};

/// graphtier.LinkNeighborLoader's sampler: made once per loader (a temporal graph's time order is
/// O(E log degree) to build), with the loader's negative sampling, checked here for batches of up
/// to `batch_size` positives, so that a bad option is refused when the loader is made, not when a
/// worker thread draws its first batch.
class LinkSampler {
 public:
  LinkSampler(const DatasetHandle& dataset, std::vector<int64_t> fanouts, bool replace, uint64_t seed,
              const std::string& time_attr, const std::string& temporal_strategy, const std::string& negatives,
              double amount, bool non_edges, int64_t batch_size)
      : dataset_(dataset.dataset), seed_(seed), time_attr_(time_attr) {
    GRAPHTIER_EXPECTS(!dataset_->is_hetero(), InvalidArgument, "link minibatches sample homogeneous datasets only");
    negatives_.mode = sample::parse_negative_mode(negatives);
    negatives_.amount = amount;
    negatives_.non_edges = non_edges;
    sample::check_negative_options(negatives_, batch_size);
    sample::SamplerSpec spec;
    spec.fanouts = std::move(fanouts);
    spec.replace = replace;
    spec.seed = seed;
    spec.temporal_strategy = sample::parse_temporal_strategy(temporal_strategy);
    sample::SampleGraph graph{graph::CscView::of(*dataset_), {}, {}};
    if (!time_attr_.empty()) {
      nb::gil_scoped_release release;
      temporal_ = std::make_unique<sample::TemporalIndex>(sample::temporal_index(*dataset_, time_attr_));
      graph.temporal = temporal_.get();
    }
    sampler_ = sample::make_sampler(spec, graph);
  }

  nb::dict sample(const IdArray& pairs, uint64_t stream, bool exclude, const std::optional<IdArray>& known,
                  const std::optional<IdArray>& pair_time) const {
    const bool timed = temporal_ != nullptr;
    GRAPHTIER_EXPECTS(timed == pair_time.has_value(), InvalidArgument,
                      timed ? "a temporal link sampler needs the positives' times (edge_label_time)"
                            : "edge_label_time needs time_attr (\"node_time\" or \"edge_time\")");
    GRAPHTIER_EXPECTS(!(timed && exclude), InvalidArgument,
                      "temporal link minibatches exclude no seed edges (exclude_seed_edges=False): the trees "
                      "already see no edge later than their seed's time");
    const graph::CscView csc = graph::CscView::of(*dataset_);
    sample::NegativeOptions o = negatives_;
    const std::vector<int64_t> p = to_vector(pairs);
    const std::vector<int64_t> k = known ? to_vector(*known) : std::vector<int64_t>{};
    const std::vector<int64_t> t = pair_time ? to_vector(*pair_time) : std::vector<int64_t>{};
    GRAPHTIER_EXPECTS(t.size() * 2 == p.size() || !timed, InvalidArgument, "edge_label_time: ", t.size(),
                      " times for ", p.size() / 2, " edges (one per edge)");
    if (timed && time_attr_ == "node_time") {
      o.node_time = dataset_->node_time();
      o.pair_time = t;
    }
    auto out = std::make_shared<LinkMiniBatch>();
    {
      nb::gil_scoped_release release;
      out->seeds = sample::draw_link_seeds(p, csc.num_nodes(), o, seed_, stream, &csc, k);
      if (timed) {
        disjoint_layout(p, t, o.mode, *out);
        out->batch = sampler_->sample_temporal(out->seeds.nodes, out->seed_time, stream);
      } else {
        out->batch = sampler_->sample(out->seeds.nodes, stream);
        if (exclude) out->batch = sample::exclude_seed_edges(out->batch, p, /*reverse=*/true);
      }
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
    d["seed_time"] = timed ? nb::cast(view(out->seed_time)) : nb::none();
    nb::list blocks;
    for (const sample::Block& b : out->batch.blocks) blocks.append(block_dict(b, owner));
    d["blocks"] = blocks;
    return d;
  }

 private:
  /// PyG's disjoint layout of a temporal link batch (torch_geometric.sampler.neighbor_sampler's
  /// edge_sample): the seeds are every labelled pair's source, then every destination, one tree
  /// each, at the time of the positive the pair belongs to; the indices are positions in that list.
  static void disjoint_layout(std::span<const int64_t> pairs, std::span<const int64_t> time, sample::NegativeMode mode,
                              LinkMiniBatch& out) {
    sample::LinkSeeds& s = out.seeds;
    const auto p = static_cast<int64_t>(time.size());
    std::vector<int64_t> src, dst, src_time, dst_time;
    for (int64_t i = 0; i < p; ++i) {
      src.push_back(pairs[static_cast<std::size_t>(2 * i)]);
      dst.push_back(pairs[static_cast<std::size_t>(2 * i + 1)]);
    }
    src_time.assign(time.begin(), time.end());
    dst_time.assign(time.begin(), time.end());
    s.label_src.clear();
    s.label_dst.clear();
    s.src_index.clear();
    s.dst_pos_index.clear();
    s.dst_neg_index.clear();
    if (mode == sample::NegativeMode::kTriplet) {
      const auto amount = p == 0 ? 0 : static_cast<int64_t>(s.negatives.size()) / p;
      for (int64_t i = 0; i < p; ++i) {
        for (int64_t j = 0; j < amount; ++j) {
          dst.push_back(s.negatives[static_cast<std::size_t>(i * amount + j)]);
          dst_time.push_back(time[static_cast<std::size_t>(i)]);
          s.dst_neg_index.push_back(2 * p + i * amount + j);
        }
        s.src_index.push_back(i);
        s.dst_pos_index.push_back(p + i);
      }
    } else {
      for (std::size_t i = 0; i + 1 < s.negatives.size(); i += 2) {
        const int64_t t = time[(i / 2) % static_cast<std::size_t>(std::max<int64_t>(p, 1))];
        src.push_back(s.negatives[i]);
        dst.push_back(s.negatives[i + 1]);
        src_time.push_back(t);
        dst_time.push_back(t);
      }
      const auto n = static_cast<int64_t>(src.size());
      for (int64_t i = 0; i < n; ++i) {
        s.label_src.push_back(i);
        s.label_dst.push_back(n + i);
      }
    }
    s.nodes = std::move(src);
    s.nodes.insert(s.nodes.end(), dst.begin(), dst.end());
    out.seed_time = std::move(src_time);
    out.seed_time.insert(out.seed_time.end(), dst_time.begin(), dst_time.end());
  }

  std::shared_ptr<graph::Dataset> dataset_;
  uint64_t seed_;
  std::string time_attr_;
  sample::NegativeOptions negatives_;  // without times: a batch's own are set in sample()
  std::unique_ptr<sample::TemporalIndex> temporal_;
  std::unique_ptr<sample::Sampler> sampler_;
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
        out["by_time"] = links->by_time;
        out["num_train"] = links->num_train;
        out["num_valid"] = links->num_valid;
        out["num_test"] = links->num_test;
        return out;
      },
      nb::arg("dataset"),
      "The dataset's link split (the manifest's \"links\": seed, val, test, disjoint, by_time, num_train, "
      "num_valid, num_test), or None.");
  m.def(
      "link_edges",
      [](const DatasetHandle& d, const std::string& split) {
        GRAPHTIER_EXPECTS(d.dataset->has_link_split(), InvalidArgument, d.dataset->dir(),
                          " has no link split (make one with `graphtier split-links`)");
        // A view of the memory map, kept alive by the C++ dataset as Dataset.split's: owned by the
        // Python Dataset, a view still alive at exit (a loader's edges) held that instance past
        // the module's teardown, and nanobind reported it leaked.
        return torch_view(d.dataset->link_edges(parse_split(split)), owner_capsule(d.dataset));
      },
      nb::arg("dataset"), nb::arg("split"),
      "Split `split`'s seed edges, flattened (src, dst) pairs (int64 [2 K], rows sorted), viewing the "
      "dataset's memory map.");
  m.def(
      "link_time",
      [](const DatasetHandle& d, const std::string& split) -> std::optional<TorchArray> {
        GRAPHTIER_EXPECTS(d.dataset->has_link_split(), InvalidArgument, d.dataset->dir(),
                          " has no link split (make one with `graphtier split-links`)");
        if (!d.dataset->has_link_time()) return std::nullopt;
        return torch_view(d.dataset->link_time(parse_split(split)), owner_capsule(d.dataset));
      },
      nb::arg("dataset"), nb::arg("split"),
      "Split `split`'s seed-edge times (int64 [K], one per pair of link_edges), viewing the dataset's "
      "memory map, or None when the split carries no times.");
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
  nb::class_<LinkSampler>(m, "LinkSampler",
                          "The sampler of a LinkNeighborLoader: the neighbour sampler of a homogeneous dataset's "
                          "graph and the loader's negative sampling (\"none\", \"binary\" or \"triplet\", "
                          "`amount`, `non_edges`; refused here, as a ValueError naming the value, where no batch of "
                          "up to `batch_size` positives could draw them), made once (with time_attr, the graph's time "
                          "order is built here).")
      .def(
          "__init__",
          [](LinkSampler* self, const DatasetHandle& dataset, std::vector<int64_t> fanouts, bool replace,
             uint64_t seed, const std::string& time_attr, const std::string& temporal_strategy,
             const std::string& negatives, double amount, bool non_edges, int64_t batch_size) {
            new (self) LinkSampler(dataset, std::move(fanouts), replace, seed, time_attr, temporal_strategy, negatives,
                                   amount, non_edges, batch_size);
          },
          nb::arg("dataset"), nb::arg("fanouts"), nb::arg("replace"), nb::arg("seed"), nb::arg("time_attr") = "",
          nb::arg("temporal_strategy") = "uniform", nb::arg("negatives") = "none", nb::arg("amount") = 1.0,
          nb::arg("non_edges") = false, nb::arg("batch_size") = 1)
      .def(
          "sample",
          [](const LinkSampler& self, const IdArray& pairs, uint64_t stream, bool exclude,
             const std::optional<IdArray>& known, const std::optional<IdArray>& pair_time) {
            return self.sample(pairs, stream, exclude, known, pair_time);
          },
          nb::arg("pairs").noconvert(), nb::arg("stream"), nb::arg("exclude"), nb::arg("known") = nb::none(),
          nb::arg("pair_time").noconvert() = nb::none(),
          "The link minibatch of the supervision edges `pairs` (flattened (src, dst), int64 [2 P]) for "
          "minibatch `stream`: the sampler's negatives (with `non_edges` "
          "redrawn while they are edges of the graph, of the batch or of `known`, a (src, dst)-sorted flattened "
          "list), the neighbour sampler's blocks over the distinct endpoints (`seeds`, ascending) and, with "
          "`exclude`, the blocks without the messages along the batch's positives and their reverses. "
          "{\"seeds\", \"input_nodes\", \"blocks\", \"label_src\", \"label_dst\" (binary: positives then "
          "negatives, positions in seeds), \"src_index\", \"dst_pos_index\", \"dst_neg_index\" (triplet), "
          "\"negatives\" (global ids), \"unverified\"}. A temporal sampler takes `pair_time` (int64 [P], the "
          "positives' times) and samples one tree per endpoint of every labelled pair (PyG's disjoint "
          "layout: seeds are every source then every destination, negatives after their positives, each at "
          "its positive's time, \"seed_time\"; with node times, negatives no later than it); no exclusion.");
}

}  // namespace graphtier::python
