// Feature rows in new order: the in-memory and the external bucket path give the same bytes.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/mount.h>

#include <cerrno>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/prep/feature_permute.hpp"
#include "test_util.hpp"

namespace graphtier::prep {
namespace {

std::string random_bytes(std::size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string bytes(count, '\0');
  for (auto& b : bytes) b = static_cast<char>(rng());
  return bytes;
}

std::string permute(const std::string& source, int64_t stride, const Permutation& perm, int64_t budget,
                    const std::string& scratch, FeaturePermuteReport* report = nullptr) {
  ThreadPool pool(2);
  const std::string out_path = scratch + "/out.bin";
  {
    OutputFile out(out_path);
    FeaturePermuteOptions options;
    options.memory_budget = budget;
    options.scratch_dir = scratch;
    const auto r = permute_feature_rows(source, stride, perm, out, options, pool);
    if (report != nullptr) *report = r;
    out.close();
  }
  return test::read_file(out_path);
}

int count_entries(const std::string& dir) {
  int count = 0;
  DIR* d = ::opendir(dir.c_str());
  while (dirent* e = ::readdir(d)) count += e->d_name[0] != '.';
  ::closedir(d);
  return count;
}

TEST(FeaturePermute, ExternalMatchesInMemoryAndReference) {
  test::TempDir dir;
  ThreadPool pool(2);
  // e.g. 3 x fp16 packed; 100 x fp16 padded to 256 B; rows longer than the 4 KiB O_DIRECT unit
  for (int64_t stride : {int64_t{6}, int64_t{256}, int64_t{5000}}) {
    const int64_t n = 1237;
    const std::string source = random_bytes(static_cast<std::size_t>(n * stride), 17 + stride);
    test::write_file(dir / "features.bin", source);
    std::vector<int64_t> order(n);
    std::mt19937_64 rng(stride);
    for (int64_t v = 0; v < n; ++v) order[v] = v;
    std::shuffle(order.begin(), order.end(), rng);
    const Permutation perm = from_new_to_old(order, pool);
    std::string expected;
    for (int64_t v = 0; v < n; ++v) expected += source.substr(static_cast<std::size_t>(order[v] * stride), stride);

    FeaturePermuteReport report;
    EXPECT_EQ(permute(dir / "features.bin", stride, perm, int64_t{1} << 30, dir.path(), &report), expected);
    EXPECT_FALSE(report.external);
    // Budgets from below one row (one row per bucket) to a few buckets with partial last bucket.
    for (int64_t budget : {int64_t{1}, 3 * stride, 1000 * stride / 7, n * stride - 1}) {
      EXPECT_EQ(permute(dir / "features.bin", stride, perm, budget, dir.path(), &report), expected)
          << "stride " << stride << " budget " << budget;
      EXPECT_TRUE(report.external);
      EXPECT_EQ(report.buckets, (n + std::max<int64_t>(1, budget / stride) - 1) / std::max<int64_t>(1, budget / stride));
      EXPECT_EQ(count_entries(dir.path()), 2) << "the scratch file must be gone";  // features.bin, out.bin
    }
  }
}

TEST(FeaturePermute, RejectsShortSource) {
  test::TempDir dir;
  ThreadPool pool(1);
  test::write_file(dir / "features.bin", std::string(100, 'x'));
  const Permutation perm = from_new_to_old({1, 0, 2}, pool);
  EXPECT_THROW(permute(dir / "features.bin", 64, perm, 1 << 20, dir.path()), FormatError);
}

// Bucket files larger than the free space of the scratch directory's file system fail before
// anything is written, saying how much they need and how much is free. The small file system is a
// 1 MiB tmpfs, which needs the right to mount.
TEST(FeaturePermute, ScratchLargerThanTheFreeSpaceFailsAtOnce) {
  test::TempDir dir;
  const std::string small = dir / "small";
  std::filesystem::create_directory(small);
  if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=1m") != 0) GTEST_SKIP() << "cannot mount a tmpfs here";
  const int64_t n = 1024, stride = 4096;  // 4 MiB of features, 256 KiB of budget: the external path
  test::write_file(dir / "features.bin", random_bytes(static_cast<std::size_t>(n * stride), 5));
  ThreadPool pool(2);
  std::vector<int64_t> order(n);
  for (int64_t v = 0; v < n; ++v) order[v] = n - 1 - v;
  const Permutation perm = from_new_to_old(order, pool);
  std::string message;
  int code = 0;
  {
    OutputFile out(dir / "out.bin");
    FeaturePermuteOptions options;
    options.memory_budget = 256 << 10;
    options.scratch_dir = small;
    try {
      permute_feature_rows(dir / "features.bin", stride, perm, out, options, pool);
    } catch (const IoError& e) {
      message = e.what();
      code = e.code().value();
    }
  }
  EXPECT_EQ(count_entries(small), 0);
  ::umount(small.c_str());
  EXPECT_EQ(code, ENOSPC) << message;
  EXPECT_NE(message.find("features.buckets: the feature buckets need 4"), std::string::npos) << message;
  EXPECT_NE(message.find("free"), std::string::npos) << message;
}

}  // namespace
}  // namespace graphtier::prep
