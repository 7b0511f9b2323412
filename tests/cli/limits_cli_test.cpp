// The CLI's refusals of counts it cannot honour: negative numbers (which would otherwise read as
// "not given" or wrap to 2^64 - 1), thread counts past the machine, and outputs larger than the
// free space of the target's file system. Each refusal is one line on stderr and writes nothing.
#include <gtest/gtest.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace graphtier {
namespace {

namespace fs = std::filesystem;

class LimitsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_file(dir_ / "e.txt", "1 0\n2 0\n0 1\n2 1\n0 2\n");
    const auto r = test::run_cli({"-q", "convert", "edge-list", dir_ / "e.txt", "-o", dir_ / "g"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  /// Runs the CLI and expects a refusal: exit 2 and one line on stderr naming `option`.
  void expect_refused(const std::vector<std::string>& args, const std::string& option) {
    std::string line;
    for (const auto& a : args) line += a + " ";
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << line << "\n" << r.err;
    EXPECT_NE(r.err.find(option), std::string::npos) << line << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << line << "\n" << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "out")) << line;
  }

  std::vector<std::string> generate(std::vector<std::string> extra) const {
    std::vector<std::string> args = {"-q", "generate", "-o", dir_ / "out", "--nodes", "100", "--edges", "400",
                                     "--classes", "2", "--feature-dim", "4"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  test::TempDir dir_;
};

TEST_F(LimitsCliTest, NegativeFractionsAndFractionsOverOneAreRefused) {
  expect_refused(generate({"--test-fraction", "-0.1"}), "test fraction");
  expect_refused(generate({"--train-fraction", "-0.5"}), "train fraction");
  expect_refused(generate({"--valid-fraction", "-0.2"}), "valid fraction");
  expect_refused(generate({"--train-fraction", "0.7", "--valid-fraction", "0.2", "--test-fraction", "0.2"}),
                 "add up to more than 1");
  // The default test fraction (the rest) still works.
  const auto r = test::run_cli(generate({"--train-fraction", "0.5"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(LimitsCliTest, NegativeSeedsAndStreamsAreRefused) {
  const std::string g = dir_ / "g";
  expect_refused(generate({"--seed", "-1"}), "--seed");
  expect_refused({"sample", "-d", g, "--seeds", "0", "--seed", "-1"}, "--seed");
  expect_refused({"sample", "-d", g, "--seeds", "0", "--stream", "-1"}, "--stream");
  expect_refused({"prepare", "-d", g, "-o", dir_ / "out", "--seed", "-1"}, "--seed");
  expect_refused({"bench", "sample", "-d", g, "--seed", "-1"}, "--seed");
  expect_refused({"bench", "hotness", "-d", g, "--seed", "-1"}, "--seed");
  // Large unsigned seeds stay accepted.
  const auto r = test::run_cli({"-q", "sample", "-d", g, "--seeds", "0", "--seed", "18446744073709551615"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(LimitsCliTest, NegativeCountsAreRefused) {
  const std::string g = dir_ / "g";
  expect_refused({"-j", "-3", "info", g}, "--threads");
  expect_refused({"--threads=-3", "info", g}, "--threads");
  expect_refused({"convert", "edge-list", dir_ / "e.txt", "-o", dir_ / "out", "--num-nodes", "-3"}, "invalid count");
  expect_refused({"convert", "edge-list", dir_ / "e.txt", "-o", dir_ / "out", "--num-classes", "-1"}, "invalid count");
  expect_refused({"generate", "-o", dir_ / "out", "--nodes", "-5", "--edges", "4", "--classes", "2", "--no-features"},
                 "invalid count");
  expect_refused({"generate", "-o", dir_ / "out", "--nodes", "5", "--edges", "4", "--classes", "2", "--feature-dim",
                  "-4"},
                 "invalid count");
  expect_refused(generate({"--align", "-512"}), "alignment");
  expect_refused({"prepare", "-d", g, "-o", dir_ / "out", "--iterations", "-1"}, "--iterations");
  expect_refused({"bench", "hotness", "-d", g, "--epochs", "-1"}, "--epochs");
  expect_refused({"bench", "hotness", "-d", g, "--window", "-1"}, "--window");
  expect_refused({"bench", "sample", "-d", g, "--batch-size", "-1"}, "--batch-size");
}

// A count, byte size, budget or dtype that does not parse is refused naming the option it was given to.
TEST_F(LimitsCliTest, UnparsableValuesNameTheirOption) {
  const std::string g = dir_ / "g";
  const std::vector<std::string> convert = {"convert", "edge-list", dir_ / "e.txt", "-o", dir_ / "out"};
  const auto with = [](std::vector<std::string> args, const std::vector<std::string>& extra) {
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  expect_refused(with(convert, {"--num-nodes", "x"}), "--num-nodes: invalid count 'x'");
  expect_refused(with(convert, {"--num-classes", "3Q"}), "--num-classes: invalid count '3Q' (use e.g.");
  expect_refused(with(convert, {"--memory-budget", "lots"}), "--memory-budget: invalid byte size 'lots'");
  expect_refused(with(convert, {"--dtype", "float33"}), "--dtype: unknown dtype 'float33'");
  expect_refused(generate({"--nodes", "many"}), "--nodes: invalid count 'many'");
  expect_refused(generate({"--edges", "1X"}), "--edges: invalid count '1X'");
  expect_refused(generate({"--classes", "two"}), "--classes: invalid count 'two'");
  expect_refused(generate({"--feature-dim", "4Z"}), "--feature-dim: invalid count '4Z'");
  expect_refused(generate({"--memory-budget", "200%"}), "--memory-budget: a percentage budget must lie in [0, 100]");
  expect_refused(generate({"--dtype", "x"}), "--dtype: unknown dtype 'x'");
  expect_refused({"prepare", "-d", g, "-o", dir_ / "out", "--memory-budget", "1QiB"}, "--memory-budget: invalid byte size");
  expect_refused({"prepare", "-d", g, "-o", dir_ / "out", "--hotness", "hot"}, "--hotness: unknown hotness method");
  expect_refused({"info", g, "--gpu-budget", "x"}, "--gpu-budget: invalid byte size 'x'");
  expect_refused({"info", g, "--cpu-budget", "-1%"}, "--cpu-budget: invalid percentage");
}

// Node ids and counts no machine can hold are refused in one line before anything is allocated.
TEST_F(LimitsCliTest, HugeNodeIdsAndCountsAreRefusedInOneLine) {
  test::write_file(dir_ / "huge.txt", "0 1\n0 9000000000000000000\n");
  expect_refused({"convert", "edge-list", dir_ / "huge.txt", "-o", dir_ / "out"},
                 "huge.txt:2: node id 9000000000000000000 is beyond the format's limit");
  expect_refused({"convert", "edge-list", dir_ / "e.txt", "-o", dir_ / "out", "--num-nodes", "1000T"},
                 "number of nodes (--num-nodes): 1000000000000000 nodes need");
  expect_refused({"generate", "-o", dir_ / "out", "--nodes", "1T", "--edges", "4", "--classes", "2", "--no-features"},
                 "number of nodes (--nodes): 1000000000000 nodes need");
}

TEST_F(LimitsCliTest, AHugeThreadCountIsCappedWithAWarning) {
  const auto r = test::run_cli({"-j", "100000", "info", dir_ / "g"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("100000 threads requested, capped at"), std::string::npos) << r.err;
}

// A feature table larger than the free space of the test's file system fails before anything is
// written, says how much is needed and how much is free, and leaves no temporary behind.
TEST_F(LimitsCliTest, GenerateLargerThanTheFreeSpaceFailsAtOnce) {
  struct statvfs st {};
  ASSERT_EQ(::statvfs(dir_.path().c_str(), &st), 0);
  const auto free_bytes = static_cast<double>(st.f_bavail) * static_cast<double>(st.f_frsize);
  const int64_t nodes = 1000;
  const auto dim = static_cast<int64_t>(free_bytes / (4.0 * nodes)) + 1024;  // float32 rows, above the free space
  const auto start = std::chrono::steady_clock::now();
  const auto r = test::run_cli({"-q", "generate", "-o", dir_ / "out", "--nodes", std::to_string(nodes), "--edges",
                                "4000", "--classes", "2", "--feature-dim", std::to_string(dim)});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("the features need"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("free"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_LT(seconds, 30.0);
  // Requested edges whose neighbour ids alone exceed the free space: refused before any is drawn.
  const auto edges = test::run_cli({"-q", "generate", "-o", dir_ / "out", "--nodes", "1000", "--edges", "1000T",
                                    "--classes", "2", "--no-features"});
  EXPECT_EQ(edges.exit_code, 1) << edges.err;
  EXPECT_NE(edges.err.find("the neighbour ids (indices.bin) need"), std::string::npos) << edges.err;
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir_.path())) left.push_back(entry.path().filename());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"e.txt", "g"}));
}

}  // namespace
}  // namespace graphtier
