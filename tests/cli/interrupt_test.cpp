// Interrupted writers: `kill -9` in the middle of generate/prepare/convert (parked at a named point
// by the test hook, so the kill lands in a known state), and a write that fails (file size limit,
// as a full disk) leave the previous dataset or none, never a half-written one.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "graphtier/graph/dataset.hpp"
#include "test_util.hpp"

namespace graphtier {
namespace {

namespace fs = std::filesystem;

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

/// Runs `command` in the background with the test hook parking it at `point` (core/test_hook.hpp),
/// waits until it is parked there (at most 60 s), then kills it with SIGKILL, so the kill lands in
/// a known state however fast the machine is. Returns the shell's result: exit code 137 when the
/// kill landed, 3 (with the command's stderr) when the command never reached the point.
test::CommandResult kill_when_parked(const std::string& command, const std::string& point, const std::string& marker) {
  const std::string env = "GRAPHTIER_TEST_PARK_AT=" + point + " GRAPHTIER_TEST_PARK_MARKER='" + marker + "' ";
  return test::run_shell(env + command + " & pid=$!; i=0; while [ ! -e '" + marker +
                         "' ] && kill -0 $pid 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done; "
                         "if [ ! -e '" + marker + "' ]; then kill -9 $pid 2>/dev/null; wait $pid; echo 'never parked at " +
                         point + "' >&2; exit 3; fi; kill -9 $pid; wait $pid");
}

/// Whether `parent` holds a writer's temporary directory `.<name>.tmp-*`.
bool has_temporary(const std::string& parent, const std::string& name) {
  for (const auto& e : fs::directory_iterator(parent)) {
    if (e.path().filename().string().rfind("." + name + ".tmp-", 0) == 0) return true;
  }
  return false;
}

class InterruptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto r = test::run_shell(test::cli_command() + generate_args(tmp_ / "small", "2000", "20000"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string marker() const { return tmp_ / "parked"; }
  std::vector<std::string> kept() const { return {"small", "parked"}; }
  test::TempDir tmp_;
};

TEST_F(InterruptTest, KilledGenerateLeavesNoDataset) {
  const auto r = kill_when_parked(test::cli_command() + generate_args(tmp_ / "fresh", "20000", "200000"),
                                  "generate.nodes_written", marker());
  ASSERT_EQ(r.exit_code, 128 + 9) << r.err;
  EXPECT_FALSE(fs::exists(tmp_ / "fresh"));
  EXPECT_TRUE(has_temporary(tmp_.path(), "fresh")) << "the kill did not land while the dataset was being written";
  // The next writer into the same place cleans the dead one's temporary directory up.
  ASSERT_EQ(test::run_shell(test::cli_command() + generate_args(tmp_ / "fresh", "1000", "10000")).exit_code, 0);
  EXPECT_TRUE(extra_entries(tmp_.path(), {"small", "parked", "fresh"}).empty());
  EXPECT_NO_THROW(graph::Dataset::open(tmp_ / "fresh").verify_checksums());
}

TEST_F(InterruptTest, AParkPointNotReachedChangesNothing) {
  const auto r = test::run_shell("GRAPHTIER_TEST_PARK_AT=nowhere GRAPHTIER_TEST_PARK_MARKER='" + marker() + "' " +
                                 test::cli_command() + generate_args(tmp_ / "fresh", "1000", "10000"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(marker()));
  EXPECT_NO_THROW(graph::Dataset::open(tmp_ / "fresh").verify_checksums());
}

TEST_F(InterruptTest, KilledOverwriteKeepsThePreviousDataset) {
  // In the middle of writing, and with the new dataset complete but not yet swapped in.
  for (const char* point : {"generate.nodes_written", "dataset_writer.staged"}) {
    SCOPED_TRACE(point);
    fs::remove(marker());
    const std::string before = test::read_file(tmp_ / "small/manifest.json");
    const auto r =
        kill_when_parked(test::cli_command() + generate_args(tmp_ / "small", "20000", "200000") + " --overwrite", point,
                         marker());
    ASSERT_EQ(r.exit_code, 128 + 9) << r.err;
    EXPECT_EQ(test::read_file(tmp_ / "small/manifest.json"), before);
    EXPECT_NO_THROW(graph::Dataset::open(tmp_ / "small").verify_checksums());
    EXPECT_TRUE(has_temporary(tmp_.path(), "small"));
  }
  // The next overwrite replaces it and sweeps the dead writers' temporaries.
  ASSERT_EQ(
      test::run_shell(test::cli_command() + generate_args(tmp_ / "small", "3000", "30000") + " --overwrite").exit_code,
      0);
  EXPECT_TRUE(extra_entries(tmp_.path(), kept()).empty());
  EXPECT_EQ(graph::Dataset::open(tmp_ / "small").num_nodes(), 3000);
}

TEST_F(InterruptTest, KilledPrepareLeavesNoDataset) {
  const auto r = kill_when_parked(
      test::cli_command() + " -q prepare --dataset " + (tmp_ / "small") + " --out " + (tmp_ / "prepared") +
          " --hotness wrpr",
      "prepare.relabelled", marker());
  ASSERT_EQ(r.exit_code, 128 + 9) << r.err;
  EXPECT_FALSE(fs::exists(tmp_ / "prepared"));
  EXPECT_TRUE(has_temporary(tmp_.path(), "prepared"));
  EXPECT_NO_THROW(graph::Dataset::open(tmp_ / "small").verify_checksums());
}

TEST_F(InterruptTest, KilledPrepareInPlaceKeepsTheInput) {
  const std::string before = test::read_file(tmp_ / "small/manifest.json");
  const auto r = kill_when_parked(test::cli_command() + " -q prepare --dataset " + (tmp_ / "small") + " --out " +
                                      (tmp_ / "small") + " --hotness wrpr --overwrite",
                                  "dataset_writer.staged", marker());
  ASSERT_EQ(r.exit_code, 128 + 9) << r.err;
  EXPECT_EQ(test::read_file(tmp_ / "small/manifest.json"), before);
  EXPECT_NO_THROW(graph::Dataset::open(tmp_ / "small").verify_checksums());
}

TEST_F(InterruptTest, KilledConvertLeavesNoDataset) {
  const std::string edges = tmp_ / "edges.txt";
  ASSERT_EQ(test::run_shell("seq 1 60000 | awk '{print $1 % 10000, ($1 * 7) % 10000}' > " + edges).exit_code, 0);
  const auto r = kill_when_parked(
      test::cli_command() + " -q convert edge-list " + edges + " --out " + (tmp_ / "converted"),
      "convert.topology_written", marker());
  ASSERT_EQ(r.exit_code, 128 + 9) << r.err;
  EXPECT_FALSE(fs::exists(tmp_ / "converted"));
  EXPECT_TRUE(has_temporary(tmp_.path(), "converted"));
}

TEST_F(InterruptTest, FailedWriteReportsTheFileAndLeavesNothing) {
  // RLIMIT_FSIZE makes writes past 4 MiB fail with EFBIG, as a full disk makes them fail with ENOSPC.
  const auto r = test::run_shell("trap '' XFSZ; ulimit -f 4096; " + test::cli_command() +
                                 generate_args(tmp_ / "capped", "500000", "5M"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(".bin"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("graphtier: error:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp_ / "capped"));
  EXPECT_TRUE(extra_entries(tmp_.path(), kept()).empty());
}

}  // namespace
}  // namespace graphtier
