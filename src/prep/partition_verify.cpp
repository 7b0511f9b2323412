// `graphtier verify` of a partition directory or of one rank's directory: the datasets fully,
// the manifest against itself and against the datasets, and the partition against its source.
#include <algorithm>
#include <filesystem>
#include <optional>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/prep/partition.hpp"
#include "partition_manifest.hpp"

namespace graphtier::prep {
namespace {

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  const MappedFile file(path);
  return {reinterpret_cast<const char*>(file.data()), file.size()};
}

impl::PartitionManifest read_manifest(const std::string& path) { return impl::parse_partition_json(read_text(path), path); }

struct RankDatasets {
  int64_t rank = 0;
  std::string dir;
  graph::Dataset graph;
  graph::Dataset features;
};

void expect(bool cond, const std::string& path, const std::string& problem) {
  if (!cond) throw FormatError(path, problem);
}

/// A copy of an array the source recorded must have the recorded checksum.
void expect_source_copy(const graph::Dataset& d, const std::string& array, const impl::PartitionSource& source) {
  if (!d.manifest().has(array)) return;
  const graph::FileEntry& entry = d.manifest().files.at(array);
  const auto it = source.files.find(entry.path);
  expect(it != source.files.end(), d.dir() + "/" + entry.path,
         "the source recorded in partition.json has no " + entry.path);
  expect(it->second == entry.xxh3, d.dir() + "/" + entry.path,
         detail::concat("xxh3 ", entry.xxh3, " differs from the source's ", it->second, " recorded in partition.json"));
}

/// The datasets of rank k against the manifest.
void check_rank(const PartitionLayout& l, const impl::PartitionSource& source, const RankDatasets& r) {
  const int64_t row = r.rank / l.replication;
  const graph::Dataset& g = r.graph;
  const std::string gpath = g.dir() + "/" + graph::kManifestName;
  expect(g.num_nodes() == l.num_nodes, gpath,
         detail::concat("num_nodes ", g.num_nodes(), " differs from partition.json's ", l.num_nodes));
  expect(!g.has_features(), gpath, "graph/ must hold no features");
  const auto [t0, t1] = l.topology_range(row);
  int64_t edges = l.num_edges;
  if (l.graph == PartitionGraph::kPartitioned) {
    const int64_t next = row + 1 < l.process_rows ? l.edge_offsets[row + 1] : l.num_edges;
    edges = next - l.edge_offsets[row];
  }
  expect(g.num_edges() == edges, gpath,
         detail::concat("num_edges ", g.num_edges(), " differs from the ", edges, " edges partition.json gives rank ",
                        r.rank, " (topology [", t0, ", ", t1, "))"));
  expect(g.indptr()[t0] == 0 && g.indptr()[t1] == g.num_edges(), g.dir() + "/indptr.bin",
         detail::concat("nodes outside the block row [", t0, ", ", t1, ") have in-edges"));
  for (const char* array : {"labels", "train", "valid", "test", "permutation", "hotness", "node_time"}) {
    expect_source_copy(g, array, source);
  }
  if (l.graph == PartitionGraph::kReplicated) {
    expect_source_copy(g, "indptr", source);
    expect_source_copy(g, "indices", source);
    expect_source_copy(g, "type_per_edge", source);
  }
  const graph::Dataset& f = r.features;
  const std::string fpath = f.dir() + "/" + graph::kManifestName;
  expect(f.num_nodes() == l.local_rows(row), fpath,
         detail::concat("num_nodes ", f.num_nodes(), " differs from the ", l.local_rows(row),
                        " local rows partition.json gives process row ", row));
  expect(f.num_edges() == 0, fpath, "features/ must hold no edges");
  if (l.typed()) {
    // A typed dataset whose type t holds the rows of local range t (the dataset reader checked
    // each table's size against its type's count).
    const graph::HeteroSchema& s = f.schema();
    const auto ranges = l.local_ranges(row);
    expect(static_cast<size_t>(s.num_node_types()) == ranges.size(), fpath,
           detail::concat("features/ has ", s.num_node_types(), " node types, partition.json's type_feature_bounds ",
                          ranges.size()));
    for (int32_t t = 0; t < s.num_node_types(); ++t) {
      const auto [lo, hi] = ranges[static_cast<size_t>(t)];
      expect(s.num_nodes_of(t) == hi - lo, fpath,
             detail::concat("node type ", s.node_types[static_cast<size_t>(t)].name, " has ", s.num_nodes_of(t),
                            " rows, partition.json gives process row ", row, " [", lo, ", ", hi, ")"));
    }
  }
}

bool same_layout(const graph::FeatureLayout& a, const graph::FeatureLayout& b) {
  return a.row_stride == b.row_stride && a.dim == b.dim && a.dtype == b.dtype;
}

/// The source at `path` must be the one recorded, with the feature layouts of `features` (a
/// rank's features/: its global layout and, typed, each type's).
void check_source(const impl::PartitionManifest& m, const std::string& manifest_path, const std::string& source_dir,
                  const graph::Dataset& features) {
  const std::string path = source_dir + "/" + graph::kManifestName;
  const std::string text = read_text(path);
  Checksum checksum;
  checksum.update(text.data(), text.size());
  expect(checksum.hex() == m.source.manifest_xxh3, manifest_path,
         detail::concat("belongs to another source: ", path, " has xxh3 ", checksum.hex(), ", partition.json records ",
                        m.source.manifest_xxh3, " (", m.source.path, ")"));
  const graph::Manifest sm = graph::Manifest::from_json(text, path);
  std::map<std::string, std::string> files;
  for (const auto& [array, entry] : sm.files) files[entry.path] = entry.xxh3;
  for (const auto& [file, hash] : m.source.files) {
    const auto it = files.find(file);
    expect(it != files.end() && it->second == hash, manifest_path,
           detail::concat("belongs to another source: ", file, " of ", source_dir, " has xxh3 ",
                          it == files.end() ? std::string("(missing)") : it->second, ", partition.json records ", hash));
  }
  expect(files.size() == m.source.files.size(), manifest_path,
         detail::concat("belongs to another source: ", source_dir, " has ", files.size(), " files, partition.json records ",
                        m.source.files.size()));
  expect(sm.num_nodes == m.layout.num_nodes && sm.num_edges == m.layout.num_edges, manifest_path,
         detail::concat("belongs to another source: ", source_dir, " has ", sm.num_nodes, " nodes and ", sm.num_edges,
                        " edges"));
  bool same = same_layout(sm.features, features.manifest().features) &&
              sm.hetero.node_types.size() == features.schema().node_types.size();
  for (size_t t = 0; same && t < sm.hetero.node_types.size(); ++t) {
    same = sm.hetero.node_types[t].name == features.schema().node_types[t].name &&
           same_layout(sm.hetero.node_types[t].features, features.schema().node_types[t].features);
  }
  expect(same, manifest_path, detail::concat("the feature rows differ in layout from the source's (", source_dir, ")"));
}

}  // namespace

bool is_partition_directory(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir + "/" + kPartitionManifestName, ec);
}

std::string read_partition_json(const std::string& path) { return impl::partition_json(read_manifest(path)); }

PartitionVerifyReport verify_partition(const std::string& dir, const std::string& source_dir) {
  PartitionVerifyReport report;
  report.dir = dir;
  const std::string manifest_path = dir + "/" + kPartitionManifestName;
  const impl::PartitionManifest m = read_manifest(manifest_path);
  const PartitionLayout& l = m.layout;
  const std::string top_text = impl::partition_json([&] {
    impl::PartitionManifest top = m;
    top.rank.reset();
    return top;
  }());

  std::vector<RankDatasets> ranks;
  const auto open_rank = [&](int64_t k, const std::string& rank_dir) {
    ranks.push_back({k, rank_dir, graph::Dataset::open(rank_dir + "/graph"), graph::Dataset::open(rank_dir + "/features")});
  };
  if (m.rank) {
    report.rank = m.rank;
    // Copied alone, a rank's directory may be renamed; a rank-NNNN name must still be its own.
    const std::string name = fs::path(dir).lexically_normal().filename().string();
    const std::string base = name.empty() ? fs::path(dir).lexically_normal().parent_path().filename().string() : name;
    expect(base.rfind("rank-", 0) != 0 || base == impl::rank_dir_name(*m.rank), manifest_path,
           detail::concat("\"rank\" ", *m.rank, " does not match the directory ", base));
    open_rank(*m.rank, dir);
  } else {
    for (int64_t k = 0; k < l.ranks; ++k) {
      const std::string rank_dir = dir + "/" + m.rank_dirs[k];
      const std::string own_path = rank_dir + "/" + kPartitionManifestName;
      impl::PartitionManifest own = read_manifest(own_path);
      expect(own.rank.has_value() && *own.rank == k, own_path,
             detail::concat("\"rank\" ", own.rank ? std::to_string(*own.rank) : std::string("(missing)"),
                            " does not match the directory ", m.rank_dirs[k]));
      own.rank.reset();
      expect(impl::partition_json(own) == top_text, own_path, "differs from " + manifest_path + " (other than \"rank\")");
      open_rank(k, rank_dir);
    }
  }

  uint64_t total = 0;
  for (const RankDatasets& r : ranks) {
    for (const graph::Dataset* d : {&r.graph, &r.features}) {
      for (const auto& [array, entry] : d->manifest().files) total += entry.bytes;
    }
  }
  {
    Progress progress("verify checksums", static_cast<int64_t>(total), "B");
    for (const RankDatasets& r : ranks) {
      r.graph.verify_checksums(&progress);
      r.features.verify_checksums(&progress);
      report.datasets += 2;
    }
    progress.finish();
  }
  report.bytes = total;

  const graph::FeatureLayout& features = ranks.front().features.manifest().features;
  for (const RankDatasets& r : ranks) {
    check_rank(l, m.source, r);
    const graph::FeatureLayout& own = r.features.manifest().features;
    expect(same_layout(own, features), r.features.dir() + "/" + graph::kManifestName,
           "the feature layout differs from " + ranks.front().features.dir() + "'s");
    for (size_t t = 0; t < r.features.schema().node_types.size(); ++t) {
      expect(same_layout(r.features.schema().node_types[t].features,
                         ranks.front().features.schema().node_types[t].features),
             r.features.dir() + "/" + graph::kManifestName,
             detail::concat("node type ", r.features.schema().node_types[t].name, "'s feature layout differs from ",
                            ranks.front().features.dir(), "'s"));
    }
  }

  std::error_code ec;
  if (!source_dir.empty() || fs::exists(m.source.path, ec)) {
    report.source_path = source_dir.empty() ? m.source.path : source_dir;
    check_source(m, manifest_path, report.source_path, ranks.front().features);
    report.source = "checked";
  } else {
    report.source = "skipped: the source " + m.source.path +
                    " recorded in partition.json does not exist (pass --source DATASET to check it)";
  }
  return report;
}

}  // namespace graphtier::prep
