// The partition writer: plan the bounds, then write every rank's graph/ and features/ datasets
// and the manifests into one staged directory, renamed into place as a whole.
#include "graphtier/prep/partition.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/test_hook.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/graph/staged_directory.hpp"
#include "partition_manifest.hpp"

namespace graphtier::prep {
namespace {

using Clock = std::chrono::steady_clock;

/// Bytes per buffered copy: large enough for sequential speed, small next to any machine.
constexpr int64_t kCopyBytes = int64_t{8} << 20;
/// indptr entries rewritten per block.
constexpr int64_t kIndptrBlock = int64_t{1} << 16;

/// total * i / n without overflowing int64 (total, n >= 0, i <= n).
int64_t share(int64_t total, int64_t i, int64_t n) { return (total / n) * i + (total % n) * i / n; }

/// The node arrays (and a link split's seed edges, global ids too) graph/ copies unchanged from the source.
constexpr const char* kNodeArrays[] = {"labels", "train", "valid", "test", "permutation", "hotness",
                                       "node_time", "link_train", "link_valid", "link_test"};

std::string features_path(const graph::Dataset& source) {
  return source.dir() + "/" + source.manifest().files.at("features").path;
}

int64_t file_bytes(const graph::Manifest& m, const char* array) {
  const auto it = m.files.find(array);
  return it == m.files.end() ? 0 : static_cast<int64_t>(it->second.bytes);
}

/// graph/ of a rank of process row `row`: the source's node arrays and its topology, whole or the
/// block row [t_i, t_{i+1}) (every other node with no in-edges, positions shifted by indptr[t_i]).
void write_graph(const graph::Dataset& source, const PartitionLayout& layout, int64_t row, const std::string& dir,
                 Progress& progress) {
  graph::DatasetWriter writer(dir, false);
  const graph::Manifest& m = source.manifest();
  const auto indptr = source.indptr();
  const auto [t0, t1] = layout.topology_range(row);
  const int64_t first = indptr[t0];
  const int64_t last = indptr[t1];
  {
    OutputFile& out = writer.open_array("indptr");
    std::vector<int64_t> block;
    block.reserve(kIndptrBlock);
    for (int64_t v = 0; v <= layout.num_nodes; v += kIndptrBlock) {
      const int64_t end = std::min(v + kIndptrBlock, layout.num_nodes + 1);
      block.clear();
      for (int64_t u = v; u < end; ++u) block.push_back(std::clamp(indptr[u], first, last) - first);
      out.write_span(std::span<const int64_t>(block));
      progress.add((end - v) * 8);
    }
  }
  std::visit(
      [&](auto indices) {
        OutputFile& out = writer.open_array("indices");
        const auto slice = indices.subspan(static_cast<size_t>(first), static_cast<size_t>(last - first));
        const size_t step = static_cast<size_t>(kCopyBytes) / sizeof(slice[0]);
        for (size_t e = 0; e < slice.size(); e += step) {
          const auto part = slice.subspan(e, std::min(step, slice.size() - e));
          out.write_span(part);
          progress.add(static_cast<int64_t>(part.size_bytes()));
        }
      },
      source.indices());
  if (source.is_hetero()) {
    // Each edge's relation, sliced as the indices are: the block row's columns keep theirs.
    const auto types = source.hetero().type_per_edge.subspan(static_cast<size_t>(first), static_cast<size_t>(last - first));
    OutputFile& out = writer.open_array("type_per_edge");
    for (size_t e = 0; e < types.size(); e += static_cast<size_t>(kCopyBytes)) {
      const auto part = types.subspan(e, std::min(static_cast<size_t>(kCopyBytes), types.size() - e));
      out.write_span(part);
      progress.add(static_cast<int64_t>(part.size()));
    }
  }
  for (const char* array : kNodeArrays) {
    if (!m.has(array)) continue;
    const std::string file = source.dir() + "/" + m.files.at(array).path;
    const MappedFile mapped(file);
    writer.open_array(array).write(mapped.data(), mapped.size());
    progress.add(static_cast<int64_t>(mapped.size()));
  }
  graph::Manifest out = m;
  out.features = graph::FeatureLayout{};
  for (graph::NodeTypeEntry& type : out.hetero.node_types) type.features = graph::FeatureLayout{};  // in features/
  out.num_edges = last - first;
  out.source = detail::concat(m.source.empty() ? "" : m.source + "; ", "partition ", layout.ranks, "x",
                              layout.replication, " ", partition_graph_name(layout.graph), ": graph of process row ",
                              row);
  writer.commit(out);
}

/// Appends source feature rows [lo, hi) to `out` through `buffer` (kCopyBytes or one row).
void copy_rows(int fd, const std::string& path, int64_t stride, int64_t lo, int64_t hi, std::vector<std::byte>& buffer,
               OutputFile& out, Progress& progress) {
  const int64_t rows_per_block = std::max<int64_t>(1, kCopyBytes / stride);
  buffer.resize(static_cast<size_t>(std::min(rows_per_block, std::max<int64_t>(hi - lo, 1)) * stride));
  for (int64_t v = lo; v < hi; v += rows_per_block) {
    const int64_t n = std::min(rows_per_block, hi - v);
    const auto bytes = static_cast<size_t>(n * stride);
    pread_exact(fd, buffer.data(), bytes, static_cast<uint64_t>(v * stride), path);
    out.write(buffer.data(), bytes);
    progress.add(n * stride);
  }
}

/// features/ of a typed source's rank: a typed dataset with the source's node types, relations
/// and per-type table layouts, no edges, and type t's local rows [b_t,i, b_t,i+1) as its nodes of
/// type t (node_type_offset the running sum of the local counts), each table holding those rows.
void write_typed_features(const graph::Dataset& source, const PartitionLayout& layout, int64_t row,
                          graph::DatasetWriter& writer, graph::Manifest& out, Progress& progress) {
  const graph::HeteroSchema& schema = source.schema();
  graph::HeteroSchema local = schema;
  local.labelled_type = -1;  // features/ has no labels
  local.node_type_offset.assign(1, 0);
  writer.open_array("type_per_edge");
  std::vector<std::byte> buffer;
  for (int32_t t = 0; t < schema.num_node_types(); ++t) {
    const std::vector<int64_t>& b = layout.type_feature_bounds[static_cast<size_t>(t)];
    const int64_t lo = b[static_cast<size_t>(row)];
    const int64_t hi = b[static_cast<size_t>(row + 1)];
    local.node_type_offset.push_back(local.node_type_offset.back() + (hi - lo));
    const graph::FeatureLayout& f = schema.node_types[static_cast<size_t>(t)].features;
    if (f.dim == 0) continue;
    const std::string array = graph::HeteroSchema::feature_array(schema.node_types[static_cast<size_t>(t)].name);
    const std::string path = source.dir() + "/" + source.manifest().files.at(array).path;
    const FileDescriptor fd(path, O_RDONLY);
    // The type's table starts at its first id: row v - o_t of the file is node v.
    const int64_t first = schema.node_type_offset[static_cast<size_t>(t)];
    copy_rows(fd.get(), path, f.row_stride, lo - first, hi - first, buffer, writer.open_array(array), progress);
  }
  out.hetero = std::move(local);
}

/// features/ of a rank of process row `row`: its local rows (the hot prefix, then its block; a
/// typed source's rows per type, write_typed_features) as a dataset with no edges and no node data.
void write_features(const graph::Dataset& source, const PartitionLayout& layout, int64_t row, const std::string& dir,
                    Progress& progress) {
  graph::DatasetWriter writer(dir, false);
  const graph::Manifest& m = source.manifest();
  const int64_t n_local = layout.local_rows(row);
  writer.open_array("indptr").write_zeros(static_cast<size_t>(n_local + 1) * sizeof(int64_t));
  progress.add((n_local + 1) * 8);
  writer.open_array("indices");
  graph::Manifest out;
  if (layout.typed()) {
    write_typed_features(source, layout, row, writer, out, progress);
  } else if (source.has_features()) {
    const std::string path = features_path(source);
    const FileDescriptor fd(path, O_RDONLY);
    const int64_t stride = m.features.row_stride;
    std::vector<std::byte> buffer;
    OutputFile& rows = writer.open_array("features");
    const auto [lo, hi] = layout.owned_range(row);
    copy_rows(fd.get(), path, stride, 0, layout.hot_rows, buffer, rows, progress);
    copy_rows(fd.get(), path, stride, lo, hi, buffer, rows, progress);
  }
  out.name = m.name;
  out.num_nodes = n_local;
  out.num_edges = 0;
  out.indices_dtype = graph::index_dtype_for(n_local);
  out.features = m.features;
  out.source = detail::concat("partition ", layout.ranks, "x", layout.replication, ": feature rows of process row ",
                              row);
  writer.commit(out);
}

void write_text(const std::string& path, const std::string& text) {
  OutputFile out(path);
  out.write(text.data(), text.size());
  out.close();
}

void make_directory(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0) GRAPHTIER_THROW_ERRNO(path, ": cannot create directory: ", std::strerror(errno));
}

/// Bytes the partition's arrays take on disk (manifests aside).
double output_bytes(const graph::Dataset& source, const PartitionLayout& layout) {
  const graph::Manifest& m = source.manifest();
  double node_arrays = 0;
  for (const char* array : kNodeArrays) node_arrays += static_cast<double>(file_bytes(m, array));
  const double index_bytes = static_cast<double>(dtype_size(m.indices_dtype));
  double total = 0;
  for (int64_t k = 0; k < layout.ranks; ++k) {
    const int64_t row = k / layout.replication;
    const auto [t0, t1] = layout.topology_range(row);
    const double edges = static_cast<double>(source.indptr()[t1] - source.indptr()[t0]);
    const double local = static_cast<double>(layout.local_rows(row));
    total += static_cast<double>(layout.num_nodes + 1) * 8 + edges * (index_bytes + (source.is_hetero() ? 1 : 0)) +
             node_arrays;
    total += (local + 1) * 8 + (source.has_features() ? local * static_cast<double>(m.features.row_stride) : 0.0);
    for (size_t t = 0; t < layout.type_feature_bounds.size(); ++t) {
      const std::vector<int64_t>& b = layout.type_feature_bounds[t];
      total += static_cast<double>(b[static_cast<size_t>(row + 1)] - b[static_cast<size_t>(row)]) *
               static_cast<double>(source.schema().node_types[t].features.row_stride);
    }
  }
  return total;
}

}  // namespace

std::string_view partition_graph_name(PartitionGraph g) {
  return g == PartitionGraph::kReplicated ? "replicated" : "partitioned";
}

std::string_view partition_balance_name(PartitionBalance b) {
  switch (b) {
    case PartitionBalance::kBytes: return "bytes";
    case PartitionBalance::kHotness: return "hotness";
    case PartitionBalance::kAuto: return "auto";
  }
  return "?";
}

PartitionGraph parse_partition_graph(std::string_view text) {
  if (text == "replicated") return PartitionGraph::kReplicated;
  if (text == "partitioned") return PartitionGraph::kPartitioned;
  throw InvalidArgument(detail::concat("--graph: unknown mode '", text, "' (use replicated or partitioned)"));
}

PartitionBalance parse_partition_balance(std::string_view text) {
  if (text == "bytes") return PartitionBalance::kBytes;
  if (text == "hotness") return PartitionBalance::kHotness;
  if (text == "auto") return PartitionBalance::kAuto;
  throw InvalidArgument(detail::concat("--balance: unknown balance '", text, "' (use auto, bytes or hotness)"));
}

HotRows HotRows::parse(std::string_view text) {
  HotRows h;
  if (!text.empty() && text.back() == '%') {
    const std::string number(text.substr(0, text.size() - 1));
    char* end = nullptr;
    const double p = std::strtod(number.c_str(), &end);
    GRAPHTIER_EXPECTS(!number.empty() && end == number.c_str() + number.size() && std::isfinite(p) && p >= 0 &&
                          p <= 100,
                      InvalidArgument, "--hot-replicated: invalid percentage '", text, "' (use e.g. 5% or 1000)");
    h.percent = p;
    return h;
  }
  try {
    h.count = parse_count(text);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(detail::concat("--hot-replicated: ", e.what()));
  }
  GRAPHTIER_EXPECTS(h.count >= 0, InvalidArgument, "--hot-replicated must not be negative, got '", text, "'");
  return h;
}

int64_t HotRows::resolve(int64_t num_nodes) const {
  if (percent >= 0) {
    return std::min(num_nodes, static_cast<int64_t>(std::floor(static_cast<double>(num_nodes) * percent / 100.0)));
  }
  GRAPHTIER_EXPECTS(count <= num_nodes, InvalidArgument, "--hot-replicated ", count, " exceeds the ", num_nodes,
                    " nodes of the dataset");
  return count;
}

std::pair<int64_t, int64_t> PartitionLayout::owned_range(int64_t row) const {
  return {std::max(feature_bounds[row], hot_rows), std::max(feature_bounds[row + 1], hot_rows)};
}

std::vector<std::pair<int64_t, int64_t>> PartitionLayout::local_ranges(int64_t row) const {
  if (!typed()) return {{0, hot_rows}, owned_range(row)};
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const std::vector<int64_t>& b : type_feature_bounds) {
    ranges.emplace_back(b[static_cast<size_t>(row)], b[static_cast<size_t>(row + 1)]);
  }
  return ranges;
}

int64_t PartitionLayout::local_rows(int64_t row) const {
  int64_t n = 0;
  for (const auto& [lo, hi] : local_ranges(row)) n += hi - lo;
  return n;
}

std::pair<int64_t, int64_t> PartitionLayout::topology_range(int64_t row) const {
  if (graph == PartitionGraph::kReplicated) return {0, num_nodes};
  return {topology_bounds[row], topology_bounds[row + 1]};
}

std::vector<int64_t> bounds_by_rows(int64_t num_nodes, int64_t hot_rows, int64_t process_rows) {
  std::vector<int64_t> b(static_cast<size_t>(process_rows + 1));
  b.front() = 0;
  for (int64_t i = 1; i < process_rows; ++i) b[i] = hot_rows + share(num_nodes - hot_rows, i, process_rows);
  b.back() = num_nodes;
  return b;
}

std::vector<int64_t> bounds_by_scores(std::span<const double> scores, int64_t hot_rows, int64_t process_rows) {
  const auto n = static_cast<int64_t>(scores.size());
  double total = 0;
  for (int64_t v = hot_rows; v < n; ++v) {
    GRAPHTIER_EXPECTS(scores[v] >= 0 && std::isfinite(scores[v]), InvalidArgument,
                      "--balance hotness needs finite non-negative scores, but node ", v, " has ", scores[v]);
    total += scores[v];
  }
  GRAPHTIER_EXPECTS(total > 0 || hot_rows == n, InvalidArgument,
                    "--balance hotness: the scores of nodes [", hot_rows, ", ", n, ") sum to 0 (use --balance bytes)");
  std::vector<int64_t> b(static_cast<size_t>(process_rows + 1));
  b.front() = 0;
  // The prefix sum is accumulated in the order `total` was, so it reaches `total` exactly at n.
  double prefix = 0;
  int64_t v = hot_rows;
  for (int64_t i = 1; i < process_rows; ++i) {
    const double target = total * static_cast<double>(i) / static_cast<double>(process_rows);
    while (v < n && prefix < target) prefix += scores[v++];
    b[i] = v;
  }
  b.back() = n;
  return b;
}

std::vector<int64_t> bounds_by_edges(std::span<const int64_t> indptr, int64_t process_rows) {
  const auto n = static_cast<int64_t>(indptr.size()) - 1;
  const int64_t e = indptr.back();
  std::vector<int64_t> t(static_cast<size_t>(process_rows + 1));
  t.front() = 0;
  for (int64_t i = 1; i < process_rows; ++i) {
    t[i] = std::lower_bound(indptr.begin(), indptr.end(), share(e, i, process_rows)) - indptr.begin();
  }
  t.back() = n;
  return t;
}

PartitionLayout plan_partition(const graph::Dataset& source, const PartitionOptions& o) {
  const int64_t n = source.num_nodes();
  const bool typed = source.is_hetero();
  GRAPHTIER_EXPECTS(!source.has_edge_time(), Unsupported, source.dir(),
                    " has edge times (edge_time.bin); partition does not slice them with the topology yet");
  GRAPHTIER_EXPECTS(o.ranks >= 1, InvalidArgument, "--ranks must be >= 1, got ", o.ranks);
  GRAPHTIER_EXPECTS(o.replication >= 1, InvalidArgument, "--replication must be >= 1, got ", o.replication);
  GRAPHTIER_EXPECTS(o.ranks % o.replication == 0, InvalidArgument, "--replication ", o.replication,
                    " does not divide --ranks ", o.ranks);
  PartitionLayout l;
  l.ranks = o.ranks;
  l.replication = o.replication;
  l.process_rows = o.ranks / o.replication;
  l.graph = o.graph;
  l.balance = o.balance != PartitionBalance::kAuto ? o.balance
              : source.has_hotness()                ? PartitionBalance::kHotness
                                                    : PartitionBalance::kBytes;
  l.num_nodes = n;
  l.num_edges = source.num_edges();
  GRAPHTIER_EXPECTS(l.process_rows <= n, InvalidArgument, "--ranks ", o.ranks, " / --replication ", o.replication,
                    " = ", l.process_rows, " process rows exceed the ", n, " nodes of ", source.dir());
  l.hot_rows = o.hot_rows.resolve(n);
  if (typed) {
    // A typed dataset's graph/ keeps its types (type_per_edge sliced as indices); features/ is a
    // typed dataset holding, per type, that type's block of its own table (rows of different
    // widths are never pooled into one id split).
    GRAPHTIER_EXPECTS(l.hot_rows == 0, Unsupported, source.dir(), " is a typed dataset; --hot-replicated (",
                      l.hot_rows, " rows) does not replicate per-type rows yet (use 0)");
    GRAPHTIER_EXPECTS(o.balance != PartitionBalance::kHotness, Unsupported, source.dir(),
                      " is a typed dataset; --balance hotness does not split per-type tables yet (use bytes)");
    l.balance = PartitionBalance::kBytes;
    const std::vector<int64_t>& offsets = source.schema().node_type_offset;
    for (size_t t = 0; t + 1 < offsets.size(); ++t) {
      std::vector<int64_t> b = bounds_by_rows(offsets[t + 1] - offsets[t], 0, l.process_rows);
      for (int64_t& v : b) v += offsets[t];
      l.type_feature_bounds.push_back(std::move(b));
    }
  } else if (l.balance == PartitionBalance::kHotness) {
    GRAPHTIER_EXPECTS(source.has_hotness(), InvalidArgument, "--balance hotness needs the source's hotness.bin, but ",
                      source.dir(), " has none (run graphtier prepare first, or use --balance bytes)");
    l.feature_bounds = bounds_by_scores(source.hotness(), l.hot_rows, l.process_rows);
  } else {
    l.feature_bounds = bounds_by_rows(n, l.hot_rows, l.process_rows);
  }
  if (o.graph == PartitionGraph::kPartitioned) {
    l.topology_bounds = bounds_by_edges(source.indptr(), l.process_rows);
    for (int64_t i = 0; i < l.process_rows; ++i) l.edge_offsets.push_back(source.indptr()[l.topology_bounds[i]]);
  } else {
    l.topology_bounds = {0, n};
    l.edge_offsets = {0};
  }
  return l;
}

PartitionReport write_partition(const std::string& source_dir, const std::string& output_dir,
                                const PartitionOptions& options, ThreadPool& pool) {
  const auto start = Clock::now();
  const graph::Dataset source = graph::Dataset::open(source_dir);
  PartitionReport report;
  report.layout = plan_partition(source, options);
  const PartitionLayout& layout = report.layout;

  impl::PartitionManifest manifest;
  manifest.layout = layout;
  manifest.source = impl::describe_source(source);
  for (int64_t k = 0; k < layout.ranks; ++k) manifest.rank_dirs.push_back(impl::rank_dir_name(k));

  // Replaces only an empty directory or a partition (a typo must not swap away a home directory).
  graph::StagedDirectory staged(output_dir, options.overwrite, kPartitionManifestName, "--out");
  const std::string top_manifest = impl::partition_json(manifest);
  // Every rank's manifest holds the whole grid: P + 1 copies, each growing with P.
  const double manifest_bytes = static_cast<double>(layout.ranks + 1) * static_cast<double>(top_manifest.size() + 32);
  const double needed = output_bytes(source, layout) + manifest_bytes;
  const int64_t free_bytes = staged.free_bytes();
  if (free_bytes >= 0 && needed > static_cast<double>(free_bytes)) {
    throw IoError(ENOSPC, detail::concat("--out ", staged.dir(), ": the partition needs ", format_bytes(needed),
                                         " but its file system has ", format_bytes(static_cast<double>(free_bytes)),
                                         " free"));
  }

  Progress progress("partition", static_cast<int64_t>(needed - manifest_bytes), "B");
  pool.parallel_for(0, layout.ranks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t row = k / layout.replication;
      const std::string dir = staged.temp_dir() + "/" + manifest.rank_dirs[k];
      make_directory(dir);
      write_graph(source, layout, row, dir + "/graph", progress);
      write_features(source, layout, row, dir + "/features", progress);
      impl::PartitionManifest own = manifest;
      own.rank = k;
      write_text(dir + "/" + kPartitionManifestName, impl::partition_json(own));
      fsync_directory(dir);
      park_point("partition.rank_written");  // test hook: some ranks written, the directory not staged
    }
  });
  write_text(staged.temp_dir() + "/" + kPartitionManifestName, top_manifest);
  progress.finish();
  staged.commit("partition.staged", "partition.swapped");
  report.bytes_written = static_cast<int64_t>(needed - manifest_bytes);
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace graphtier::prep
