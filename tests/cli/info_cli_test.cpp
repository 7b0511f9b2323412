// `graphtier info` says what a typed dataset and a partition are, and `graphtier convert
// typed-edge-list` lists only the options that apply to it and reports the reverses it added
// (issue 49).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace graphtier {
namespace {

// Papers p0..p3 and authors a0..a1, written one way only (p -> a); p labelled.
constexpr const char* kOneWayEdges = "0 0 p-a\n1 0 p-a\n2 1 p-a\n3 1 p-a\n";
constexpr const char* kLabels = "p0 0\np1 1\np2 0\np3 1\n";

class InfoCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(dir_ / "e.txt", kOneWayEdges);
    test::write_file(dir_ / "l.txt", kLabels);
  }
  test::CommandResult convert(const std::string& out, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"-q", "convert", "typed-edge-list", dir_ / "e.txt", "--labels", dir_ / "l.txt",
                                     "--split", "0.5,0.25", "-o", dir_ / out};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_cli(args);
  }
  test::TempDir dir_;
};

TEST_F(InfoCliTest, TypedEdgeListHelpListsOnlyItsOptions) {
  const auto r = test::run_cli({"convert", "typed-edge-list", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* absent : {"--symmetrize", "--num-nodes", "--memory-budget", "--dtype", "--align"}) {
    EXPECT_EQ(r.out.find(absent), std::string::npos) << absent << " does not apply:\n" << r.out;
  }
  for (const char* present : {"--labels", "--split", "--seed", "--no-reverses", "--keep-self-loops", "--name"}) {
    EXPECT_NE(r.out.find(present), std::string::npos) << present << ":\n" << r.out;
  }
  // The other formats keep theirs.
  const auto edges = test::run_cli({"convert", "edge-list", "--help"});
  EXPECT_NE(edges.out.find("--symmetrize"), std::string::npos) << edges.out;
  EXPECT_NE(edges.out.find("--memory-budget"), std::string::npos) << edges.out;
}

TEST_F(InfoCliTest, ConvertReportsTheReversesItAdded) {
  const auto r = convert("g");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("reverses   1 added: a:rev_to:p\n"), std::string::npos) << r.out;
  const auto json = test::run_cli({"-q", "--json", "convert", "typed-edge-list", dir_ / "e.txt", "-o", dir_ / "j"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["added_reverses"], nlohmann::json::array({"a:rev_to:p"}));
  const auto none = convert("one_way", {"--no-reverses"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out.find("reverses"), std::string::npos) << none.out;
  EXPECT_NE(none.err.find("no relation ends at the labelled type p"), std::string::npos) << none.err;
}

TEST_F(InfoCliTest, InfoSaysWhatATypedDatasetAndAPartitionAre) {
  ASSERT_EQ(convert("g").exit_code, 0);
  const auto typed = test::run_cli({"-q", "info", dir_ / "g"});
  ASSERT_EQ(typed.exit_code, 0) << typed.err;
  EXPECT_NE(typed.out.find("features   a table for 0 of the 2 node types"), std::string::npos) << typed.out;
  EXPECT_NE(typed.out.find("node types 2 (labelled: p)"), std::string::npos) << typed.out;

  const auto made = test::run_cli({"-q", "partition", "-d", dir_ / "g", "-o", dir_ / "part", "--ranks", "2"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string part = dir_ / "part";
  const auto whole = test::run_cli({"-q", "info", part});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_NE(whole.out.find("partition  " + part + ": g (" + part.substr(0, part.size() - 4) + "g) for 2 ranks\n"),
            std::string::npos)
      << whole.out;
  EXPECT_NE(whole.out.find("nodes      6 (typed"), std::string::npos) << whole.out;
  const auto json = nlohmann::json::parse(test::run_cli({"-q", "--json", "info", part}).out);
  EXPECT_EQ(json["ranks"], 2);
  EXPECT_EQ(json["typed"], true);
  EXPECT_EQ(json["source"]["name"], "g");

  const auto rank = test::run_cli({"-q", "info", part + "/rank-0001"});
  ASSERT_EQ(rank.exit_code, 0) << rank.err;
  EXPECT_NE(rank.out.find("rank 1 of a partition of g"), std::string::npos) << rank.out;
  const auto graph = test::run_cli({"-q", "info", part + "/rank-0001/graph"});
  ASSERT_EQ(graph.exit_code, 0) << graph.err;
  EXPECT_NE(graph.out.find("part       graph/ of rank 1 of a partition of g for 2 ranks"), std::string::npos)
      << graph.out;
}

}  // namespace
}  // namespace graphtier
