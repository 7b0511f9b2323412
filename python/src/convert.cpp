// graphtier.convert's converters (python/graphtier/convert/__init__.py): the library's converters
// with the options of `graphtier convert <format>`, returning the report the command prints with
// --json as a dict.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "bindings.hpp"
#include "graphtier/core/dtype.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::python {
namespace {

/// The options every format takes, as the Python wrappers pass them: the command's (counts and the
/// budget as text, parsed by graph::to_options) and the pool's size.
struct CommonArgs : graph::ConvertArgs {
  int threads = 0;
};

/// Runs `convert` with the options and a pool of `threads` workers, without the GIL; returns the
/// report as `graphtier convert --json` prints it (graphtier.convert parses it).
template <typename Convert>
std::string run(const CommonArgs& common, Convert&& convert) {
  graph::ConvertReport report;
  {
    const graph::ConvertOptions options = graph::to_options(common);
    nb::gil_scoped_release release;
    ThreadPool pool(common.threads);
    report = convert(options, pool);
  }
  return graph::report_json(report);
}

}  // namespace

void bind_convert(nb::module_& m) {
  nb::class_<CommonArgs>(m, "ConvertArgs")
      .def(nb::init<>())
      .def_rw("overwrite", &CommonArgs::overwrite)
      .def_rw("name", &CommonArgs::name)
      .def_rw("dtype", &CommonArgs::dtype)
      .def_rw("align", &CommonArgs::align)
      .def_rw("symmetrize", &CommonArgs::symmetrize)
      .def_rw("keep_self_loops", &CommonArgs::keep_self_loops)
      .def_rw("num_nodes", &CommonArgs::num_nodes)  // "": from the input
      .def_rw("num_classes", &CommonArgs::num_classes)
      .def_rw("memory_budget", &CommonArgs::memory_budget)
      .def_rw("threads", &CommonArgs::threads);

  m.def(
      "convert_edge_list",
      [](const std::string& input, bool allow_extra_columns, const std::string& out, const CommonArgs& common,
         bool edge_time) {
        const graph::EdgeListInput in{input, allow_extra_columns, edge_time};
        return run(common, [&](const graph::ConvertOptions& o, ThreadPool& pool) {
          return graph::convert_edge_list(in, out, o, pool);
        });
      },
      nb::arg("input"), nb::arg("allow_extra_columns"), nb::arg("out"), nb::arg("common"),
      nb::arg("edge_time") = false);

  m.def(
      "convert_typed_edge_list",
      [](const std::string& input, const std::string& labels, const std::string& split, uint64_t seed,
         const std::string& out, const CommonArgs& common, bool add_reverses) {
        graph::TypedEdgeListInput in;
        in.path = input;
        in.labels = labels;
        in.seed = seed;
        in.add_reverses = add_reverses;
        graph::parse_split_fractions(split, in);
        return run(common, [&](const graph::ConvertOptions& o, ThreadPool& pool) {
          return graph::convert_typed_edge_list(in, out, o, pool);
        });
      },
      nb::arg("input"), nb::arg("labels"), nb::arg("split"), nb::arg("seed"), nb::arg("out"), nb::arg("common"),
      nb::arg("add_reverses") = true);

  m.def(
      "convert_npy",
      [](const std::string& edge_index, const std::string& edge_layout, const std::string& features,
         const std::string& labels, const std::string& train, const std::string& valid, const std::string& test,
         const std::string& out, const CommonArgs& common) {
        GRAPHTIER_EXPECTS(edge_layout == "auto" || edge_layout == "2xE" || edge_layout == "Ex2", InvalidArgument,
                          "edge_layout must be auto, 2xE or Ex2, got '", edge_layout, "'");
        graph::NpyInput in;
        in.edge_index = edge_index;
        in.edge_layout = edge_layout == "2xE"   ? graph::EdgeLayout::kRows
                         : edge_layout == "Ex2" ? graph::EdgeLayout::kColumns
                                                : graph::EdgeLayout::kAuto;
        in.features = features;
        in.labels = labels;
        in.train = train;
        in.valid = valid;
        in.test = test;
        return run(common, [&](const graph::ConvertOptions& o, ThreadPool& pool) {
          return graph::convert_npy(in, out, o, pool);
        });
      },
      nb::arg("edge_index"), nb::arg("edge_layout"), nb::arg("features"), nb::arg("labels"), nb::arg("train"),
      nb::arg("valid"), nb::arg("test"), nb::arg("out"), nb::arg("common"));

  m.def(
      "convert_planetoid_arrays",
      [](const std::string& arrays, const std::string& name, const std::string& root, const std::string& out,
         const CommonArgs& common) {
        const graph::PlanetoidArrays in{arrays, name, root};
        return run(common, [&](const graph::ConvertOptions& o, ThreadPool& pool) {
          return graph::convert_planetoid_arrays(in, out, o, pool);
        });
      },
      nb::arg("arrays"), nb::arg("name"), nb::arg("root"), nb::arg("out"), nb::arg("common"));

  m.def(
      "convert_ogb",
      [](const std::string& root, const std::string& split, const std::string& format, const std::string& out,
         const CommonArgs& common) {
        GRAPHTIER_EXPECTS(format == "auto" || format == "csv" || format == "npz", InvalidArgument,
                          "format must be auto, csv or npz, got '", format, "'");
        graph::OgbInput in;
        in.root = root;
        in.split = split;
        in.format = format == "csv" ? graph::OgbFormat::kCsv
                    : format == "npz" ? graph::OgbFormat::kNpz
                                      : graph::OgbFormat::kAuto;
        return run(common, [&](const graph::ConvertOptions& o, ThreadPool& pool) {
          return graph::convert_ogb(in, out, o, pool);
        });
      },
      nb::arg("root"), nb::arg("split"), nb::arg("format"), nb::arg("out"), nb::arg("common"));

  m.def(
      "convert_igb",
      [](const std::string& root, const std::string& size, int label_classes, int64_t feature_dim,
         double train_fraction, double valid_fraction, const std::optional<std::string>& labeled_nodes, bool hetero,
         const std::string& out, const CommonArgs& common) {
        graph::IgbInput in;
        in.root = root;
        in.size = size;
        in.label_classes = label_classes;
        in.feature_dim = feature_dim;
        in.train_fraction = train_fraction;
        in.valid_fraction = valid_fraction;
        if (labeled_nodes) in.labeled_nodes = parse_count(*labeled_nodes);
        in.hetero = hetero;
        return run(common, [&](const graph::ConvertOptions& o, ThreadPool& pool) {
          return graph::convert_igb(in, out, o, pool);
        });
      },
      nb::arg("root"), nb::arg("size"), nb::arg("label_classes"), nb::arg("feature_dim"), nb::arg("train_fraction"),
      nb::arg("valid_fraction"), nb::arg("labeled_nodes").none(), nb::arg("hetero"), nb::arg("out"), nb::arg("common"));
}

}  // namespace graphtier::python
