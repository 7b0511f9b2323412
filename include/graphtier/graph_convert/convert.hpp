// Converters from public graph formats to dataset format v1 (dataset.hpp).
//
// Every converter streams its inputs: the topology is built in two passes over the edges (count
// in-degrees, then place each source in its destination's row), so the edge list itself is never
// held in memory, only the CSC being built; feature tables, which may exceed RAM, pass through in
// chunks of bounded size. The result is canonical: every row of the CSC lists its in-neighbours
// (message sources) in ascending order without duplicates, whatever the input order or thread
// count. Self-loops are dropped unless kept explicitly.
//
// Inputs (the structs below describe each layout):
//   * edge lists: text, plain or gzip (told apart by magic bytes), one `src dst` per line,
//     separated by whitespace or a comma; lines starting with '#' or '%' are comments.
//   * typed edge lists: the same with `src dst TYPE [weight]` lines, giving a typed dataset
//     (docs/format.md, Heterogeneous datasets).
//   * .npy arrays: edge_index [2, E] or [E, 2] of integers, features [N, D], labels [N] or
//     [N, 1] (NaN or -1 = unlabeled), splits as id lists or boolean masks.
//   * Planetoid (Cora, Citeseer, PubMed pickles): extracted by python/graphtier/convert/
//     planetoid.py with PyTorch Geometric's semantics (the CLI runs it), then converted as .npy
//     arrays.
//   * OGB node-property datasets in their raw layout (CSV.gz or data.npz / node-label.npz); a
//     heterogeneous one (ogbn-mag) gives a typed dataset.
//   * IGB / IGBH in the IGB dataloader's layout: paper nodes and paper-cites-paper edges, or all
//     of IGBH as a typed dataset (IgbInput::hetero).
//   Typed inputs with an edge file per relation (ogbn-mag, IGBH) get every relation's reverse,
//   `dst:rev_<rel>:src`, after their own relations, and are streamed like the others.
//
// Errors: a malformed input throws FormatError whose message names the file (and for text the
// line, as "path:line: problem"); bad options throw InvalidArgument; I/O failures IoError.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graphtier/core/dtype.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/topology_report.hpp"

namespace graphtier::graph {

/// How the output is written and how the topology is cleaned; shared by every converter.
struct ConvertOptions {
  bool overwrite = false;
  std::string name;  // manifest name; default: the output directory's base name
  DType feature_dtype = DType::kFloat32;  // float32, float16 or bfloat16 (converted on the way)
  int64_t alignment = 0;                  // feature row alignment: 0, 512 or 4096 (FeatureLayout)
  bool symmetrize = false;                // also store the reverse of every edge
  bool keep_self_loops = false;
  /// Node count. Edge lists: default max id + 1. Array inputs: default from the arrays; if given,
  /// must agree with them (IGB raw feature files: sets the row count).
  std::optional<int64_t> num_nodes;
  /// Default: max label + 1 (Planetoid: the width of the one-hot labels; IGB: the label set).
  std::optional<int64_t> num_classes;
  /// Memory for the CSC being built, in bytes; 0: no limit. Beyond the per-node degree counters
  /// (8 bytes a node), the rows are built in ranges that fit, each costing one more pass over
  /// the edges.
  int64_t memory_budget = 0;
  /// Feature rows move in chunks of about this many bytes (three chunks are in memory).
  int64_t chunk_bytes = int64_t{64} << 20;
};

/// What a conversion read and wrote; the topology's counts and timing in the TopologyReport base.
struct ConvertReport : TopologyReport {
  std::string dataset;  // output directory
  std::string format;   // input format as detected, e.g. "edge list (gzip)", "ogb (csv)"
  int64_t input_edges = 0;  // edges read from the input
  int64_t feature_dim = 0;
  DType feature_dtype = DType::kFloat32;
  int64_t alignment = 0;
  int64_t row_stride = 0;
  int64_t num_classes = 0;
  int64_t num_labeled = 0;
  int64_t num_train = 0;
  int64_t num_valid = 0;
  int64_t num_test = 0;
  int64_t num_node_types = 0;  // typed datasets; 0 otherwise
  int64_t num_relations = 0;
  int64_t type_feature_tables = 0;  // typed datasets: node types with a feature table
  /// Typed edge lists: the reverse relations added (`dst:rev_<rel>:src`, TypedEdgeListInput).
  std::vector<std::string> added_reverses;
  int64_t total_bytes = 0;
  double features_seconds = 0;
  double total_seconds = 0;
};

/// The report as `graphtier convert --json` prints it (and graphtier.convert returns it): a JSON
/// object, indented by 2.
std::string report_json(const ConvertReport& report);

/// ConvertOptions as `graphtier convert` and graphtier.convert take them: counts and the memory
/// budget as text, parsed by to_options (one parser for the command and the Python converters).
struct ConvertArgs {
  bool overwrite = false;
  std::string name;
  std::string dtype = "float32";
  int64_t align = 0;
  bool symmetrize = false;
  bool keep_self_loops = false;
  std::string num_nodes;    // a count such as "10M"; "": from the input
  std::string num_classes;  // "": from the labels
  std::string memory_budget = "0";  // bytes ("8GiB") or a percent of physical memory ("25%"); "0": no limit
};
/// Throws InvalidArgument naming a value that does not parse.
ConvertOptions to_options(const ConvertArgs& args);

/// A text edge list (plain or gzip). `allow_extra_columns` ignores anything after the two ids
/// (weights, timestamps); otherwise such a line is rejected.
struct EdgeListInput {
  std::string path;
  bool allow_extra_columns = false;
  /// The third field of each line is the edge's integer time (edge_time.bin, docs/format.md,
  /// Timestamps): `src dst time`; an edge given more than once (or both ways, symmetrized) keeps its
  /// earliest time. The timed edges are held in memory (24 bytes each).
  bool edge_time = false;
};
ConvertReport convert_edge_list(const EdgeListInput& input, const std::string& out, const ConvertOptions& options,
                                ThreadPool& pool);

/// A typed edge list (plain or gzip): lines `src dst TYPE [weight]`, fields separated by blanks
/// or commas, '#' and '%' comments. TYPE is `A-B` (an edge from a node of type A to one of type
/// B; the relation is named `A:to:B`, as PyG names HGB's) or `A:rel:B`; type and relation names
/// are 1 to 64 of [A-Za-z0-9_]. Ids count from 0 within each type; type t gets the global ids
/// [offset[t], offset[t] + max id + 1), types and relations numbered in order of first
/// appearance. A weight, if present, must be a number and is not stored (a warning says so
/// unless every weight is 1).
///
/// Labels (optional): lines `<type><id> <class>` (as `p0 2`: the type is the name up to the
/// trailing digits) or `<type> <id> <class>`; all of one type, the labelled type; each node at
/// most once, and no id beyond its type's largest in the edges (such a label would grow the type
/// and shift the ids of the types after it: refused with its line). The labelled nodes are split
/// at random, seeded: the first train_fraction of them (rounded down) train, the next
/// valid_fraction valid, the rest test.
///
/// The CSC lists each column's edges by relation, then by source; duplicates (same source,
/// destination and relation) are removed, self-loops too unless kept. Reverse relations are
/// found, not guessed from names: r' reverses r when its edges are exactly r's reversed (a
/// relation may be its own reverse); two candidates leave r without one. A relation left without
/// one gets `dst:rev_<rel>:src`, its edges reversed (PyG's ToUndirected; ConvertReport::
/// added_reverses lists them), unless add_reverses is false: then a labelled type that no relation
/// enters is warned about (a relational model learns nothing from its neighbours). The edges are
/// held in memory (up to about 50 bytes an edge, twice that for a relation whose reverse is added),
/// so ConvertOptions::memory_budget is refused, as are num_nodes and symmetrize (each type's count
/// is its largest id + 1; reverses are listed or added).
struct TypedEdgeListInput {
  std::string path;
  std::string labels;  // "": no labels
  double train_fraction = 0.2;
  double valid_fraction = 0.1;
  uint64_t seed = 0;
  bool add_reverses = true;  // add `dst:rev_<rel>:src` for each relation the file gives no reverse
};
/// Sets input's fractions from "TRAIN,VAL" (as "0.2,0.1", `--split`); throws InvalidArgument
/// naming the text unless it is two numbers.
void parse_split_fractions(std::string_view text, TypedEdgeListInput& input);
ConvertReport convert_typed_edge_list(const TypedEdgeListInput& input, const std::string& out,
                                      const ConvertOptions& options, ThreadPool& pool);

/// Orientation of an edge_index array.
enum class EdgeLayout : uint8_t {
  kAuto,     // [2, E] unless the shape is [E, 2] with E != 2
  kRows,     // [2, E]: row 0 sources, row 1 destinations (PyG, OGB)
  kColumns,  // [E, 2]: each row (src, dst) (IGB)
};

/// .npy arrays; only edge_index is required. Split files hold int ids or a bool mask of length N.
struct NpyInput {
  std::string edge_index;
  EdgeLayout edge_layout = EdgeLayout::kAuto;
  std::string features;
  std::string labels;
  std::string train;
  std::string valid;
  std::string test;
};
ConvertReport convert_npy(const NpyInput& input, const std::string& out, const ConvertOptions& options,
                          ThreadPool& pool);

/// A Planetoid dataset (`<root>/ind.<name>.{x,y,tx,ty,allx,ally,graph,test.index}`) after
/// python/graphtier/convert/planetoid.py extracted it into .npy arrays (`graphtier convert
/// planetoid` runs the script; this library runs no Python). The script holds the semantics of
/// PyG's read_planetoid_data: features vstack(allx, tx) with tx rows placed at test.index
/// (missing test ids, as in Citeseer, get zero rows), labels the argmax of the one-hot rows (an
/// all-zero row gives -1, unlabeled, where PyG gives 0), train = the first len(y) ids, valid the
/// next 500, test the sorted test.index; edges from the graph dict without self-loops or
/// duplicates, made symmetric.
struct PlanetoidArrays {
  /// The script's output directory: edge_index.npy, features.npy, labels.npy, train.npy,
  /// valid.npy, test.npy and meta.json (its counts, and num_classes).
  std::string arrays;
  std::string name;  // "cora", "citeseer", "pubmed": the default manifest name
  std::string root;  // the Planetoid directory they came from, recorded in the manifest
};
ConvertReport convert_planetoid_arrays(const PlanetoidArrays& input, const std::string& out,
                                       const ConvertOptions& options, ThreadPool& pool);

enum class OgbFormat : uint8_t { kAuto, kCsv, kNpz };

/// An OGB node-property dataset directory (the one holding raw/ and split/). CSV: raw/edge.csv.gz,
/// num-node-list.csv.gz, num-edge-list.csv.gz, optional node-feat.csv.gz and node-label.csv.gz;
/// binary: raw/data.npz (edge_index, node_feat, num_nodes_list, num_edges_list, optional node_year)
/// and optional raw/node-label.npz (node_label); raw/node_year.csv.gz (ogbn-arxiv's years), or the
/// npz's node_year, becomes node_time.bin (one integer per node). Splits from split/<split>/{train,valid,test}.csv.gz; `split`
/// may be empty when split/ has exactly one subdirectory. Edges stay directed as stored unless
/// ConvertOptions::symmetrize is set (as users of ogbn-arxiv do).
///
/// Heterogeneous (chosen when raw/num-node-dict.csv.gz exists; CSV only), as the ogb package's
/// read_csv_heterograph_raw reads it: num-node-dict (a header of type names over one row of
/// counts), triplet-type-list.csv.gz (`src,rel,dst` lines; without it the directories of
/// raw/relations/), raw/relations/<src>___<rel>___<dst>/edge.csv.gz (`src,dst` lines, ids per
/// type; other files there, such as edge_reltype.csv.gz, are not read), raw/node-feat/<type>/
/// node-feat.csv.gz, raw/node-label/<type>/node-label.csv.gz (one labelled type) and
/// split/<split>/<type>/{train,valid,test}.csv.gz. Types and relations in sorted order (as the ogb
/// package and PyG number them), then each relation's reverse rev_<rel>; symmetrize and num_nodes
/// are refused.
struct OgbInput {
  std::string root;
  std::string split;
  OgbFormat format = OgbFormat::kAuto;  // kAuto: npz if raw/data.npz exists
};
ConvertReport convert_ogb(const OgbInput& input, const std::string& out, const ConvertOptions& options,
                          ThreadPool& pool);

/// IGB260M / IGBH in the layout of the IGB dataloader: `<root>/<size>/processed/paper/
/// {node_feat.npy, node_label_19.npy | node_label_2K.npy}` and `paper__cites__paper/edge_index.npy`
/// ([E, 2] (src, dst)). For IGBH only the paper nodes and paper-cites-paper edges are converted
/// (the homogeneous projection the IGB baselines train on). Feature and label files without the
/// .npy magic are raw little-endian float32 (as the dataloader's np.memmap for large/full):
/// [N, feature_dim] and [N]. Like the dataloader, `large` reads the first N rows of full's
/// feature and label files when it has none of its own. Splits as the dataloader: the first
/// train_fraction of the labeled nodes train, the next valid_fraction valid, the rest test.
struct IgbInput {
  std::string root;
  std::string size;            // experimental, small, medium, large, full
  int label_classes = 19;      // 19 or 2983 (node_label_2K.npy)
  int64_t feature_dim = 1024;  // for raw feature files
  double train_fraction = 0.6;
  double valid_fraction = 0.2;
  /// Nodes [0, labeled_nodes) carry labels; later ones become -1. Default: all nodes, except
  /// for `full`, where the dataloader's counts apply (227,130,858 for 19 classes, 157,675,969
  /// for 2983).
  std::optional<int64_t> labeled_nodes;
  /// IGBH as a typed dataset: every `<type>/node_feat.npy` a node type (its rows the type's
  /// count; raw float32 files of feature_dim values as above), every
  /// `<src>__<rel>__<dst>/edge_index.npy` ([E, 2], ids per type) a relation with its reverse
  /// `dst:rev_<rel>:src` added, types and relations in sorted order; labels and the split above on
  /// paper. Without it only the paper-cites-paper projection is converted.
  bool hetero = false;
};
ConvertReport convert_igb(const IgbInput& input, const std::string& out, const ConvertOptions& options,
                          ThreadPool& pool);

/// Paper-node count of each IGB size (experimental 100K ... full 269,346,174); nullopt if unknown.
std::optional<int64_t> igb_num_papers(const std::string& size);

}  // namespace graphtier::graph
