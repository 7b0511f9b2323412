// `graphtier partition` and `graphtier verify` of its output: the directory written and verified,
// one-line refusals naming the option, a corrupted rank file and a foreign source caught, and an
// interrupted partition leaving nothing (docs/architecture.md, Errors: exit status 128 + signal).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "graphtier/graph/dataset.hpp"
#include "test_util.hpp"

namespace graphtier {
namespace {

namespace fs = std::filesystem;

class PartitionCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto r = test::run_cli({"-q", "generate", "-o", dir_ / "g", "--nodes", "200", "--edges", "1600", "--classes",
                                  "3", "--feature-dim", "8", "--seed", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  std::vector<std::string> partition(std::vector<std::string> extra, const std::string& out = "out") const {
    std::vector<std::string> args = {"-q", "partition", "-d", dir_ / "g", "-o", dir_ / out};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  /// Expects a refusal: exit 2 and one line on stderr holding `text`, and no output.
  void expect_refused(const std::vector<std::string>& args, const std::string& text) {
    std::string line;
    for (const auto& a : args) line += a + " ";
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << line << "\n" << r.err;
    EXPECT_NE(r.err.find(text), std::string::npos) << line << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << line << "\n" << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "out")) << line;
  }

  /// Entries of the test directory: nothing half-written may show up.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_.path())) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  test::TempDir dir_;
};

TEST_F(PartitionCliTest, WritesAndVerifiesBothGraphModes) {
  for (const std::string mode : {"replicated", "partitioned"}) {
    const auto r = test::run_cli(partition({"--ranks", "4", "--replication", "2", "--graph", mode, "--hot-replicated",
                                            "5%", "--overwrite", "--json"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\"hot_rows\": 10"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"graph\": \"" + mode + "\""), std::string::npos) << r.out;
    for (int k = 0; k < 4; ++k) {
      const std::string rank = dir_ / ("out/rank-000" + std::to_string(k));
      EXPECT_NO_THROW(graph::Dataset::open(rank + "/graph").verify_checksums());
      EXPECT_NO_THROW(graph::Dataset::open(rank + "/features").verify_checksums());
    }
    const auto v = test::run_cli({"-q", "verify", dir_ / "out"});
    ASSERT_EQ(v.exit_code, 0) << v.err;
    EXPECT_NE(v.out.find(": ok (partition, 8 datasets"), std::string::npos) << v.out;
    EXPECT_NE(v.out.find("source checked against " + fs::absolute(dir_ / "g").lexically_normal().string()),
              std::string::npos)
        << v.out;
    const auto one = test::run_cli({"-q", "verify", dir_ / "out/rank-0003"});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    EXPECT_NE(one.out.find(": ok (partition rank 3, 2 datasets"), std::string::npos) << one.out;
  }
  EXPECT_EQ(entries(), (std::vector<std::string>{"g", "out"}));
  // A plain dataset still verifies as before, and --source is only for a partition.
  const auto plain = test::run_cli({"-q", "verify", dir_ / "g"});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  const auto r = test::run_cli({"-q", "verify", dir_ / "g", "--source", dir_ / "g"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--source applies to a partition directory"), std::string::npos) << r.err;
}

TEST_F(PartitionCliTest, BadArgumentsAreRefusedInOneLine) {
  expect_refused(partition({"--ranks", "0"}), "--ranks must be >= 1");
  expect_refused(partition({"--ranks", "4", "--replication", "0"}), "--replication must be >= 1");
  expect_refused(partition({"--ranks", "4", "--replication", "3"}), "--replication 3 does not divide --ranks 4");
  expect_refused(partition({"--ranks", "201"}), "201 process rows exceed the 200 nodes");
  expect_refused(partition({"--ranks", "2", "--hot-replicated", "201"}), "--hot-replicated 201 exceeds the 200 nodes");
  expect_refused(partition({"--ranks", "2", "--hot-replicated", "lots"}), "--hot-replicated: invalid count 'lots'");
  expect_refused(partition({"--ranks", "2", "--hot-replicated", "150%"}), "--hot-replicated: invalid percentage");
  expect_refused(partition({"--ranks", "2", "--graph", "sharded"}), "--graph: unknown mode 'sharded'");
  expect_refused(partition({"--ranks", "2", "--balance", "reads"}), "--balance: unknown balance 'reads'");
  expect_refused(partition({"--ranks", "2", "--balance", "hotness"}), "--balance hotness needs the source's hotness.bin");
  expect_refused(partition({"--ranks", "2"}, "g"), "--out " + dir_ / "g" + " already exists (pass --overwrite");
  expect_refused(partition({"--ranks", "2", "--overwrite"}, "g"), "exists and has no partition.json; refusing");
  EXPECT_TRUE(fs::exists(dir_ / "g/manifest.json"));
  // After prepare there is a hotness.bin to balance by.
  ASSERT_EQ(test::run_cli({"-q", "prepare", "-d", dir_ / "g", "-o", dir_ / "p", "--hotness", "degree"}).exit_code, 0);
  const auto r = test::run_cli({"-q", "partition", "-d", dir_ / "p", "-o", dir_ / "out", "--ranks", "2", "--balance",
                                "hotness"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(PartitionCliTest, VerifyCatchesACorruptedRankFileAndAForeignSource) {
  ASSERT_EQ(test::run_cli(partition({"--ranks", "2"})).exit_code, 0);
  ASSERT_EQ(test::run_cli({"-q", "generate", "-o", dir_ / "other", "--nodes", "200", "--edges", "1600", "--classes",
                           "3", "--feature-dim", "8", "--seed", "3"})
                .exit_code,
            0);
  auto r = test::run_cli({"-q", "verify", dir_ / "out", "--source", dir_ / "other"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("belongs to another source: " + dir_ / "other/manifest.json"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  const std::string file = dir_ / "out/rank-0001/features/features.bin";
  std::string bytes = test::read_file(file);
  bytes[3] ^= 1;
  test::write_file(file, bytes);
  r = test::run_cli({"-q", "verify", dir_ / "out"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(file + ": checksum mismatch"), std::string::npos) << r.err;
  r = test::run_cli({"-q", "verify", dir_ / "out/rank-0000"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(PartitionCliTest, InterruptedPartitionLeavesNothing) {
  // SIGTERM after the first rank is written, and while the finished directory waits to be
  // renamed into place: exit 143, no output.
  const std::string marker = dir_ / "parked";
  const std::string args = " -q -j 1 partition -d " + dir_ / "g" + " -o " + dir_ / "out" + " --ranks 4 --replication 2";
  for (const std::string point : {"partition.rank_written", "partition.staged"}) {
    const std::string env = "GRAPHTIER_TEST_PARK_AT=" + point + " GRAPHTIER_TEST_PARK_MARKER='" + marker + "' ";
    const auto r = test::run_shell(env + test::cli_command() + args + " & pid=$!; i=0; while [ ! -e '" + marker +
                                   "' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done; kill -TERM $pid; wait $pid");
    EXPECT_EQ(r.exit_code, 128 + 15) << point << "\n" << r.err;
    EXPECT_NE(r.err.find("parked at " + point), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("partition"), std::string::npos) << r.err;
    fs::remove(marker);
    EXPECT_EQ(entries(), (std::vector<std::string>{"g"})) << point;
  }
  const std::string env = "GRAPHTIER_TEST_PARK_AT=partition.staged GRAPHTIER_TEST_PARK_MARKER='" + marker + "' ";
  // SIGKILL leaves the temporary, which the next partition of the same output sweeps.
  auto r = test::run_shell(env + test::cli_command() + args + " & pid=$!; i=0; while [ ! -e '" + marker +
                           "' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done; kill -KILL $pid; wait $pid");
  EXPECT_EQ(r.exit_code, 128 + 9) << r.err;
  fs::remove(marker);
  EXPECT_EQ(entries().size(), 2u);  // g and the dead writer's .out.tmp-*
  ASSERT_EQ(test::run_shell(test::cli_command() + args).exit_code, 0);
  EXPECT_EQ(entries(), (std::vector<std::string>{"g", "out"}));
}

}  // namespace
}  // namespace graphtier
