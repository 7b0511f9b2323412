// `graphtier convert <format>`: edge lists, .npy arrays, Planetoid, OGB and IGB inputs to dataset
// format v1 (include/graphtier/graph_convert/convert.hpp).
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/graph_convert/convert.hpp"
#include "planetoid.hpp"

namespace graphtier::cli {
namespace {

/// Options every `convert` subcommand takes: the output and the converters' own (graph::ConvertArgs).
struct CommonOptions {
  std::string out;
  graph::ConvertArgs args;
};

struct ConvertCliOptions {
  CommonOptions common;
  graph::EdgeListInput edge_list;
  graph::TypedEdgeListInput typed_edge_list;
  std::string typed_split = "0.2,0.1";
  graph::NpyInput npy;
  std::string edge_layout = "auto";
  PlanetoidInput planetoid;
  graph::OgbInput ogb;
  std::string ogb_format = "auto";
  graph::IgbInput igb;
};

void print_text(const graph::ConvertReport& r) {
  const auto ll = [](int64_t v) { return static_cast<long long>(v); };
  std::printf("converted  %s (%s)\n", r.dataset.c_str(), r.format.c_str());
  std::printf("nodes      %lld (%lld without in-neighbours)\n", ll(r.num_nodes), ll(r.isolated_nodes));
  if (r.num_node_types > 0) {
    std::printf("typed      %lld node types, %lld relations\n", ll(r.num_node_types), ll(r.num_relations));
  }
  if (!r.added_reverses.empty()) {
    std::string names;
    for (const std::string& name : r.added_reverses) names += (names.empty() ? "" : ", ") + name;
    std::printf("reverses   %zu added: %s\n", r.added_reverses.size(), names.c_str());
  }
  std::printf("edges      %lld stored from %lld read (%lld self-loops and %lld duplicate entries removed), max in-degree %lld\n",
              ll(r.num_edges), ll(r.input_edges), ll(r.self_loops_removed), ll(r.duplicates_removed), ll(r.max_in_degree));
  if (r.feature_dim > 0) {
    std::printf("features   %lld x %s, row stride %lld B (alignment %lld)\n", ll(r.feature_dim),
                std::string(dtype_name(r.feature_dtype)).c_str(), ll(r.row_stride), ll(r.alignment));
  } else if (r.type_feature_tables > 0) {
    std::printf("features   a table for %lld of the node types (graphtier info lists them)\n",
                ll(r.type_feature_tables));
  } else {
    std::printf("features   none\n");
  }
  std::printf("classes    %lld (%lld labeled nodes)\n", ll(r.num_classes), ll(r.num_labeled));
  std::printf("split      train %lld / valid %lld / test %lld\n", ll(r.num_train), ll(r.num_valid), ll(r.num_test));
  std::printf("size       %s\n", format_bytes(static_cast<double>(r.total_bytes)).c_str());
  std::printf("time       %.1f s (topology %.1f s, features %.1f s)\n", r.total_seconds, r.topology_seconds,
              r.features_seconds);
}

using Converter = std::function<graph::ConvertReport(const graph::ConvertOptions&, ThreadPool&)>;

void run(const CommonOptions& common, const GlobalOptions& global, const Converter& convert) {
  const graph::ConvertOptions options = graph::to_options(common.args);
  ThreadPool pool(global.threads);
  const graph::ConvertReport report = convert(options, pool);
  if (global.json) {
    std::cout << graph::report_json(report) << '\n';
  } else {
    print_text(report);
  }
}

/// Which of the common options a format takes (its --help lists only those).
enum class FormatKind : uint8_t {
  kEdges,      // every option
  kPlanetoid,  // the extraction fixes the edge cleaning (PyG's) and uses --name for the dataset
  kTyped,      // typed edge lists: no features, reverses listed or added, edges held in memory
};

/// Adds a format subcommand with the common options that apply to it.
CLI::App* add_format(CLI::App& convert, const char* name, const char* description, CommonOptions& c,
                     FormatKind kind = FormatKind::kEdges) {
  auto* cmd = convert.add_subcommand(name, description);
  cmd->add_option("-o,--out", c.out, "Output dataset directory")->required();
  cmd->add_flag("--overwrite", c.args.overwrite, "Replace an existing dataset at --out");
  if (kind != FormatKind::kPlanetoid) {
    cmd->add_option("--name", c.args.name, "Dataset name in the manifest (default: the directory name)");
  }
  if (kind != FormatKind::kTyped) {
    cmd->add_option("--dtype", c.args.dtype, "Feature dtype: float32, float16 or bfloat16 (converted)")
        ->check(kDType)
        ->capture_default_str();
    cmd->add_option("--align", c.args.align, "Feature row alignment in bytes: 0 (packed), 512 or 4096")
        ->capture_default_str();
  }
  if (kind == FormatKind::kEdges) {
    cmd->add_flag("--symmetrize", c.args.symmetrize, "Also store the reverse of every edge");
  }
  if (kind != FormatKind::kPlanetoid) {
    cmd->add_flag("--keep-self-loops", c.args.keep_self_loops, "Keep edges from a node to itself (default: dropped)");
  }
  if (kind != FormatKind::kTyped) {
    cmd->add_option("--num-nodes", c.args.num_nodes, "Number of nodes (suffixes: 10K, 10M); default from the input")
        ->check(kCount);
  }
  cmd->add_option("--num-classes", c.args.num_classes, "Number of classes; default max label + 1 (or the format's)")
      ->check(kCount);
  if (kind != FormatKind::kTyped) {
    cmd->add_option("--memory-budget", c.args.memory_budget,
                    "Memory for building the CSC: bytes (8GiB) or percent of RAM; more passes if smaller; 0: no limit")
        ->check(kBudget)
        ->capture_default_str();
  }
  return cmd;
}

}  // namespace

void register_convert(CLI::App& app, const GlobalOptions& global) {
  auto opt = std::make_shared<ConvertCliOptions>();
  auto* convert = app.add_subcommand("convert", "Convert a public graph format to a graphtier dataset");
  convert->require_subcommand(1);
  CommonOptions& c = opt->common;

  auto* edge_list = add_format(*convert, "edge-list",
                               "Text edge list, plain or gzip: one 'src dst' per line (whitespace or comma), "
                               "'#' and '%' comments; duplicates are always removed",
                               c);
  edge_list->add_option("input", opt->edge_list.path, "Edge list file (.gz or not: told by its magic bytes)")->required();
  edge_list->add_flag("--allow-extra-columns", opt->edge_list.allow_extra_columns,
                      "Ignore columns after the two ids (weights, timestamps) instead of rejecting the line");
  edge_list->add_flag("--edge-time", opt->edge_list.edge_time,
                      "The third column is the edge's integer time (edge_time.bin, for temporal sampling); a "
                      "repeated edge keeps its earliest time");
  edge_list->callback([opt, &global] {
    run(opt->common, global, [&](const graph::ConvertOptions& o, ThreadPool& pool) {
      return graph::convert_edge_list(opt->edge_list, opt->common.out, o, pool);
    });
  });

  auto* typed = add_format(*convert, "typed-edge-list",
                           "Typed edge list, plain or gzip: one 'src dst TYPE [weight]' per line, TYPE 'A-B' or "
                           "'A:rel:B', ids per type from 0; a heterogeneous dataset",
                           c, FormatKind::kTyped);
  typed->add_option("input", opt->typed_edge_list.path, "Edge list file (.gz or not: told by its magic bytes)")
      ->required();
  typed->add_option("--labels", opt->typed_edge_list.labels,
                    "Labels of one node type: '<type><id> <class>' (as 'p0 2') or '<type> <id> <class>' lines");
  typed->add_option("--split", opt->typed_split,
                    "Fractions TRAIN,VAL of the labelled nodes drawn (seeded) for train and valid; the rest is test")
      ->capture_default_str();
  typed->add_option("--seed", opt->typed_edge_list.seed, "Seed of the split")->capture_default_str();
  auto no_reverses = std::make_shared<bool>(false);
  typed->add_flag("--no-reverses", *no_reverses,
                  "Add no reverse relation: by default a relation the file gives no reverse (its edges reversed) "
                  "gets dst:rev_<rel>:src, as PyG's ToUndirected");
  typed->callback([opt, no_reverses, &global] {
    graph::parse_split_fractions(opt->typed_split, opt->typed_edge_list);
    opt->typed_edge_list.add_reverses = !*no_reverses;
    run(opt->common, global, [&](const graph::ConvertOptions& o, ThreadPool& pool) {
      return graph::convert_typed_edge_list(opt->typed_edge_list, opt->common.out, o, pool);
    });
  });

  auto* npy = add_format(*convert, "npy", "NumPy .npy arrays: edge_index, and optionally features, labels and splits", c);
  npy->add_option("--edge-index", opt->npy.edge_index, "Integer edge_index [2, E] or [E, 2]")->required();
  npy->add_option("--edge-layout", opt->edge_layout, "auto, 2xE (row 0 sources) or Ex2 (rows of src, dst)")
      ->capture_default_str();
  npy->add_option("--features", opt->npy.features, "Features [N, D] of any numeric dtype");
  npy->add_option("--labels", opt->npy.labels, "Labels [N] or [N, 1]; -1 or NaN = unlabeled");
  npy->add_option("--train", opt->npy.train, "Train node ids, or a bool mask [N]");
  npy->add_option("--valid", opt->npy.valid, "Valid node ids, or a bool mask [N]");
  npy->add_option("--test", opt->npy.test, "Test node ids, or a bool mask [N]");
  npy->callback([opt, &global] {
    const std::string& layout = opt->edge_layout;
    GRAPHTIER_EXPECTS(layout == "auto" || layout == "2xE" || layout == "Ex2", InvalidArgument,
                      "--edge-layout must be auto, 2xE or Ex2, got '", layout, "'");
    opt->npy.edge_layout = layout == "2xE" ? graph::EdgeLayout::kRows
                           : layout == "Ex2" ? graph::EdgeLayout::kColumns
                                             : graph::EdgeLayout::kAuto;
    run(opt->common, global, [&](const graph::ConvertOptions& o, ThreadPool& pool) {
      return graph::convert_npy(opt->npy, opt->common.out, o, pool);
    });
  });

  auto* planetoid = add_format(*convert, "planetoid",
                               "Planetoid pickles (Cora, Citeseer, PubMed) with PyG's semantics; needs python3 with "
                               "numpy and scipy",
                               c, FormatKind::kPlanetoid);
  planetoid->add_option("--root", opt->planetoid.root, "Directory holding ind.<name>.* files")->required();
  planetoid->add_option("--name", opt->planetoid.name, "cora, citeseer or pubmed (also the manifest name)")->required();
  planetoid->add_option("--python", opt->planetoid.python,
                        "Python interpreter (default: the python3 beside this executable, as in the environment pip "
                        "installed it into, else python3 on PATH)");
  planetoid->callback([opt, &global] {
    run(opt->common, global, [&](const graph::ConvertOptions& o, ThreadPool& pool) {
      return convert_planetoid(opt->planetoid, opt->common.out, o, pool);
    });
  });

  auto* ogb = add_format(*convert, "ogb",
                         "OGB node-property dataset in its raw layout (raw/*.csv.gz or raw/data.npz, split/<name>/); "
                         "a heterogeneous one (ogbn-mag: raw/num-node-dict.csv.gz, raw/relations/) becomes a typed "
                         "dataset with every relation's reverse rev_<rel>",
                         c);
  ogb->add_option("--root", opt->ogb.root, "Dataset directory holding raw/ and split/ (e.g. dataset/ogbn_arxiv)")
      ->required();
  ogb->add_option("--split", opt->ogb.split, "Subdirectory of split/ (default: the only one)");
  ogb->add_option("--format", opt->ogb_format, "auto, csv or npz")->capture_default_str();
  ogb->callback([opt, &global] {
    const std::string& f = opt->ogb_format;
    GRAPHTIER_EXPECTS(f == "auto" || f == "csv" || f == "npz", InvalidArgument, "--format must be auto, csv or npz, got '",
                      f, "'");
    opt->ogb.format = f == "csv" ? graph::OgbFormat::kCsv : f == "npz" ? graph::OgbFormat::kNpz : graph::OgbFormat::kAuto;
    run(opt->common, global, [&](const graph::ConvertOptions& o, ThreadPool& pool) {
      return graph::convert_ogb(opt->ogb, opt->common.out, o, pool);
    });
  });

  auto* igb = add_format(*convert, "igb",
                         "IGB260M / IGBH paper nodes and paper-cites-paper edges in the IGB dataloader's layout "
                         "(IGBH whole and typed with --hetero)",
                         c);
  igb->add_option("--root", opt->igb.root, "Directory holding <size>/processed/")->required();
  igb->add_option("--size", opt->igb.size, "experimental, small, medium, large or full")->required();
  igb->add_flag("--hetero", opt->igb.hetero,
                "All of IGBH as a typed dataset: every <type>/node_feat.npy a node type, every "
                "<src>__<rel>__<dst>/edge_index.npy a relation with its reverse rev_<rel>, labels on paper");
  igb->add_option("--label-classes", opt->igb.label_classes, "19 or 2983 (node_label_2K.npy)")->capture_default_str();
  igb->add_option("--feature-dim", opt->igb.feature_dim, "Feature dimension of a raw (header-less) feature file")
      ->capture_default_str();
  igb->add_option("--train-fraction", opt->igb.train_fraction, "First fraction of the labeled nodes: train")
      ->capture_default_str();
  igb->add_option("--valid-fraction", opt->igb.valid_fraction, "Next fraction: valid (the rest is test)")
      ->capture_default_str();
  auto labeled = std::make_shared<std::string>();
  igb->add_option("--labeled-nodes", *labeled,
                  "Nodes [0, K) carry labels (default: all; for full the dataloader's counts)")
      ->check(kCount);
  igb->callback([opt, labeled, &global] {
    if (!labeled->empty()) opt->igb.labeled_nodes = parse_count(*labeled);
    run(opt->common, global, [&](const graph::ConvertOptions& o, ThreadPool& pool) {
      return graph::convert_igb(opt->igb, opt->common.out, o, pool);
    });
  });
}

}  // namespace graphtier::cli
