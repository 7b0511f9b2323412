// partition.json: the partition manifest (docs/format.md, "Partition directory"), written and
// parsed with every consistency check that needs no other file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graphtier/prep/partition.hpp"

namespace graphtier::prep::impl {

struct PartitionSource {
  std::string name;
  std::string path;           // absolute, at partition time
  std::string manifest_xxh3;  // of the source's manifest.json bytes
  std::map<std::string, std::string> files;  // file name ("indptr.bin") -> xxh3, from its manifest
};

struct PartitionManifest {
  PartitionLayout layout;
  PartitionSource source;
  std::vector<std::string> rank_dirs;
  std::optional<int64_t> rank;  // only in a rank's own copy
};

/// "rank-0007".
std::string rank_dir_name(int64_t rank);

/// The manifest as JSON text, keys in the documented order.
std::string partition_json(const PartitionManifest& m);

/// Parses and checks partition.json text: format and version, ranks = process_rows x
/// replication, bounds covering [0, N) monotonically, edge offsets, local_ranges agreeing with
/// the bounds and hot_rows, rank directory names, the rank in [0, ranks). Throws FormatError
/// naming `path` and the field at fault.
PartitionManifest parse_partition_json(const std::string& text, const std::string& path);

/// The source's identity as recorded: name, absolute path, manifest.json's xxh3, file checksums.
PartitionSource describe_source(const graph::Dataset& source);

}  // namespace graphtier::prep::impl
