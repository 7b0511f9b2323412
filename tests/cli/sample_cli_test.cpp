// `graphtier sample` and `graphtier prepare --hotness presample` end to end on a tiny edge list.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graph_convert/convert_test_util.hpp"
#include "graphtier/graph/dataset.hpp"
#include "test_util.hpp"

namespace graphtier {
namespace {

// In-neighbours: 0 <- {1, 2, 3}, 1 <- {0, 4}, 2 <- {4}, 3 <- {}, 4 <- {0}.
constexpr const char* kSampleEdges = "1 0\n2 0\n3 0\n0 1\n4 1\n4 2\n0 4\n";

class SampleCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(dir_ / "e.txt", kSampleEdges);
    const auto r = test::run_cli({"-q", "convert", "edge-list", dir_ / "e.txt", "-o", dir_ / "g"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  test::TempDir dir_;
};

TEST_F(SampleCliTest, FullNeighbourhoodJsonFollowsTheContract) {
  const auto r = test::run_cli({"-q", "--json", "sample", "-d", dir_ / "g", "--seeds", "2,0", "--fanouts", "-1,-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["seeds"].get<std::vector<int64_t>>(), (std::vector<int64_t>{2, 0}));
  ASSERT_EQ(j["blocks"].size(), 2u);
  const auto& b0 = j["blocks"][0];
  EXPECT_EQ(b0["num_dst"].get<int64_t>(), 2);
  EXPECT_EQ(b0["src_nodes"].get<std::vector<int64_t>>(), (std::vector<int64_t>{2, 0, 4, 1, 3}));
  EXPECT_EQ(b0["indptr"].get<std::vector<int64_t>>(), (std::vector<int64_t>{0, 1, 4}));
  EXPECT_EQ(b0["indices"].get<std::vector<int64_t>>(), (std::vector<int64_t>{2, 3, 0, 4}));
  EXPECT_EQ(j["input_nodes"].get<std::vector<int64_t>>(), (std::vector<int64_t>{2, 0, 4, 1, 3}));
}

TEST_F(SampleCliTest, SameSeedSameBatchOtherSeedOtherBatch) {
  const auto run = [&](const std::string& seed) {
    const auto r = test::run_cli({"-q", "--json", "sample", "-d", dir_ / "g", "--seeds", "0,1", "--fanouts", "2,1",
                                  "--seed", seed});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  EXPECT_EQ(run("3"), run("3"));
  bool differs = false;
  for (int s = 4; s < 20 && !differs; ++s) differs = run(std::to_string(s)) != run("3");
  EXPECT_TRUE(differs) << "16 seeds all gave the same batch";
}

TEST_F(SampleCliTest, LayerWiseSamplersKeepTheBatchAndCarryWeights) {
  for (const std::string sampler : {"ladies", "fastgcn"}) {
    const auto r = test::run_cli({"-q", "--json", "sample", "-d", dir_ / "g", "--seeds", "0,1", "--fanouts", "2,2",
                                  "--sampler", sampler});
    ASSERT_EQ(r.exit_code, 0) << sampler << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["blocks"].size(), 2u) << sampler;
    for (const auto& block : j["blocks"]) {
      const auto indptr = block["indptr"].get<std::vector<int64_t>>();
      const auto weights = block["weights"].get<std::vector<double>>();
      ASSERT_EQ(weights.size(), static_cast<std::size_t>(indptr.back())) << sampler;
      // The layer keeps its dst nodes (each row has at least its self-loop): rows sum to 1.
      for (std::size_t i = 0; i + 1 < indptr.size(); ++i) {
        double sum = 0;
        for (int64_t e = indptr[i]; e < indptr[i + 1]; ++e) sum += weights[e];
        EXPECT_NEAR(sum, 1.0, 1e-6) << sampler << " row " << i;
      }
    }
  }
  const auto r = test::run_cli({"sample", "-d", dir_ / "g", "--seeds", "0", "--sampler", "graphsaint"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("expected neighbor, ladies or fastgcn"), std::string::npos) << r.err;
}

TEST_F(SampleCliTest, BadInputNamesTheProblem) {
  auto r = test::run_cli({"sample", "-d", dir_ / "g", "--seeds", "0,9", "--fanouts", "2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("seed 9"), std::string::npos) << r.err;
  r = test::run_cli({"sample", "-d", dir_ / "g", "--seeds", "0,0", "--fanouts", "2"});
  EXPECT_NE(r.err.find("appears more than once"), std::string::npos) << r.err;
  r = test::run_cli({"sample", "-d", dir_ / "g", "--seeds", "0", "--fanouts", "2,,1"});
  EXPECT_NE(r.err.find("--fanouts"), std::string::npos) << r.err;
  r = test::run_cli({"sample", "-d", dir_ / "missing", "--seeds", "0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("missing"), std::string::npos) << r.err;
}

TEST_F(SampleCliTest, PresampleNeedsATrainSplit) {
  const auto r = test::run_cli({"prepare", "-d", dir_ / "g", "-o", dir_ / "p", "--hotness", "presample"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no train split"), std::string::npos) << r.err;
}

TEST(PresampleCli, CoraOrderedByVisitCounts) {
  const std::string cora = test::datasets_dir() + "/cora";
  ASSERT_TRUE(std::filesystem::exists(cora + "/ind.cora.graph")) << cora << " is missing from the checkout";
  if (!test::python_has_numpy_scipy()) GTEST_SKIP() << "python3 with numpy and scipy is needed to read the Planetoid pickles";
  test::TempDir dir;
  auto r = test::run_cli({"-q", "convert", "planetoid", "--root", cora, "--name", "cora", "--out", dir / "cora"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = test::run_cli({"-q", "--json", "prepare", "-d", dir / "cora", "-o", dir / "pre", "--hotness", "presample",
                     "--presample-epochs", "4", "--presample-fanouts", "5,5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto pre = graph::Dataset::open(dir / "pre");
  EXPECT_EQ(pre.manifest().hotness, "presample");
  const auto hot = pre.hotness();
  // Every train node is an input node of its batch in each of the 4 epochs.
  for (int64_t v : pre.split(graph::Split::kTrain)) EXPECT_GE(hot[v], 4.0) << "train node " << v;
  EXPECT_LE(hot.front(), 4.0);  // one batch per epoch here (140 train nodes < 1024): at most once each
  EXPECT_EQ(hot.back(), 0.0);   // Cora has nodes no 2-hop sample from the train nodes reaches

  // bench hotness: rates in [0, 1], growing with the budget, none above the optimal placement.
  r = test::run_cli({"-q", "--json", "bench", "hotness", "-d", dir / "cora", "--budgets", "5%,20%,100%", "--fanouts",
                     "5,5", "--epochs", "2", "--batch-size", "64", "--cache", "10%"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto optimal = j["hit_rate"]["optimal"].get<std::vector<double>>();
  for (const auto& [method, rates_json] : j["hit_rate"].items()) {
    const auto rates = rates_json.get<std::vector<double>>();
    ASSERT_EQ(rates.size(), 3u) << method;
    for (std::size_t b = 0; b < rates.size(); ++b) {
      EXPECT_GE(rates[b], b ? rates[b - 1] : 0.0) << method;
      EXPECT_LE(rates[b], optimal[b] + 1e-12) << method;
    }
    EXPECT_DOUBLE_EQ(rates.back(), 1.0) << method << ": every row in the tier serves every read";
    if (method == "optimal") continue;
    // The simulated run's static share is the table's; its cache serves part of the rest.
    const auto& with_cache = j["with_cache"][method];
    EXPECT_NEAR(with_cache["static"].get<double>(), rates.front(), 1e-12) << method;
    EXPECT_GT(with_cache["cache"].get<double>(), 0.0) << method << ": 6 batches over 140 train nodes reuse rows";
    EXPECT_LE(with_cache["static"].get<double>() + with_cache["cache"].get<double>(), 1.0 + 1e-12) << method;
  }
}

}  // namespace
}  // namespace graphtier
