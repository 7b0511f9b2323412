// Synthetic datasets: an R-MAT power-law graph with planted communities, labels taken from the
// communities and features correlated with the labels, streamed to disk in dataset format v1.
//
// The graph is made so that a GNN must beat an MLP on it: a node's features are its class centroid
// plus noise, and a configurable fraction of edges joins nodes of the same class, so averaging
// over neighbours removes noise that no per-node model can. Classes are balanced (sizes differ by
// at most one), so chance accuracy is 1 / num_classes.
//
// Every value is a pure function of (seed, what it describes): edge k, node v, element j. The
// output is therefore byte-identical whatever the thread count, chunk size or memory budget.
//
// Model, in original ids u in [0, num_nodes):
//   * Edge k: R-MAT quadrant descent over ceil(log2 num_nodes) bits (a draw that lands on an id
//     >= num_nodes is drawn again). Then, with the probability that makes the expected fraction of
//     same-class edges equal `homophily`, the destination is moved to the node of the required
//     class inside its own block of num_classes consecutive ids, which keeps the degree skew
//     between blocks.
//   * Community of u: (u mod C + h(u div C)) mod C, a per-block rotation h from the seed, so every
//     full block holds each class once (balance) and the class does not follow the low id bits
//     that R-MAT skews (no degree/class confound).
//   * Ids are then scrambled by a seeded bijection (a Feistel network with cycle walking), so id
//     order carries no degree information, as in Graph500.
//   * Self-loops and duplicate edges are removed; undirected graphs store both directions.
//   * Features of node v: alpha * (s * centroid(label) + noise), centroid entries +-1, noise of
//     mean 0 and variance 1 (a sum of four uniform bytes), s = class_separation / sqrt(2 dim), and
//     alpha scales every element to unit variance. Two centroids then lie `class_separation` noise
//     standard deviations apart whatever the dimension.
//   * Splits: exact counts, by a second seeded permutation of the ids; id lists are ascending.
//   * Timestamps (time_steps > 0): a growing graph. Node u arrives at step floor(u * S / N) of
//     S = time_steps, in original ids, so the R-MAT hubs (low ids) are the oldest nodes; an edge is
//     created when its later endpoint arrives, so edge time = max of its endpoints' times. A new
//     node links mostly to old, high-degree nodes (R-MAT's skew: preferential attachment) of its
//     own class (homophily), so the graph before t, with the features, predicts the edges after t.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graphtier/core/dtype.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/graph/topology_report.hpp"

namespace graphtier::graph {

/// R-MAT quadrant probabilities; d = 1 - a - b - c. Graph500 defaults.
struct RmatParams {
  double a = 0.57;
  double b = 0.19;
  double c = 0.19;
  double d() const { return 1.0 - a - b - c; }
};

/// The shape of a typed (heterogeneous) graph to generate: node types with their counts and
/// feature tables, relations with their average degree, and the labelled type. Read from JSON
/// (parse_graph_schema; docs/format.md, Generated typed graphs, shows the layout) or built in
/// (`igbh`: IGBH's types, relations and proportions).
struct NodeTypeSpec {
  std::string name;       // 1 to 64 of [A-Za-z0-9_]
  int64_t count = 0;      // nodes of the type, >= 1
  int64_t feature_dim = 0;  // 0: no feature table
  DType feature_dtype = DType::kFloat32;
};
struct RelationSpec {
  std::string src, name, dst;  // written "src:name:dst"
  double degree = 0;           // average edges per source node: round(degree * count(src)) drawn
  std::string reverse;         // name of the reverse relation `dst:reverse:src` to add; "": none
};
struct GraphSchema {
  std::vector<NodeTypeSpec> node_types;
  std::vector<RelationSpec> relations;
  std::string labelled_type;  // "": no labels or splits
  int64_t num_classes = 0;    // >= 1 with a labelled type
};

/// Parses a schema from JSON text; throws FormatError naming `source` and the field (as
/// "relations[1].degree") for anything malformed: unknown or missing keys, bad names, counts,
/// degrees or dtypes, duplicate types or relations, relations between undeclared types.
GraphSchema parse_graph_schema(const std::string& text, const std::string& source);
/// `name_or_path`: "igbh" (the built-in IGBH-shaped schema) or the path of a JSON schema file.
GraphSchema load_graph_schema(const std::string& name_or_path);
/// Scales every type's count so that they add up to about `total_nodes` (each type keeps at least
/// one node and its share of the total; the average degrees stay, so edges scale with nodes).
void scale_graph_schema(GraphSchema& schema, int64_t total_nodes);

struct GenerateOptions {
  /// With a schema a typed dataset is generated (docs/format.md, Heterogeneous datasets): the
  /// schema gives the node counts, edges, feature tables and classes, and num_nodes, num_edges,
  /// num_classes, feature_dim, feature_dtype and undirected are not used (reverse relations give
  /// both directions). See generate_dataset.
  std::optional<GraphSchema> schema;
  int64_t num_nodes = 0;
  /// Requested edges as stored in the CSC (both directions count when undirected), before
  /// self-loops and duplicates are removed; an undirected graph draws ceil(num_edges / 2) pairs.
  int64_t num_edges = 0;
  int64_t num_classes = 2;  // >= 1 and <= num_nodes
  int64_t feature_dim = 0;  // 0: no features
  DType feature_dtype = DType::kFloat32;  // float32, float16 or bfloat16
  int64_t alignment = 0;                  // 0, 512 or 4096 (FeatureLayout::make)
  uint64_t seed = 0;
  /// Expected fraction of edges joining two nodes of the same class, in [0, 1]. 1/num_classes is
  /// what a graph without communities has; below it the graph is heterophilous.
  double homophily = 0.8;
  RmatParams rmat;
  bool undirected = true;
  /// Distance between two class centroids in noise standard deviations (see the model above).
  double class_separation = 2.0;
  /// Arrival steps of a growing graph (the model above): 0 writes no times, S >= 1 writes
  /// node_time.bin (values in [0, S)) and edge_time.bin (docs/format.md, Timestamps); at most
  /// num_nodes; homogeneous graphs only.
  int64_t time_steps = 0;
  double train_fraction = 0.6;
  double valid_fraction = 0.2;
  std::optional<double> test_fraction;  // default: the nodes in neither train nor valid
  /// Memory for building the topology, in bytes; 0: no limit. The degree counters (4 or 8 bytes
  /// per node) must fit; beyond them, the CSC is built in ranges of destination nodes, each of
  /// which costs one more pass over the edge stream.
  int64_t memory_budget = 0;
  /// Feature rows are generated in chunks of about this many bytes; two chunks are in memory.
  int64_t feature_chunk_bytes = int64_t{64} << 20;
  bool overwrite = false;
  std::string name;  // manifest name; default: the directory's base name
};

/// What was written, and how long each stage took (wall-clock seconds); the topology's counts and
/// timing in the TopologyReport base.
struct GenerateReport : TopologyReport {
  int64_t requested_edges = 0;
  /// Same-class fraction of the stored edges: over all rows, or over a fixed pseudo-random 1/16 of
  /// the rows when more than 2^24 entries were drawn. Removing duplicates, which are more often
  /// same-class, leaves it slightly below `homophily` on graphs with heavy hubs.
  double measured_homophily = 0;
  int64_t num_train = 0, num_valid = 0, num_test = 0;
  int64_t num_node_types = 0;  // typed datasets; 0 otherwise
  int64_t num_relations = 0;
  int64_t feature_bytes = 0;
  int64_t total_bytes = 0;
  double nodes_seconds = 0;  // labels and splits
  double feature_seconds = 0;
  double total_seconds = 0;  // including commit (fsync, validation, rename)
};

/// Generates a dataset into `dir` (atomically: nothing appears at `dir` unless it succeeds).
///
/// Typed (options.schema set): each type t is its own id range, in schema order; relation r
/// draws round(degree * count(src)) edges, in the relations' order then each relation's reverse
/// in the same order (relation ids). Edges between nodes of one type follow the model above
/// within the type (communities only in the labelled type, so `homophily` applies to its
/// relations onto itself); edges between two types draw each end from the R-MAT marginal over
/// its own type's ids (source bits 1 with probability c + d, destination b + d), so both ends
/// have skewed degrees, then scramble them by each type's own permutation. A reverse relation
/// holds exactly the stored edges of its relation reversed. Labels and splits are those of the
/// model on the labelled type's ids; every type with features gets rows of the feature model
/// (the labelled type's carry its classes, the others one centroid).
/// Throws InvalidArgument for bad options (naming the option), IoError for I/O failures.
GenerateReport generate_dataset(const std::string& dir, const GenerateOptions& options, ThreadPool& pool);

/// The report of generate_dataset(dir, options) as `graphtier generate --json` prints it: a JSON
/// object, indented by 2.
std::string report_json(const std::string& dir, const GenerateOptions& options, const GenerateReport& report);

}  // namespace graphtier::graph
