// `partition`: the bounds of a (P/c) x c grid, and the partition directory checked against its
// source: a golden 8-node graph whose bounds are known by hand (both graph modes, P = 4, c = 2;
// P = 1; a hot prefix; hotness balancing), a generated graph with padded rows, and the refusals.
#include "graphtier/prep/partition.hpp"

#include <gtest/gtest.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph_generate/generate.hpp"
#include "test_util.hpp"

namespace graphtier::prep {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

int64_t index_at(const graph::IndexSpan& indices, int64_t e) {
  return std::visit([e](auto span) { return static_cast<int64_t>(span[e]); }, indices);
}

// 8 nodes, 14 edges; in-neighbours: 0 <- {1, 2, 3}, 1 <- {0}, 2 <- {0, 1}, 3 <- {}, 4 <- {5, 6, 7},
// 5 <- {4}, 6 <- {4, 5, 7}, 7 <- {0}. indptr = [0, 3, 4, 6, 6, 9, 10, 13, 14].
// Features float32 dim 3: row v = (10v, 10v + 1, 10v + 2). Hotness [8, 4, 2, 1, 1, 1, 1, 0].
std::string write_golden(const test::TempDir& tmp, bool with_hotness = true) {
  const std::string dir = tmp / (with_hotness ? "golden" : "golden-cold");
  graph::DatasetWriter w(dir, false);
  const std::vector<int64_t> indptr{0, 3, 4, 6, 6, 9, 10, 13, 14};
  const std::vector<int32_t> indices{1, 2, 3, 0, 0, 1, 5, 6, 7, 4, 4, 5, 7, 0};
  std::vector<float> features;
  for (int v = 0; v < 8; ++v) {
    for (int j = 0; j < 3; ++j) features.push_back(static_cast<float>(10 * v + j));
  }
  const std::vector<int32_t> labels{0, 1, 0, 1, 0, 1, -1, 1};
  const std::vector<int64_t> train{0, 1, 2, 5}, valid{3, 7}, test{4};
  const std::vector<int64_t> perm{7, 6, 5, 4, 3, 2, 1, 0};
  const std::vector<double> hotness{8, 4, 2, 1, 1, 1, 1, 0};
  w.write_array("indptr", std::span<const int64_t>(indptr));
  w.write_array("indices", std::span<const int32_t>(indices));
  w.write_array("features", std::span<const float>(features));
  w.write_array("labels", std::span<const int32_t>(labels));
  w.write_array("train", std::span<const int64_t>(train));
  w.write_array("valid", std::span<const int64_t>(valid));
  w.write_array("test", std::span<const int64_t>(test));
  w.write_array("permutation", std::span<const int64_t>(perm));
  if (with_hotness) w.write_array("hotness", std::span<const double>(hotness));
  graph::Manifest m;
  m.name = "golden";
  m.num_nodes = 8;
  m.num_edges = 14;
  m.indices_dtype = DType::kInt32;
  m.features = graph::FeatureLayout::make(3, DType::kFloat32, 0);
  m.num_classes = 2;
  m.hotness = with_hotness ? "test" : "";
  w.commit(m);
  return dir;
}

Json read_json(const std::string& path) { return Json::parse(test::read_file(path)); }

PartitionOptions grid(int64_t ranks, int64_t replication, PartitionGraph g = PartitionGraph::kReplicated) {
  PartitionOptions o;
  o.ranks = ranks;
  o.replication = replication;
  o.graph = g;
  o.balance = PartitionBalance::kBytes;  // the golden bounds below are equal row counts
  return o;
}

/// Every rank's datasets against the source: graph/ holds the source's node arrays and its whole
/// topology or its block row (in-edges of [t_i, t_{i+1}) in source order, none elsewhere), and
/// features/ row r is the source row of global id local_ranges[r], byte for byte.
void expect_partition_matches(const std::string& source_dir, const std::string& out) {
  const auto source = graph::Dataset::open(source_dir);
  const Json top = read_json(out + "/partition.json");
  const int64_t ranks = top["ranks"], c = top["replication"], n = top["num_nodes"];
  ASSERT_EQ(n, source.num_nodes());
  ASSERT_EQ(top["num_edges"].get<int64_t>(), source.num_edges());
  ASSERT_EQ(top["rank_dirs"].size(), static_cast<size_t>(ranks));
  const bool partitioned = top["graph"] == "partitioned";
  const int64_t stride = source.manifest().features.row_stride;
  for (int64_t k = 0; k < ranks; ++k) {
    SCOPED_TRACE("rank " + std::to_string(k));
    const std::string dir = out + "/" + top["rank_dirs"][k].get<std::string>();
    Json own = read_json(dir + "/partition.json");
    EXPECT_EQ(own["rank"].get<int64_t>(), k);
    own.erase("rank");
    EXPECT_EQ(own, top);
    const int64_t row = k / c;
    const auto g = graph::Dataset::open(dir + "/graph");
    g.verify_checksums();
    ASSERT_EQ(g.num_nodes(), n);
    EXPECT_FALSE(g.has_features());
    const int64_t t0 = partitioned ? top["topology_bounds"][row].get<int64_t>() : 0;
    const int64_t t1 = partitioned ? top["topology_bounds"][row + 1].get<int64_t>() : n;
    const int64_t offset = top["edge_offsets"][partitioned ? row : 0];
    EXPECT_EQ(offset, source.indptr()[t0]);
    for (int64_t v = 0; v < n; ++v) {
      const bool kept = v >= t0 && v < t1;
      ASSERT_EQ(g.in_degree(v), kept ? source.in_degree(v) : 0) << "node " << v;
      if (!kept) continue;
      ASSERT_EQ(g.indptr()[v] + offset, source.indptr()[v]) << "node " << v;
      for (int64_t e = source.indptr()[v]; e < source.indptr()[v + 1]; ++e) {
        ASSERT_EQ(index_at(g.indices(), e - offset), index_at(source.indices(), e)) << "edge " << e;
      }
    }
    // Node arrays are copied as they are: the same checksums.
    for (const char* array : {"labels", "train", "valid", "test", "permutation", "hotness"}) {
      ASSERT_EQ(g.manifest().has(array), source.manifest().has(array)) << array;
      if (g.manifest().has(array)) {
        EXPECT_EQ(g.manifest().files.at(array).xxh3, source.manifest().files.at(array).xxh3) << array;
      }
    }
    EXPECT_EQ(g.manifest().num_classes, source.manifest().num_classes);

    const auto f = graph::Dataset::open(dir + "/features");
    f.verify_checksums();
    EXPECT_EQ(f.num_edges(), 0);
    EXPECT_FALSE(f.has_labels());
    EXPECT_EQ(f.manifest().features.row_stride, stride);
    EXPECT_EQ(f.manifest().features.dtype, source.manifest().features.dtype);
    int64_t r = 0;
    for (const Json& range : top["local_ranges"][row]) {
      for (int64_t v = range[0]; v < range[1].get<int64_t>(); ++v, ++r) {
        ASSERT_LT(r, f.num_nodes());
        ASSERT_EQ(std::memcmp(f.feature_bytes().data() + r * stride, source.feature_bytes().data() + v * stride,
                              static_cast<size_t>(stride)),
                  0)
            << "local row " << r << " = global " << v;
      }
    }
    EXPECT_EQ(r, f.num_nodes());
  }
}

TEST(PartitionBounds, RowsEdgesAndScores) {
  EXPECT_EQ(bounds_by_rows(10, 0, 3), (std::vector<int64_t>{0, 3, 6, 10}));
  EXPECT_EQ(bounds_by_rows(10, 2, 3), (std::vector<int64_t>{0, 4, 7, 10}));
  EXPECT_EQ(bounds_by_rows(10, 10, 2), (std::vector<int64_t>{0, 10, 10}));
  EXPECT_EQ(bounds_by_rows(5, 0, 1), (std::vector<int64_t>{0, 5}));
  const std::vector<int64_t> indptr{0, 3, 4, 6, 6, 9, 10, 13, 14};
  EXPECT_EQ(bounds_by_edges(indptr, 2), (std::vector<int64_t>{0, 5, 8}));
  EXPECT_EQ(bounds_by_edges(indptr, 4), (std::vector<int64_t>{0, 1, 5, 6, 8}));  // targets 3, 7, 10
  EXPECT_EQ(bounds_by_edges(indptr, 1), (std::vector<int64_t>{0, 8}));
  const std::vector<double> hot{8, 4, 2, 1, 1, 1, 1, 0};
  EXPECT_EQ(bounds_by_scores(hot, 0, 2), (std::vector<int64_t>{0, 2, 8}));  // 8 + 4 reaches 9 of 18
  EXPECT_EQ(bounds_by_scores(hot, 2, 2), (std::vector<int64_t>{0, 4, 8}));  // 2 + 1 reaches 3 of 6
  EXPECT_EQ(bounds_by_scores(hot, 0, 3), (std::vector<int64_t>{0, 1, 2, 8}));
  const std::vector<double> zeros{1, 0, 0};
  EXPECT_THROW(bounds_by_scores(zeros, 1, 2), InvalidArgument);
  const std::vector<double> negative{1, -1, 2};
  EXPECT_THROW(bounds_by_scores(negative, 0, 2), InvalidArgument);
}

TEST(PartitionBounds, HotRowsParse) {
  EXPECT_EQ(HotRows::parse("0").resolve(8), 0);
  EXPECT_EQ(HotRows::parse("3").resolve(8), 3);
  EXPECT_EQ(HotRows::parse("25%").resolve(8), 2);
  EXPECT_EQ(HotRows::parse("30%").resolve(8), 2);  // rounds down
  EXPECT_EQ(HotRows::parse("100%").resolve(8), 8);
  EXPECT_EQ(HotRows::parse("8").resolve(8), 8);
  EXPECT_THROW(HotRows::parse("9").resolve(8), InvalidArgument);
  EXPECT_THROW(HotRows::parse("x"), InvalidArgument);
  EXPECT_THROW(HotRows::parse("101%"), InvalidArgument);
  EXPECT_THROW(HotRows::parse("-1%"), InvalidArgument);
  EXPECT_THROW(HotRows::parse("%"), InvalidArgument);
}

TEST(Partition, GoldenReplicatedFourRanksTwoReplicas) {
  test::TempDir tmp;
  const std::string src = write_golden(tmp);
  ThreadPool pool(2);
  const auto report = write_partition(src, tmp / "out", grid(4, 2), pool);
  EXPECT_EQ(report.layout.process_rows, 2);
  const Json j = read_json(tmp / "out/partition.json");
  EXPECT_EQ(j["format"], "graphtier-partition");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["ranks"], 4);
  EXPECT_EQ(j["replication"], 2);
  EXPECT_EQ(j["process_rows"], 2);
  EXPECT_EQ(j["graph"], "replicated");
  EXPECT_EQ(j["balance"], "bytes");
  EXPECT_EQ(j["num_nodes"], 8);
  EXPECT_EQ(j["num_edges"], 14);
  EXPECT_EQ(j["hot_rows"], 0);
  EXPECT_EQ(j["feature_bounds"], Json::parse("[0, 4, 8]"));
  EXPECT_EQ(j["topology_bounds"], Json::parse("[0, 8]"));
  EXPECT_EQ(j["edge_offsets"], Json::parse("[0]"));
  EXPECT_EQ(j["local_ranges"], Json::parse("[[[0, 0], [0, 4]], [[0, 0], [4, 8]]]"));
  EXPECT_EQ(j["rank_dirs"], Json::parse(R"(["rank-0000", "rank-0001", "rank-0002", "rank-0003"])"));
  EXPECT_FALSE(j.contains("rank"));
  const auto source = graph::Dataset::open(src);
  EXPECT_EQ(j["source"]["name"], "golden");
  EXPECT_EQ(j["source"]["path"], fs::absolute(src).lexically_normal().string());
  EXPECT_EQ(j["source"]["manifest_xxh3"], checksum_file(src + "/manifest.json"));
  EXPECT_EQ(j["source"]["files"]["indices.bin"], source.manifest().files.at("indices").xxh3);
  EXPECT_EQ(j["source"]["files"].size(), source.manifest().files.size());
  // Exactly the documented entries, no temporaries left.
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(tmp / "out")) entries.push_back(e.path().filename());
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::string>{"partition.json", "rank-0000", "rank-0001", "rank-0002", "rank-0003"}));
  for (const auto& e : fs::directory_iterator(tmp.path())) EXPECT_EQ(e.path().filename().string().find(".out"), std::string::npos);
  // Whole topology on every rank: the same file as the source.
  const auto g = graph::Dataset::open(tmp / "out/rank-0003/graph");
  EXPECT_EQ(g.manifest().files.at("indptr").xxh3, source.manifest().files.at("indptr").xxh3);
  EXPECT_EQ(g.manifest().files.at("indices").xxh3, source.manifest().files.at("indices").xxh3);
  // Rank 3 is process row 1: global rows 4..7.
  const auto f = graph::Dataset::open(tmp / "out/rank-0003/features");
  ASSERT_EQ(f.num_nodes(), 4);
  EXPECT_EQ(reinterpret_cast<const float*>(f.feature_bytes().data())[0], 40.0f);
  expect_partition_matches(src, tmp / "out");
}

TEST(Partition, GoldenPartitionedFourRanksTwoReplicas) {
  test::TempDir tmp;
  const std::string src = write_golden(tmp);
  ThreadPool pool(2);
  write_partition(src, tmp / "out", grid(4, 2, PartitionGraph::kPartitioned), pool);
  const Json j = read_json(tmp / "out/partition.json");
  EXPECT_EQ(j["graph"], "partitioned");
  EXPECT_EQ(j["feature_bounds"], Json::parse("[0, 4, 8]"));
  EXPECT_EQ(j["topology_bounds"], Json::parse("[0, 5, 8]"));  // indptr[5] = 9 >= 14 / 2
  EXPECT_EQ(j["edge_offsets"], Json::parse("[0, 9]"));
  // Process row 1 (ranks 2, 3): nodes 5..7 keep their in-edges, positions 9..13 of the source.
  for (const char* rank : {"rank-0002", "rank-0003"}) {
    const auto g = graph::Dataset::open(tmp / (std::string("out/") + rank + "/graph"));
    EXPECT_EQ(g.num_nodes(), 8);
    EXPECT_EQ(g.num_edges(), 5);
    EXPECT_EQ(std::vector<int64_t>(g.indptr().begin(), g.indptr().end()),
              (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 1, 4, 5}));
    const auto indices = std::get<std::span<const int32_t>>(g.indices());
    EXPECT_EQ(std::vector<int32_t>(indices.begin(), indices.end()), (std::vector<int32_t>{4, 4, 5, 7, 0}));
  }
  const auto g0 = graph::Dataset::open(tmp / "out/rank-0001/graph");
  EXPECT_EQ(std::vector<int64_t>(g0.indptr().begin(), g0.indptr().end()),
            (std::vector<int64_t>{0, 3, 4, 6, 6, 9, 9, 9, 9}));
  expect_partition_matches(src, tmp / "out");
}

TEST(Partition, OneRankHoldsEverything) {
  test::TempDir tmp;
  const std::string src = write_golden(tmp);
  ThreadPool pool(1);
  for (auto mode : {PartitionGraph::kReplicated, PartitionGraph::kPartitioned}) {
    const std::string out = tmp / std::string(partition_graph_name(mode));
    write_partition(src, out, grid(1, 1, mode), pool);
    const Json j = read_json(out + "/partition.json");
    EXPECT_EQ(j["feature_bounds"], Json::parse("[0, 8]"));
    EXPECT_EQ(j["topology_bounds"], Json::parse("[0, 8]"));
    EXPECT_EQ(j["edge_offsets"], Json::parse("[0]"));
    EXPECT_EQ(j["local_ranges"], Json::parse("[[[0, 0], [0, 8]]]"));
    const auto source = graph::Dataset::open(src);
    const auto f = graph::Dataset::open(out + "/rank-0000/features");
    EXPECT_EQ(f.manifest().files.at("features").xxh3, source.manifest().files.at("features").xxh3);
    expect_partition_matches(src, out);
  }
}

TEST(Partition, HotPrefixIsOnEveryRank) {
  test::TempDir tmp;
  const std::string src = write_golden(tmp);
  ThreadPool pool(2);
  PartitionOptions o = grid(4, 2, PartitionGraph::kPartitioned);
  o.hot_rows = HotRows::parse("2");
  write_partition(src, tmp / "out", o, pool);
  const Json j = read_json(tmp / "out/partition.json");
  EXPECT_EQ(j["hot_rows"], 2);
  EXPECT_EQ(j["feature_bounds"], Json::parse("[0, 5, 8]"));  // [2, 8) in two halves
  EXPECT_EQ(j["local_ranges"], Json::parse("[[[0, 2], [2, 5]], [[0, 2], [5, 8]]]"));
  const auto f = graph::Dataset::open(tmp / "out/rank-0002/features");
  ASSERT_EQ(f.num_nodes(), 5);
  const auto* x = reinterpret_cast<const float*>(f.feature_bytes().data());
  EXPECT_EQ(x[0], 0.0f);   // global 0
  EXPECT_EQ(x[3], 10.0f);  // global 1
  EXPECT_EQ(x[6], 50.0f);  // global 5
  expect_partition_matches(src, tmp / "out");

  // A percent of N, and every row hot: the blocks are empty ranges [N, N].
  o.hot_rows = HotRows::parse("100%");
  write_partition(src, tmp / "all", o, pool);
  const Json all = read_json(tmp / "all/partition.json");
  EXPECT_EQ(all["hot_rows"], 8);
  EXPECT_EQ(all["local_ranges"], Json::parse("[[[0, 8], [8, 8]], [[0, 8], [8, 8]]]"));
  expect_partition_matches(src, tmp / "all");
}

TEST(Partition, AutoBalanceIsHotnessWhenTheSourceHasScoresAndBytesOtherwise) {
  test::TempDir tmp;
  const std::string src = write_golden(tmp);
  const std::string cold = write_golden(tmp, false);
  ThreadPool pool(2);
  PartitionOptions o = grid(2, 1);
  o.balance = PartitionBalance::kAuto;
  EXPECT_EQ(PartitionOptions{}.balance, PartitionBalance::kAuto);  // the default
  write_partition(src, tmp / "out", o, pool);
  Json j = read_json(tmp / "out/partition.json");
  EXPECT_EQ(j["balance"], "hotness");  // the manifest records the choice, never "auto"
  EXPECT_EQ(j["feature_bounds"], Json::parse("[0, 2, 8]"));
  write_partition(cold, tmp / "cold-out", o, pool);
  j = read_json(tmp / "cold-out/partition.json");
  EXPECT_EQ(j["balance"], "bytes");
  EXPECT_EQ(j["feature_bounds"], Json::parse("[0, 4, 8]"));
  EXPECT_EQ(parse_partition_balance("auto"), PartitionBalance::kAuto);
}

TEST(Partition, HotnessBalanceSplitsTheScores) {
  test::TempDir tmp;
  const std::string src = write_golden(tmp);
  ThreadPool pool(2);
  PartitionOptions o = grid(2, 1);
  o.balance = PartitionBalance::kHotness;
  write_partition(src, tmp / "out", o, pool);
  Json j = read_json(tmp / "out/partition.json");
  EXPECT_EQ(j["balance"], "hotness");
  EXPECT_EQ(j["feature_bounds"], Json::parse("[0, 2, 8]"));
  expect_partition_matches(src, tmp / "out");
  o.hot_rows = HotRows::parse("2");
  write_partition(src, tmp / "hot", o, pool);
  j = read_json(tmp / "hot/partition.json");
  EXPECT_EQ(j["feature_bounds"], Json::parse("[0, 4, 8]"));
  expect_partition_matches(src, tmp / "hot");
}

TEST(Partition, GeneratedGraphWithPaddedRows) {
  test::TempDir tmp;
  graph::GenerateOptions g;
  g.num_nodes = 1000;
  g.num_edges = 8000;
  g.num_classes = 3;
  g.feature_dim = 20;
  g.feature_dtype = DType::kFloat16;
  g.alignment = 512;
  g.seed = 5;
  ThreadPool pool(2);
  graph::generate_dataset(tmp / "gen", g, pool);
  for (auto mode : {PartitionGraph::kReplicated, PartitionGraph::kPartitioned}) {
    for (auto [p, c] : {std::pair{4, 2}, std::pair{3, 1}, std::pair{4, 4}}) {
      SCOPED_TRACE(std::string(partition_graph_name(mode)) + " P=" + std::to_string(p) + " c=" + std::to_string(c));
      PartitionOptions o = grid(p, c, mode);
      o.hot_rows = HotRows::parse("3%");
      o.overwrite = true;
      write_partition(tmp / "gen", tmp / "out", o, pool);
      expect_partition_matches(tmp / "gen", tmp / "out");
    }
  }
}

// An output larger than the free space of its file system is refused before anything is written,
// saying how much is needed and how much is free. The source's feature table is a sparse file
// (opening a dataset checks sizes, not checksums), so the test needs no disk space itself.
TEST(Partition, OutputLargerThanTheFreeSpaceIsRefusedAtOnce) {
  test::TempDir tmp;
  const std::string src = write_golden(tmp);
  struct statvfs st {};
  ASSERT_EQ(::statvfs(tmp.path().c_str(), &st), 0);
  const double free_bytes = static_cast<double>(st.f_bavail) * static_cast<double>(st.f_frsize);
  // Each feature row is held by the c = 2 ranks of its process row: 2 x 0.6 of the free space.
  const auto dim = static_cast<int64_t>(0.6 * free_bytes / (8 * 4)) + 1;
  const int64_t stride = dim * 4;
  Json m = read_json(src + "/manifest.json");
  m["features"]["dim"] = dim;
  m["features"]["row_stride"] = stride;
  m["files"]["features"]["bytes"] = 8 * stride;
  test::write_file(src + "/manifest.json", m.dump(2));
  fs::resize_file(src + "/features.bin", static_cast<uintmax_t>(8 * stride));
  ThreadPool pool(1);
  try {
    write_partition(src, tmp / "out", grid(4, 2), pool);
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_EQ(e.code().value(), ENOSPC);
    const std::string what = e.what();
    EXPECT_NE(what.find("--out " + tmp / "out" + ": the partition needs "), std::string::npos) << what;
    EXPECT_NE(what.find(" free"), std::string::npos) << what;
  }
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(tmp.path())) entries.push_back(e.path().filename());
  EXPECT_EQ(entries, (std::vector<std::string>{"golden"}));
}

/// The message of the InvalidArgument `fn` throws ("" when it throws nothing).
template <typename Fn>
std::string refusal(Fn fn) {
  try {
    fn();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(Partition, BadArgumentsAreRefusedNamingTheOption) {
  test::TempDir tmp;
  const std::string src = write_golden(tmp);
  const std::string cold = write_golden(tmp, false);
  ThreadPool pool(1);
  const auto refused = [&](PartitionOptions o, const std::string& source = "") {
    return refusal([&] { write_partition(source.empty() ? src : source, tmp / "out", o, pool); });
  };
  EXPECT_NE(refused(grid(0, 1)).find("--ranks must be >= 1"), std::string::npos);
  EXPECT_NE(refused(grid(4, 0)).find("--replication must be >= 1"), std::string::npos);
  EXPECT_NE(refused(grid(4, 3)).find("--replication 3 does not divide --ranks 4"), std::string::npos);
  EXPECT_NE(refused(grid(9, 1)).find("9 process rows exceed the 8 nodes"), std::string::npos);
  EXPECT_EQ(refused(grid(16, 2)), "");  // R = 8 = N is fine
  PartitionOptions hot = grid(2, 1);
  hot.hot_rows = HotRows::parse("9");
  hot.overwrite = true;
  EXPECT_NE(refused(hot).find("--hot-replicated 9 exceeds the 8 nodes"), std::string::npos);
  PartitionOptions by_hotness = grid(2, 1);
  by_hotness.balance = PartitionBalance::kHotness;
  by_hotness.overwrite = true;
  EXPECT_NE(refused(by_hotness, cold).find("--balance hotness needs the source's hotness.bin"), std::string::npos);
  // An existing output: refused without --overwrite, and never replaced unless it is a partition.
  EXPECT_NE(refused(grid(2, 1)).find("already exists (pass --overwrite"), std::string::npos);
  PartitionOptions over = grid(2, 1);
  over.overwrite = true;
  EXPECT_NE(refusal([&] { write_partition(src, src, over, pool); }).find("has no partition.json; refusing"),
            std::string::npos);
  EXPECT_TRUE(fs::exists(src + "/manifest.json"));
  EXPECT_EQ(refused(over), "");  // replaces the partition written above
  EXPECT_EQ(read_json(tmp / "out/partition.json")["ranks"], 2);
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(tmp.path())) entries.push_back(e.path().filename());
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::string>{"golden", "golden-cold", "out"}));  // no temporaries
}

/// The message of the FormatError `fn` throws ("" when it throws nothing).
template <typename Fn>
std::string format_error(Fn fn) {
  try {
    fn();
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

void flip_byte(const std::string& path, int64_t offset) {
  std::string bytes = test::read_file(path);
  bytes[static_cast<size_t>(offset)] ^= 0x5a;
  test::write_file(path, bytes);
}

TEST(PartitionVerify, AcceptsThePartitionAndEachRankAlone) {
  test::TempDir tmp;
  const std::string src = write_golden(tmp);
  ThreadPool pool(2);
  for (auto mode : {PartitionGraph::kReplicated, PartitionGraph::kPartitioned}) {
    PartitionOptions o = grid(4, 2, mode);
    o.hot_rows = HotRows::parse("1");
    o.overwrite = true;
    write_partition(src, tmp / "out", o, pool);
    const auto all = verify_partition(tmp / "out");
    EXPECT_FALSE(all.rank.has_value());
    EXPECT_EQ(all.datasets, 8);
    EXPECT_GT(all.bytes, 0u);
    EXPECT_EQ(all.source, "checked");
    EXPECT_EQ(all.source_path, fs::absolute(src).lexically_normal().string());
    for (int k = 0; k < 4; ++k) {
      const auto one = verify_partition(tmp / ("out/rank-000" + std::to_string(k)));
      EXPECT_EQ(one.rank, k);
      EXPECT_EQ(one.datasets, 2);
      EXPECT_EQ(one.source, "checked");
    }
  }
  // A rank copied alone to another name still verifies; the source is checked when given.
  fs::copy(tmp / "out/rank-0002", tmp / "copied", fs::copy_options::recursive);
  EXPECT_EQ(verify_partition(tmp / "copied").rank, 2);
  fs::rename(src, tmp / "moved");
  const auto skipped = verify_partition(tmp / "copied");
  EXPECT_EQ(skipped.source.rfind("skipped: the source ", 0), 0u) << skipped.source;
  EXPECT_TRUE(skipped.source_path.empty());
  EXPECT_EQ(verify_partition(tmp / "copied", tmp / "moved").source, "checked");
}

TEST(PartitionVerify, CatchesACorruptedRankFile) {
  test::TempDir tmp;
  const std::string src = write_golden(tmp);
  ThreadPool pool(2);
  write_partition(src, tmp / "out", grid(4, 2, PartitionGraph::kPartitioned), pool);
  const std::string features = tmp / "out/rank-0003/features/features.bin";
  flip_byte(features, 5);
  EXPECT_NE(format_error([&] { verify_partition(tmp / "out"); }).find(features + ": checksum mismatch"),
            std::string::npos);
  EXPECT_NE(format_error([&] { verify_partition(tmp / "out/rank-0003"); }).find("checksum mismatch"), std::string::npos);
  EXPECT_EQ(format_error([&] { verify_partition(tmp / "out/rank-0002"); }), "");  // its replica is intact
}

TEST(PartitionVerify, CatchesAnInconsistentManifest) {
  test::TempDir tmp;
  const std::string src = write_golden(tmp);
  ThreadPool pool(2);
  write_partition(src, tmp / "out", grid(4, 2, PartitionGraph::kPartitioned), pool);
  const std::string top = tmp / "out/partition.json";
  const std::string original = test::read_file(top);
  const auto with = [&](const std::string& path, const std::function<void(Json&)>& edit) {
    Json j = Json::parse(test::read_file(path));
    edit(j);
    test::write_file(path, j.dump(2));
    return format_error([&] { verify_partition(tmp / "out"); });
  };
  EXPECT_NE(with(top, [](Json& j) { j["feature_bounds"] = {0, 5, 8}; }).find("\"local_ranges\"[0]"), std::string::npos);
  test::write_file(top, original);
  EXPECT_NE(with(top, [](Json& j) { j["ranks"] = 6; }).find("must equal process_rows x replication"), std::string::npos);
  test::write_file(top, original);
  EXPECT_NE(with(top, [](Json& j) { j["feature_bounds"] = {0, 9, 8}; }).find("\"feature_bounds\" must be non-decreasing"),
            std::string::npos);
  test::write_file(top, original);
  EXPECT_NE(with(top, [](Json& j) { j["feature_bounds"] = {0, 8, 7}; }).find("\"feature_bounds\" must start at 0 and end"),
            std::string::npos);
  test::write_file(top, original);
  // A typed partition's per-type bounds: instead of feature_bounds, chained type ranges, and the
  // local ranges they give.
  EXPECT_NE(with(top, [](Json& j) { j["type_feature_bounds"] = {{0, 2, 4}, {4, 6, 8}}; }).find("exclude each other"),
            std::string::npos);
  test::write_file(top, original);
  const auto typed = [](Json& j, Json bounds) {
    j.erase("feature_bounds");
    j["type_feature_bounds"] = std::move(bounds);
  };
  EXPECT_NE(with(top, [&](Json& j) { typed(j, {{0, 2, 4}, {5, 6, 8}}); }).find("[1] must start at 4"),
            std::string::npos);
  test::write_file(top, original);
  EXPECT_NE(with(top, [&](Json& j) { typed(j, {{0, 2, 4}, {4, 6, 7}}); }).find("must end at num_nodes 8"),
            std::string::npos);
  test::write_file(top, original);
  EXPECT_NE(with(top, [&](Json& j) { typed(j, {{0, 2, 4}, {4, 6, 8}}); })
                .find("\"local_ranges\"[0] is [[0,0],[0,4]], but type_feature_bounds give [[0,2],[4,6]]"),
            std::string::npos);
  test::write_file(top, original);
  // Rank 1's manifest says rank 3; then, with the bounds of both copies moved together, the
  // datasets no longer agree with them.
  const std::string own = tmp / "out/rank-0001/partition.json";
  const std::string own_original = test::read_file(own);
  EXPECT_NE(with(own, [](Json& j) { j["rank"] = 3; }).find("\"rank\" 3 does not match the directory rank-0001"),
            std::string::npos);
  test::write_file(own, own_original);
  EXPECT_NE(with(own, [](Json& j) { j["hot_rows"] = 1; j["local_ranges"][0][0][1] = 1; j["local_ranges"][0][1][0] = 1; j["local_ranges"][1][0][1] = 1; })
                .find("differs from"),
            std::string::npos);
  test::write_file(own, own_original);
  for (const std::string& path : std::vector<std::string>{top}) {
    Json j = Json::parse(test::read_file(path));
    j["topology_bounds"] = {0, 4, 8};
    test::write_file(path, j.dump(2));
  }
  for (int k = 0; k < 4; ++k) {
    const std::string path = tmp / ("out/rank-000" + std::to_string(k) + "/partition.json");
    Json j = Json::parse(test::read_file(path));
    j["topology_bounds"] = {0, 4, 8};
    test::write_file(path, j.dump(2));
  }
  EXPECT_NE(format_error([&] { verify_partition(tmp / "out"); }).find("nodes outside the block row [0, 4)"),
            std::string::npos);
}

TEST(PartitionVerify, CatchesAForeignSource) {
  test::TempDir tmp;
  const std::string src = write_golden(tmp);
  const std::string other = write_golden(tmp, false);
  ThreadPool pool(2);
  write_partition(src, tmp / "out", grid(2, 1), pool);
  EXPECT_NE(format_error([&] { verify_partition(tmp / "out", other); }).find("belongs to another source: " + other),
            std::string::npos);
  // The recorded path now holds another dataset.
  fs::remove_all(src);
  fs::rename(other, src);
  EXPECT_NE(format_error([&] { verify_partition(tmp / "out"); }).find("belongs to another source"), std::string::npos);
  EXPECT_NE(format_error([&] { verify_partition(tmp / "out/rank-0001"); }).find("belongs to another source"),
            std::string::npos);
}

TEST(PartitionVerify, ReadPartitionJsonChecksAndRewritesTheManifest) {
  // What graphtier.distributed reads: the manifest as written, for the top directory and a rank's
  // copy (with its "rank"), and the reader's FormatError for a bad one.
  test::TempDir tmp;
  const std::string src = write_golden(tmp);
  ThreadPool pool(2);
  write_partition(src, tmp / "out", grid(4, 2, PartitionGraph::kPartitioned), pool);
  for (const std::string dir : {"out", "out/rank-0002"}) {
    const std::string path = tmp / (dir + "/partition.json");
    EXPECT_EQ(read_partition_json(path), test::read_file(path));
  }
  EXPECT_EQ(Json::parse(read_partition_json(tmp / "out/rank-0002/partition.json"))["rank"], 2);
  EXPECT_TRUE(is_partition_directory(tmp / "out"));
  EXPECT_TRUE(is_partition_directory(tmp / "out/rank-0001"));
  EXPECT_FALSE(is_partition_directory(src));
  const std::string bad = tmp / "out/partition.json";
  test::write_file(bad, "{\"format\": \"graphtier-partition\", \"version\": 2}");
  EXPECT_NE(format_error([&] { read_partition_json(bad); }).find(bad + ": partition format version 2"),
            std::string::npos);
  EXPECT_THROW(read_partition_json(tmp / "missing.json"), IoError);
}

}  // namespace
}  // namespace graphtier::prep
