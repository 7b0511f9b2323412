// Interrupted writers: `kill -9` in the middle of generate/prepare/convert, and a write that fails
// (file size limit, as a full disk) leave the previous dataset or none, never a half-written one.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "graphtier/graph/dataset.hpp"
#include "test_util.hpp"

namespace graphtier {
namespace {

namespace fs = std::filesystem;

std::string cli() { return "'" GRAPHTIER_CLI "'"; }

/// Entries of `dir` other than the named ones: anything half-written would show up here.
std::vector<std::string> extra_entries(const std::string& dir, const std::vector<std::string>& expected) {
  std::vector<std::string> extra;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename();
    if (std::find(expected.begin(), expected.end(), name) == expected.end()) extra.push_back(name);
  }
  return extra;
}

std::string generate_args(const std::string& out, const std::string& nodes, const std::string& edges) {
  return " -q generate --out " + out + " --nodes " + nodes + " --edges " + edges + " --feature-dim 64 --classes 4 --seed 3";
}

/// Runs `command` in the background, waits until its writer's temporary directory
/// `.<name>.tmp-*` appears in `parent` (so the kill lands in the middle of writing the dataset),
/// lets it write for `write_s` more seconds and kills it with SIGKILL. Returns the shell's result:
/// exit code 137 when the kill landed, 0 when the command finished first.
test::CommandResult kill_while_writing(const std::string& command, const std::string& parent, const std::string& name,
                                       double write_s) {
  return test::run_shell(command + " & pid=$!; for i in $(seq 1 600); do ls -a '" + parent + "' | grep -q '^\\." +
                         name + "\\.tmp-' && break; sleep 0.05; done; sleep " + std::to_string(write_s) +
                         "; kill -9 $pid; wait $pid");
}

class InterruptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto r = test::run_shell(cli() + generate_args(tmp_ / "small", "2000", "20000"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  test::TempDir tmp_;
};

TEST_F(InterruptTest, KilledGenerateLeavesNoDataset) {
  const auto r = kill_while_writing(cli() + generate_args(tmp_ / "big", "3M", "30M"), tmp_.path(), "big", 0.3);
  ASSERT_EQ(r.exit_code, 128 + 9) << "generate finished before it could be killed: " << r.err;
  EXPECT_FALSE(fs::exists(tmp_ / "big"));
  // The next writer into the same place cleans the dead one's temporary directory up.
  ASSERT_EQ(test::run_shell(cli() + generate_args(tmp_ / "big", "1000", "10000")).exit_code, 0);
  EXPECT_TRUE(extra_entries(tmp_.path(), {"small", "big"}).empty());
  EXPECT_NO_THROW(graph::Dataset::open(tmp_ / "big").verify_checksums());
}

TEST_F(InterruptTest, KilledOverwriteKeepsThePreviousDataset) {
  const std::string before = test::read_file(tmp_ / "small/manifest.json");
  const auto r =
      kill_while_writing(cli() + generate_args(tmp_ / "small", "3M", "30M") + " --overwrite", tmp_.path(), "small", 0.3);
  ASSERT_EQ(r.exit_code, 128 + 9) << r.err;
  EXPECT_EQ(test::read_file(tmp_ / "small/manifest.json"), before);
  EXPECT_NO_THROW(graph::Dataset::open(tmp_ / "small").verify_checksums());
}

TEST_F(InterruptTest, KilledPrepareLeavesNoDataset) {
  ASSERT_EQ(test::run_shell(cli() + generate_args(tmp_ / "mid", "1M", "10M")).exit_code, 0);
  const auto r = kill_while_writing(
      cli() + " -q prepare --dataset " + (tmp_ / "mid") + " --out " + (tmp_ / "prepared") + " --hotness wrpr",
      tmp_.path(), "prepared", 0.1);
  ASSERT_EQ(r.exit_code, 128 + 9) << "prepare finished before it could be killed: " << r.err;
  EXPECT_FALSE(fs::exists(tmp_ / "prepared"));
  EXPECT_NO_THROW(graph::Dataset::open(tmp_ / "mid"));
}

TEST_F(InterruptTest, KilledConvertLeavesNoDataset) {
  const std::string edges = tmp_ / "edges.txt";
  ASSERT_EQ(test::run_shell("seq 1 6000000 | awk '{print $1 % 1000000, ($1 * 7) % 1000000}' > " + edges).exit_code, 0);
  const auto r = kill_while_writing(cli() + " -q convert edge-list " + edges + " --out " + (tmp_ / "converted"),
                                    tmp_.path(), "converted", 0.05);
  ASSERT_EQ(r.exit_code, 128 + 9) << "convert finished before it could be killed: " << r.err;
  EXPECT_FALSE(fs::exists(tmp_ / "converted"));
}

TEST_F(InterruptTest, FailedWriteReportsTheFileAndLeavesNothing) {
  // RLIMIT_FSIZE makes writes past 4 MiB fail with EFBIG, as a full disk makes them fail with ENOSPC.
  const auto r = test::run_shell("trap '' XFSZ; ulimit -f 4096; " + cli() + generate_args(tmp_ / "capped", "500000", "5M"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(".bin"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("graphtier: error:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp_ / "capped"));
  EXPECT_TRUE(extra_entries(tmp_.path(), {"small"}).empty());
}

}  // namespace
}  // namespace graphtier
