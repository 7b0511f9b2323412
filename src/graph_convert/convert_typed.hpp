// Typed (heterogeneous) inputs with one edge file per relation, as OGB-MAG's raw layout and IGBH's
// processed layout give them: their node types and relations set into the session's manifest,
// each relation's reverse added, and the typed topology written (docs/format.md, Heterogeneous
// datasets).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "convert_session.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::graph::detail {

/// One relation of the input: `src:name:dst`, its edges with ids local to each type.
struct RelationInput {
  std::string src, name, dst;
  std::unique_ptr<EdgeSource> edges;
};

/// The prefix of an added reverse relation's name: `dst:rev_<name>:src`, as PyG's ToUndirected
/// names them.
inline constexpr const char* kReversePrefix = "rev_";

/// Sets the session's typed layout: the node types in order with their counts (global ids by
/// type, in that order), the relations in order, then each relation's reverse `dst:rev_<name>:src`
/// in the same order (relation ids), so that every relation can be walked from either end; and
/// writes the typed CSC of all of them (write_typed_csc). Throws FormatError naming `source` for
/// a type name or relation that is malformed, repeated, or joins an undeclared type, or a reverse
/// whose name the input already uses; refuses ConvertOptions::symmetrize and num_nodes (the
/// reverses are added, each type's count is the input's).
void write_typed_input_topology(ConvertSession& session, const std::string& source, const std::vector<std::string>& types,
                                const std::vector<int64_t>& counts, const std::vector<RelationInput>& relations);

/// The names of `dir`'s subdirectories, sorted (none when it does not exist).
std::vector<std::string> subdirectories(const std::string& dir);

/// An OGB dataset's split/<name>, or the only subdirectory of split/ when no name is given; empty
/// when the dataset has no split/ directory. Throws InvalidArgument for a named split that does not
/// exist, or for several splits and no name.
std::string ogb_split_dir(const std::string& root, const std::string& name);

/// OGB heterogeneous node-property datasets (ogbn-mag) in their raw CSV layout; convert_ogb
/// dispatches here when raw/num-node-dict.csv.gz exists.
ConvertReport convert_ogb_hetero(const OgbInput& input, const std::string& out, const ConvertOptions& options,
                                 ThreadPool& pool);

}  // namespace graphtier::graph::detail
