// Tests of `generate`: the model's building blocks against naive references, then properties of
// generated datasets (validity, determinism, skew, homophily, balance, separable features,
// layouts) and the CLI.
#include "graphtier/graph_generate/generate.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <vector>

#include "generate_model.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/graph/dataset.hpp"
#include "test_util.hpp"

namespace graphtier::graph {
namespace {

using test::TempDir;

GenerateOptions small_options() {
  GenerateOptions o;
  o.num_nodes = 20000;
  o.num_edges = 400000;
  o.num_classes = 8;
  o.feature_dim = 32;
  o.seed = 7;
  return o;
}

GenerateReport generate(const std::string& dir, const GenerateOptions& o, int threads = 2) {
  ThreadPool pool(threads);
  return generate_dataset(dir, o, pool);
}

std::vector<int64_t> indices_of(const Dataset& d) {
  return std::visit([](auto span) { return std::vector<int64_t>(span.begin(), span.end()); }, d.indices());
}

/// Row v of an fp32 feature table.
std::vector<float> float_row(const Dataset& d, int64_t v) {
  const auto& f = d.manifest().features;
  std::vector<float> row(static_cast<std::size_t>(f.dim));
  std::memcpy(row.data(), d.feature_bytes().data() + v * f.row_stride, row.size() * sizeof(float));
  return row;
}

double same_class_fraction(const Dataset& d) {
  const auto indptr = d.indptr();
  const auto indices = indices_of(d);
  const auto labels = d.labels();
  int64_t same = 0;
  for (int64_t v = 0; v < d.num_nodes(); ++v) {
    for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) same += labels[indices[e]] == labels[v];
  }
  return static_cast<double>(same) / static_cast<double>(d.num_edges());
}

// ---- building blocks -------------------------------------------------------------------------

TEST(GenerateModel, NodePermutationIsABijectionWithAnInverse) {
  for (int64_t n : {1, 2, 3, 5, 64, 1000, 4097, 100003}) {
    const detail::generate::NodePermutation p(n, 42, 9);
    std::vector<bool> hit(static_cast<std::size_t>(n), false);
    for (int64_t x = 0; x < n; ++x) {
      const int64_t y = p.forward(x);
      ASSERT_GE(y, 0);
      ASSERT_LT(y, n);
      ASSERT_FALSE(hit[y]) << "n=" << n << ": " << y << " reached twice";
      hit[y] = true;
      ASSERT_EQ(p.inverse(y), x) << "n=" << n;
    }
  }
}

TEST(GenerateModel, CommunitiesAreBalancedAndMovesStayNearby) {
  const int64_t n = 1003, c = 10;
  const detail::generate::Communities communities(n, c, 5);
  std::vector<int64_t> size(c, 0);
  for (int64_t u = 0; u < n; ++u) ++size[communities.of(u)];
  EXPECT_LE(*std::max_element(size.begin(), size.end()) - *std::min_element(size.begin(), size.end()), 1);
  for (int64_t u = 0; u < n; ++u) {
    for (int64_t cls = 0; cls < c; ++cls) {
      const int64_t v = communities.move_to_class(u, cls);
      ASSERT_LT(v, n);
      ASSERT_EQ(communities.of(v), cls);
      ASSERT_LE(u / c - v / c, 1);  // its own block, or the one before for the last partial block
      ASSERT_GE(u / c - v / c, 0);
    }
  }
}

TEST(GenerateModel, EdgeBitsFollowTheRmatQuadrants) {
  // 2^10 nodes and one class: no redraws, no moves; undo the scrambling to see R-MAT's own ids.
  GenerateOptions o;
  o.num_nodes = 1024;
  o.num_classes = 1;
  o.rmat = RmatParams{0.5, 0.2, 0.1};
  const detail::generate::Communities communities(o.num_nodes, 1, o.seed);
  const detail::generate::NodePermutation permutation(o.num_nodes, o.seed, detail::generate::kNodePermutationStream);
  const detail::generate::EdgeModel model(o, communities, permutation);
  constexpr int kDraws = 200000;
  int64_t quadrant[10][4] = {};  // per level (bit 9 = first level), how often each quadrant came
  for (int k = 0; k < kDraws; ++k) {
    const auto e = model.draw(static_cast<uint64_t>(k));
    const int64_t src = permutation.inverse(e.src), dst = permutation.inverse(e.dst);
    for (int bit = 0; bit < 10; ++bit) ++quadrant[bit][2 * ((src >> bit) & 1) + ((dst >> bit) & 1)];
  }
  const double expected[4] = {0.5, 0.2, 0.1, 0.2};
  for (int bit = 0; bit < 10; ++bit) {
    for (int q = 0; q < 4; ++q) {
      EXPECT_NEAR(static_cast<double>(quadrant[bit][q]) / kDraws, expected[q], 0.006) << "bit " << bit << " quadrant " << q;
    }
  }
}

// ---- datasets --------------------------------------------------------------------------------

TEST(Generate, WritesAValidDatasetOfTheRequestedShape) {
  TempDir tmp;
  const auto o = small_options();
  const auto report = generate(tmp / "g", o);
  const auto d = Dataset::open(tmp / "g");
  EXPECT_EQ(d.num_nodes(), o.num_nodes);
  EXPECT_EQ(d.manifest().indices_dtype, DType::kInt32);
  EXPECT_EQ(d.manifest().num_classes, o.num_classes);
  EXPECT_EQ(d.manifest().features.dim, o.feature_dim);
  EXPECT_EQ(d.num_edges(), report.num_edges);
  EXPECT_EQ(report.num_edges + report.self_loops_removed + report.duplicates_removed, o.num_edges);
  EXPECT_GT(report.num_edges, o.num_edges * 8 / 10);  // duplicates are a minority at this density

  // Rows strictly increasing (sorted, no duplicates), no self-loops, symmetric.
  const auto indptr = d.indptr();
  const auto indices = indices_of(d);
  int64_t max_degree = 0, isolated = 0;
  for (int64_t v = 0; v < d.num_nodes(); ++v) {
    max_degree = std::max(max_degree, indptr[v + 1] - indptr[v]);
    isolated += indptr[v + 1] == indptr[v];
    for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
      ASSERT_NE(indices[e], v);
      if (e > indptr[v]) {
        ASSERT_LT(indices[e - 1], indices[e]);
      }
      const int64_t u = indices[e];
      ASSERT_TRUE(std::binary_search(indices.begin() + indptr[u], indices.begin() + indptr[u + 1], v))
          << "edge " << u << " -> " << v << " has no reverse";
    }
  }
  EXPECT_EQ(report.max_in_degree, max_degree);
  EXPECT_EQ(report.isolated_nodes, isolated);

  // Splits: exact counts, ascending, disjoint, covering every node.
  EXPECT_EQ(d.split(Split::kTrain).size(), 12000u);
  EXPECT_EQ(d.split(Split::kValid).size(), 4000u);
  EXPECT_EQ(d.split(Split::kTest).size(), 4000u);
  std::vector<int> seen(static_cast<std::size_t>(o.num_nodes), 0);
  for (Split s : {Split::kTrain, Split::kValid, Split::kTest}) {
    const auto ids = d.split(s);
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
    for (int64_t v : ids) ++seen[v];
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int k) { return k == 1; }));
  d.verify_checksums();
}

TEST(Generate, SameSeedGivesIdenticalFilesWhateverThreadsChunksAndMemory) {
  TempDir tmp;
  auto o = small_options();
  generate(tmp / "one_thread", o, 1);
  auto constrained = o;
  constrained.feature_chunk_bytes = 1000;  // several chunks, and rows that do not divide it
  constrained.memory_budget = 20000 * 4 + 200000;  // the counters plus a fraction of the CSC
  const auto report = generate(tmp / "two_threads", constrained, 2);
  EXPECT_GT(report.topology_passes, 2);
  auto reseeded = o;
  reseeded.seed = 8;
  generate(tmp / "other_seed", reseeded, 2);

  const auto a = Dataset::open(tmp / "one_thread").manifest().files;
  const auto b = Dataset::open(tmp / "two_threads").manifest().files;
  const auto c = Dataset::open(tmp / "other_seed").manifest().files;
  ASSERT_EQ(a.size(), 7u);
  for (const auto& [array, entry] : a) {
    ASSERT_TRUE(b.count(array));
    EXPECT_EQ(entry.xxh3, b.at(array).xxh3) << array;
    EXPECT_EQ(entry.bytes, b.at(array).bytes) << array;
  }
  for (const char* array : {"indices", "features", "labels", "train"}) {
    EXPECT_NE(a.at(array).xxh3, c.at(array).xxh3) << array;
  }
}

TEST(Generate, DegreesAreSkewedAndIdsCarryNoDegreeOrder) {
  TempDir tmp;
  auto o = small_options();
  o.feature_dim = 0;
  generate(tmp / "g", o);
  const auto d = Dataset::open(tmp / "g");
  const auto indptr = d.indptr();
  std::vector<int64_t> degree(static_cast<std::size_t>(d.num_nodes()));
  for (int64_t v = 0; v < d.num_nodes(); ++v) degree[v] = indptr[v + 1] - indptr[v];
  const double mean = static_cast<double>(d.num_edges()) / static_cast<double>(d.num_nodes());

  std::vector<int64_t> sorted = degree;
  std::sort(sorted.rbegin(), sorted.rend());
  EXPECT_GT(static_cast<double>(sorted.front()), 20 * mean);
  const int64_t top = std::accumulate(sorted.begin(), sorted.begin() + d.num_nodes() / 100, int64_t{0});
  EXPECT_GT(static_cast<double>(top) / static_cast<double>(d.num_edges()), 0.15) << "top 1% of nodes";

  // Scrambled ids: each quarter of the id range holds about a quarter of the entries.
  for (int q = 0; q < 4; ++q) {
    const int64_t lo = d.num_nodes() * q / 4, hi = d.num_nodes() * (q + 1) / 4;
    const double share = static_cast<double>(indptr[hi] - indptr[lo]) / static_cast<double>(d.num_edges());
    EXPECT_NEAR(share, 0.25, 0.08) << "quarter " << q;
  }
}

TEST(Generate, SameClassFractionFollowsHomophily) {
  TempDir tmp;
  for (double h : {0.9, 0.5, 0.05}) {  // 0.05 < 1/8: heterophilous
    auto o = small_options();
    o.feature_dim = 0;
    o.homophily = h;
    const std::string dir = tmp / ("h" + std::to_string(static_cast<int>(h * 100)));
    const auto report = generate(dir, o);
    const double measured = same_class_fraction(Dataset::open(dir));
    EXPECT_NEAR(measured, h, 0.04) << "homophily " << h;
    EXPECT_NEAR(report.measured_homophily, measured, 1e-12);  // all rows are measured at this size
  }
}

TEST(Generate, ClassesAreBalanced) {
  TempDir tmp;
  auto o = small_options();
  o.num_nodes = 10007;
  o.num_classes = 7;
  o.feature_dim = 0;
  generate(tmp / "g", o);
  const auto d = Dataset::open(tmp / "g");
  std::vector<int64_t> size(7, 0);
  for (int32_t l : d.labels()) ++size[l];
  EXPECT_LE(*std::max_element(size.begin(), size.end()) - *std::min_element(size.begin(), size.end()), 1);
}

TEST(Generate, FeaturesSeparateClassesAndNeighboursRemoveNoise) {
  TempDir tmp;
  const auto o = small_options();
  generate(tmp / "g", o);
  const auto d = Dataset::open(tmp / "g");
  const int64_t n = d.num_nodes(), dim = o.feature_dim, c = o.num_classes;
  const auto labels = d.labels();
  const auto indptr = d.indptr();
  const auto indices = indices_of(d);

  std::vector<float> x(static_cast<std::size_t>(n * dim)), mean(x.size(), 0.0f);
  for (int64_t v = 0; v < n; ++v) {
    const auto row = float_row(d, v);
    std::copy(row.begin(), row.end(), x.begin() + v * dim);
  }
  double sum = 0, sum_sq = 0;
  for (float value : x) {
    sum += value;
    sum_sq += double{value} * value;
  }
  // Noise has mean 0; the centroids' +-1 entries average to about 0 over classes and dimensions.
  EXPECT_NEAR(sum / static_cast<double>(x.size()), 0.0, 0.1);
  EXPECT_NEAR(sum_sq / static_cast<double>(x.size()), 1.0, 0.02);  // scaled to unit second moment

  // One round of mean aggregation over the node and its neighbours, as a GCN/SGC layer does.
  for (int64_t v = 0; v < n; ++v) {
    const double k = static_cast<double>(indptr[v + 1] - indptr[v] + 1);
    for (int64_t j = 0; j < dim; ++j) {
      double s = x[v * dim + j];
      for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) s += x[indices[e] * dim + j];
      mean[v * dim + j] = static_cast<float>(s / k);
    }
  }
  // Nearest class centroid, centroids from the train split, accuracy on the test split. On the raw
  // features this is about the best any per-node model (an MLP) can do; on aggregated features it
  // is what a one-layer linear GNN can do.
  const auto accuracy = [&](const std::vector<float>& z) {
    std::vector<double> centroid(static_cast<std::size_t>(c * dim), 0.0);
    std::vector<int64_t> count(static_cast<std::size_t>(c), 0);
    for (int64_t v : d.split(Split::kTrain)) {
      ++count[labels[v]];
      for (int64_t j = 0; j < dim; ++j) centroid[labels[v] * dim + j] += z[v * dim + j];
    }
    for (int64_t k = 0; k < c; ++k) {
      for (int64_t j = 0; j < dim; ++j) centroid[k * dim + j] /= static_cast<double>(count[k]);
    }
    int64_t right = 0;
    const auto test_ids = d.split(Split::kTest);
    for (int64_t v : test_ids) {
      int64_t best = 0;
      double best_distance = 1e300;
      for (int64_t k = 0; k < c; ++k) {
        double distance = 0;
        for (int64_t j = 0; j < dim; ++j) {
          const double diff = z[v * dim + j] - centroid[k * dim + j];
          distance += diff * diff;
        }
        if (distance < best_distance) {
          best_distance = distance;
          best = k;
        }
      }
      right += best == labels[v];
    }
    return static_cast<double>(right) / static_cast<double>(test_ids.size());
  };
  const double chance = 1.0 / static_cast<double>(c);
  const double raw = accuracy(x), aggregated = accuracy(mean);
  std::printf("nearest-centroid accuracy: raw features %.3f, after mean aggregation %.3f, chance %.3f\n", raw,
              aggregated, chance);
  EXPECT_GT(raw, 2.5 * chance) << "features must carry the label";
  EXPECT_LT(raw, 0.8) << "features alone must not make the task trivial";
  EXPECT_GT(aggregated, raw + 0.1) << "raw " << raw << ", aggregated " << aggregated;
}

TEST(Generate, HalfPrecisionAndAlignedRowsHoldTheSameValues) {
  TempDir tmp;
  auto o = small_options();
  o.num_nodes = 3000;
  o.num_edges = 30000;
  o.feature_dim = 100;  // 400 B in fp32, 200 B in half precision: padded by every alignment
  generate(tmp / "fp32", o);
  const auto reference = Dataset::open(tmp / "fp32");
  EXPECT_EQ(reference.manifest().features.row_stride, 400);

  struct Variant {
    DType dtype;
    int64_t alignment;
    uint16_t (*convert)(float);
  };
  for (const Variant& variant : {Variant{DType::kFloat16, 512, float_to_half}, Variant{DType::kBFloat16, 4096, float_to_bfloat16},
                                 Variant{DType::kFloat16, 0, float_to_half}}) {
    auto vo = o;
    vo.feature_dtype = variant.dtype;
    vo.alignment = variant.alignment;
    const std::string dir = tmp / ("v" + std::to_string(static_cast<int>(variant.dtype)) + "_" + std::to_string(variant.alignment));
    generate(dir, vo);
    const auto d = Dataset::open(dir);
    const auto& layout = d.manifest().features;
    EXPECT_EQ(layout.row_stride, FeatureLayout::make(100, variant.dtype, variant.alignment).row_stride);
    EXPECT_EQ(d.manifest().files.at("indices").xxh3, reference.manifest().files.at("indices").xxh3);
    for (int64_t v = 0; v < d.num_nodes(); ++v) {
      const auto expected = float_row(reference, v);
      const std::byte* row = d.feature_bytes().data() + v * layout.row_stride;
      for (int64_t j = 0; j < layout.dim; ++j) {
        uint16_t stored;
        std::memcpy(&stored, row + 2 * j, 2);
        ASSERT_EQ(stored, variant.convert(expected[j])) << "node " << v << " element " << j;
      }
      for (int64_t b = layout.row_bytes(); b < layout.row_stride; ++b) ASSERT_EQ(row[b], std::byte{0});
    }
  }
}

TEST(Generate, DirectedGraphsAndGraphsWithoutFeatures) {
  TempDir tmp;
  auto o = small_options();
  o.undirected = false;
  o.feature_dim = 0;
  o.num_edges = 100001;
  const auto report = generate(tmp / "g", o);
  EXPECT_EQ(report.num_edges + report.self_loops_removed + report.duplicates_removed, 100001);
  const auto d = Dataset::open(tmp / "g");
  EXPECT_FALSE(d.has_features());
  EXPECT_FALSE(d.manifest().has("features"));
  // Some edge lacks its reverse.
  const auto indptr = d.indptr();
  const auto indices = indices_of(d);
  int64_t one_way = 0;
  for (int64_t v = 0; v < d.num_nodes(); ++v) {
    for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
      const int64_t u = indices[e];
      one_way += !std::binary_search(indices.begin() + indptr[u], indices.begin() + indptr[u + 1], v);
    }
  }
  EXPECT_GT(one_way, 0);
}

TEST(Generate, GrowingGraphTimesAreConsistentAndDeterministic) {
  TempDir tmp;
  auto o = small_options();
  o.time_steps = 50;
  const GenerateReport report = generate(tmp / "timed", o, 1);
  auto constrained = o;
  constrained.memory_budget = 20000 * 4 + 200000;  // several topology passes
  generate(tmp / "again", constrained, 2);
  const Dataset d = Dataset::open(tmp / "timed");
  ASSERT_TRUE(d.has_node_time());
  ASSERT_TRUE(d.has_edge_time());
  const auto a = d.manifest().files;
  const auto b = Dataset::open(tmp / "again").manifest().files;
  for (const char* array : {"node_time", "edge_time", "indices"}) EXPECT_EQ(a.at(array).xxh3, b.at(array).xxh3) << array;
  // The untimed graph is the same graph: times are added, nothing else changes.
  generate(tmp / "untimed", small_options(), 2);
  EXPECT_EQ(a.at("indices").xxh3, Dataset::open(tmp / "untimed").manifest().files.at("indices").xxh3);
  EXPECT_EQ(report.num_edges, d.num_edges());

  // Steps in [0, S), balanced (floor(u S / N) of a bijection: N / S nodes each, within one).
  const auto node_time = d.node_time();
  std::vector<int64_t> per_step(static_cast<std::size_t>(o.time_steps), 0);
  for (const int64_t t : node_time) {
    ASSERT_GE(t, 0);
    ASSERT_LT(t, o.time_steps);
    ++per_step[static_cast<std::size_t>(t)];
  }
  for (const int64_t count : per_step) EXPECT_NEAR(static_cast<double>(count), 20000.0 / 50, 1.0);
  // Each edge is created when its later endpoint arrives.
  const auto indptr = d.indptr();
  const auto indices = indices_of(d);
  const auto edge_time = d.edge_time();
  std::vector<int64_t> degree(per_step.size(), 0);
  for (int64_t v = 0; v < d.num_nodes(); ++v) {
    for (int64_t p = indptr[v]; p < indptr[v + 1]; ++p) {
      ASSERT_EQ(edge_time[p], std::max(node_time[v], node_time[indices[p]])) << "entry " << p;
    }
    degree[static_cast<std::size_t>(node_time[v])] += indptr[v + 1] - indptr[v];
  }
  // The early nodes are R-MAT's hubs: the first step's nodes hold far more edges than the last's,
  // so a node's past degree predicts its future links (preferential attachment).
  EXPECT_GT(degree.front(), 5 * degree.back());
}

TEST(Generate, RejectsBadOptionsAndLeavesNothingBehind) {
  TempDir tmp;
  const auto expect_invalid = [&](void (*tweak)(GenerateOptions&), const char* what) {
    auto o = small_options();
    tweak(o);
    EXPECT_THROW(generate(tmp / "bad", o), InvalidArgument) << what;
  };
  expect_invalid([](GenerateOptions& o) { o.num_nodes = 0; }, "no nodes");
  expect_invalid([](GenerateOptions& o) { o.num_classes = 0; }, "no classes");
  expect_invalid([](GenerateOptions& o) { o.num_classes = o.num_nodes + 1; }, "more classes than nodes");
  expect_invalid([](GenerateOptions& o) { o.homophily = 1.5; }, "homophily");
  expect_invalid([](GenerateOptions& o) { o.rmat.a = 0.9; }, "a+b+c > 1");
  expect_invalid([](GenerateOptions& o) { o.train_fraction = 0.9; }, "fractions");
  expect_invalid([](GenerateOptions& o) { o.feature_dtype = DType::kInt32; }, "dtype");
  expect_invalid([](GenerateOptions& o) { o.alignment = 100; }, "alignment");
  expect_invalid([](GenerateOptions& o) { o.memory_budget = 1000; }, "budget below the counters");
  expect_invalid([](GenerateOptions& o) { o.num_nodes = int64_t{1} << 61; }, "beyond the format");
  expect_invalid([](GenerateOptions& o) { o.num_nodes = 1000000000000; }, "counters beyond the memory");
  expect_invalid([](GenerateOptions& o) { o.time_steps = -1; }, "negative time steps");
  expect_invalid([](GenerateOptions& o) { o.time_steps = o.num_nodes + 1; }, "more time steps than nodes");
  EXPECT_FALSE(std::filesystem::exists(tmp / "bad"));
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path())) << "temporary directories left behind";

  auto o = small_options();
  o.num_edges = 1000;
  generate(tmp / "g", o);
  EXPECT_THROW(generate(tmp / "g", o), InvalidArgument);  // exists, no overwrite
  o.overwrite = true;
  o.seed = 99;
  generate(tmp / "g", o);
}

// ---- CLI -------------------------------------------------------------------------------------

TEST(GenerateCli, WritesADatasetAndPrintsJson) {
  TempDir tmp;
  const auto r = test::run_cli({"--json", "-j", "2", "generate", "--out", tmp / "g", "--nodes", "10K", "--edges", "100K",
                                "--feature-dim", "16", "--classes", "4", "--dtype", "bfloat16", "--align", "512",
                                "--seed", "3", "--homophily", "0.7", "--rmat", "0.6,0.15,0.15", "--train-fraction",
                                "0.5", "--valid-fraction", "0.25"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("num_nodes"), 10000);
  EXPECT_EQ(j.at("requested_edges"), 100000);
  EXPECT_EQ(j.at("feature_dtype"), "bfloat16");
  EXPECT_EQ(j.at("row_stride"), 32);
  EXPECT_EQ(j.at("splits").at("train"), 5000);
  EXPECT_EQ(j.at("splits").at("test"), 2500);
  EXPECT_NEAR(j.at("measured_homophily").get<double>(), 0.7, 0.05);
  const auto d = Dataset::open(tmp / "g");
  EXPECT_EQ(d.num_edges(), j.at("num_edges").get<int64_t>());
  EXPECT_EQ(d.manifest().features.dtype, DType::kBFloat16);

  // The same command with another thread count and text output writes the same bytes.
  const auto again = test::run_cli({"-j", "1", "generate", "--out", tmp / "h", "--nodes", "10K", "--edges", "100K",
                                    "--feature-dim", "16", "--classes", "4", "--dtype", "bfloat16", "--align", "512",
                                    "--seed", "3", "--homophily", "0.7", "--rmat", "0.6,0.15,0.15", "--train-fraction",
                                    "0.5", "--valid-fraction", "0.25"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("generated"), std::string::npos);
  const auto h = Dataset::open(tmp / "h");
  for (const auto& [array, entry] : d.manifest().files) EXPECT_EQ(entry.xxh3, h.manifest().files.at(array).xxh3) << array;
}

TEST(GenerateCli, BadInputFailsWithOneLine) {
  TempDir tmp;
  for (const std::vector<std::string>& args : {
           std::vector<std::string>{"generate", "--out", tmp / "g", "--nodes", "1000", "--edges", "1000", "--feature-dim",
                                    "8", "--classes", "0"},
           std::vector<std::string>{"generate", "--out", tmp / "g", "--nodes", "1000", "--edges", "1000", "--classes", "4"},
           std::vector<std::string>{"generate", "--out", tmp / "g", "--nodes", "ten", "--edges", "1000", "--classes", "4",
                                    "--no-features"},
           std::vector<std::string>{"generate", "--out", tmp / "g", "--nodes", "1000", "--edges", "1000", "--classes", "4",
                                    "--no-features", "--rmat", "0.5,0.2"},
       }) {
    const auto r = test::run_cli(args);
    EXPECT_NE(r.exit_code, 0) << args.back();
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("error"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(tmp / "g"));
}

}  // namespace
}  // namespace graphtier::graph
