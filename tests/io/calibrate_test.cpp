// Calibration measures the file it is given and picks a depth within the device's limit.
#include "graphtier/io/calibrate.hpp"

#include <gtest/gtest.h>

#include <string>

#include "graphtier/core/error.hpp"
#include "io/io_test_util.hpp"
#include "test_util.hpp"

namespace graphtier::io {
namespace {

class CalibrateTest : public ::testing::TestWithParam<IoBackend> {};

TEST_P(CalibrateTest, PicksADepthWithinTheLimitAndReportsTheCurve) {
  std::unique_ptr<ReadDevice> device;
  try {
    device = make_read_device(GetParam(), 16);
  } catch (const Unsupported&) {
    GTEST_SKIP() << io_backend_name(GetParam()) << " is not available here";
  }
  const test::Watchdog watchdog(30);
  test::TempDir dir;
  const std::string path = dir / "table.bin";
  test::write_random_file(path, std::size_t{16} << 20, 31);
  const ReadFile file = ReadFile::open(path);
  ReadEngine engine(*device);
  CalibrationOptions options;
  options.max_depth = 64;  // more than the device has: clamped to 16
  options.seconds_per_depth = 0.03;
  options.seed = 31;
  const Calibration c = calibrate(engine, file, options);
  ASSERT_EQ(c.samples.size(), 5u);  // depths 1, 2, 4, 8, 16
  for (std::size_t i = 0; i < c.samples.size(); ++i) {
    EXPECT_EQ(c.samples[i].depth, 1 << i);
    EXPECT_GT(c.samples[i].iops, 0);
    EXPECT_GT(c.samples[i].mean_latency_seconds, 0);
  }
  EXPECT_GE(c.depth, 1);
  EXPECT_LE(c.depth, 16);
  EXPECT_GT(c.peak_iops, 0);
  EXPECT_GE(c.iops, options.target_fraction * c.peak_iops);
  EXPECT_GT(c.depth1_latency_seconds, 0);
  EXPECT_GT(c.littles_law_depth, 0);
  EXPECT_EQ(engine.depth(), c.depth);
  EXPECT_EQ(engine.total().reads, 0);  // calibration reads are not counted as the workload's
}

TEST_P(CalibrateTest, RejectsAFileSmallerThanOneRead) {
  const auto device = make_read_device(IoBackend::kPread, 2);
  test::TempDir dir;
  test::write_random_file(dir / "tiny.bin", 100, 1);
  const ReadFile file = ReadFile::open(dir / "tiny.bin");
  ReadEngine engine(*device);
  EXPECT_THROW(calibrate(engine, file), InvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Io, CalibrateTest, ::testing::Values(IoBackend::kUring, IoBackend::kPread),
                         [](const auto& info) { return std::string(io_backend_name(info.param)); });

}  // namespace
}  // namespace graphtier::io
