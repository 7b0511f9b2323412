// Faults in front of the kernel: short reads, EAGAIN and EINTR still give byte-exact rows; EIO
// surfaces as IoError naming the file and offset; nothing hangs and no row is silently wrong.
#include "graphtier/io/fault_injection.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/io/read_engine.hpp"
#include "io/io_test_util.hpp"
#include "test_util.hpp"

namespace graphtier::io {
namespace {

using test::random_ids;
using test::TempDir;
using test::Watchdog;

class FaultInjectionTest : public ::testing::TestWithParam<IoBackend> {
 protected:
  void SetUp() override {
    try {
      device_ = make_read_device(GetParam(), 16);
    } catch (const Unsupported&) {
      GTEST_SKIP() << io_backend_name(GetParam()) << " is not available here";
    }
  }

  // A table whose last row is unpadded, so the file ends inside a block.
  ReadFile table(const RowLayout& layout, uint64_t seed, bool try_direct = true) {
    path_ = dir_ / "features.bin";
    test::write_random_file(path_, static_cast<std::size_t>((layout.num_rows - 1) * layout.row_stride + layout.row_bytes),
                            seed);
    return ReadFile::open(path_, try_direct);
  }

  std::vector<std::byte> expected(const RowLayout& layout, std::span<const int64_t> ids) const {
    return test::pread_rows(path_, layout.row_stride, layout.row_bytes, ids, static_cast<std::size_t>(layout.row_bytes));
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<ReadDevice> device_;
};

TEST_P(FaultInjectionTest, ShortReadsEagainAndEintrStillGiveExactRows) {
  const Watchdog watchdog(30);
  // O_DIRECT restarts a short read's remainder at a block boundary, buffered reads where it stopped.
  for (const bool direct : {true, false})
  for (const RowLayout layout : {RowLayout{3000, 4096, 3000}, RowLayout{20000, 300, 300}, RowLayout{600, 20480, 20000}}) {
    const ReadFile file = table(layout, 21, direct);
    FaultPlan plan;
    plan.short_read_probability = 0.3;
    plan.eagain_probability = 0.15;
    plan.eintr_probability = 0.05;
    plan.seed = 21;
    FaultInjectingDevice faulty(*device_, plan);
    ReadEngine engine(faulty);
    std::vector<int64_t> ids = random_ids(1000, layout.num_rows, 22);
    ids.push_back(layout.num_rows - 1);
    std::vector<std::byte> out(ids.size() * static_cast<std::size_t>(layout.row_bytes));
    engine.read_rows(file, layout, ids, out, static_cast<std::size_t>(layout.row_bytes));
    EXPECT_EQ(out, expected(layout, ids)) << "stride " << layout.row_stride;
    EXPECT_GT(faulty.counts().short_reads, 10);
    EXPECT_GT(faulty.counts().eagain, 10);
    EXPECT_GT(faulty.counts().eintr, 0);
    EXPECT_EQ(faulty.counts().eio, 0);
  }
}

TEST_P(FaultInjectionTest, EioSurfacesAsIoErrorNamingFileAndOffset) {
  const Watchdog watchdog(30);
  const RowLayout layout{256, 4096, 4096};
  const ReadFile file = table(layout, 23);
  FaultPlan plan;
  plan.eio_at_offset = 17 * 4096 + 100;
  FaultInjectingDevice faulty(*device_, plan);
  ReadEngine engine(faulty);
  const std::vector<int64_t> ids = {5, 40, 17, 100, 200};  // no neighbours: row 17 is a read of its own
  std::vector<std::byte> out(ids.size() * 4096);
  try {
    engine.read_rows(file, layout, ids, out, 4096);
    FAIL() << "EIO was not reported";
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code().value(), EIO);
    EXPECT_NE(what.find(path_), std::string::npos) << what;
    EXPECT_NE(what.find("offset " + std::to_string(17 * 4096)), std::string::npos) << what;
    EXPECT_NE(what.find(std::strerror(EIO)), std::string::npos) << what;
  }
  // The engine is whole afterwards: rows away from the bad block read exactly.
  const std::vector<int64_t> good = {5, 40, 100, 200, 5};
  std::vector<std::byte> rows(good.size() * 4096);
  engine.read_rows(file, layout, good, rows, 4096);
  EXPECT_EQ(rows, expected(layout, good));
}

TEST_P(FaultInjectionTest, RandomEioAmongOtherFaultsFailsTheBatch) {
  const Watchdog watchdog(30);
  const RowLayout layout{4000, 512, 512};
  const ReadFile file = table(layout, 24);
  FaultPlan plan;
  plan.eio_probability = 0.02;
  plan.short_read_probability = 0.2;
  plan.eagain_probability = 0.2;
  plan.seed = 24;
  FaultInjectingDevice faulty(*device_, plan);
  ReadEngine engine(faulty);
  int failures = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const std::vector<int64_t> ids = random_ids(200, layout.num_rows, seed);
    std::vector<std::byte> out(ids.size() * 512);
    try {
      engine.read_rows(file, layout, ids, out, 512);
      // A batch that reports success must be exact.
      ASSERT_EQ(out, expected(layout, ids)) << "batch " << seed;
    } catch (const IoError& e) {
      EXPECT_EQ(e.code().value(), EIO);
      EXPECT_NE(std::string(e.what()).find(path_), std::string::npos) << e.what();
      ++failures;
    }
  }
  EXPECT_GT(failures, 0);
  EXPECT_GT(faulty.counts().eio, 0);
}

TEST_P(FaultInjectionTest, EagainThatNeverClearsFailsInsteadOfHanging) {
  const Watchdog watchdog(30);
  const RowLayout layout{64, 4096, 4096};
  const ReadFile file = table(layout, 25);
  FaultPlan plan;
  plan.eagain_probability = 1;
  FaultInjectingDevice faulty(*device_, plan);
  ReadEngine engine(faulty);
  const std::vector<int64_t> ids = {1, 9, 30};
  std::vector<std::byte> out(ids.size() * 4096);
  try {
    engine.read_rows(file, layout, ids, out, 4096);
    FAIL() << "a read that only ever got EAGAIN succeeded";
  } catch (const IoError& e) {
    EXPECT_EQ(e.code().value(), EAGAIN);
    EXPECT_NE(std::string(e.what()).find(path_), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Io, FaultInjectionTest, ::testing::Values(IoBackend::kUring, IoBackend::kPread),
                         [](const auto& info) { return std::string(io_backend_name(info.param)); });

}  // namespace
}  // namespace graphtier::io
