// Row and block reads are byte-exact against pread, on both backends and every row layout the
// dataset writer produces; bad ids and truncated files fail loudly and early.
#include "graphtier/io/read_engine.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "io/io_test_util.hpp"
#include "test_util.hpp"

namespace graphtier::io {
namespace {

using test::random_ids;
using test::TempDir;
using test::Watchdog;
using test::write_random_file;

constexpr int kDepth = 16;

// A device of the given backend, or a visible skip where this machine cannot make one.
std::unique_ptr<ReadDevice> device_or_skip(IoBackend backend) {
  try {
    return make_read_device(backend, kDepth);
  } catch (const Unsupported&) {
    return nullptr;
  }
}

#define GRAPHTIER_DEVICE_OR_SKIP(var, backend)                                        \
  auto var = device_or_skip(backend);                                                 \
  if (!var) GTEST_SKIP() << io_backend_name(backend) << " is not available here"

// Writes a table of `num_rows` rows whose last row is not padded: the file then ends inside a
// block, as a table written without trailing padding does.
std::string write_table(const TempDir& dir, const RowLayout& layout, uint64_t seed) {
  const std::string path = dir / "features.bin";
  write_random_file(path, static_cast<std::size_t>((layout.num_rows - 1) * layout.row_stride + layout.row_bytes), seed);
  return path;
}

struct LayoutCase {
  const char* name;
  int64_t row_stride;
  int64_t row_bytes;
};

// Row strides as FeatureLayout::make gives them, plus packed rows that straddle blocks.
constexpr LayoutCase kLayouts[] = {
    {"stride512_full", 512, 512},        {"stride512_padded", 512, 300},    {"stride4096_full", 4096, 4096},
    {"stride4096_padded", 4096, 3000},   {"packed128_of_100", 128, 100},    {"stride1536_straddles", 1536, 1536},
    {"stride8192_multiblock", 8192, 6000}, {"packed300_unaligned", 300, 300}, {"stride20480", 20480, 20000},
};

class RowsMatchPread : public ::testing::TestWithParam<std::tuple<IoBackend, LayoutCase>> {};

TEST_P(RowsMatchPread, RandomIdsWithDuplicates) {
  const auto [backend, lc] = GetParam();
  GRAPHTIER_DEVICE_OR_SKIP(device, backend);
  const Watchdog watchdog(30);
  TempDir dir;
  const RowLayout layout{std::max<int64_t>(8, (int64_t{6} << 20) / lc.row_stride), lc.row_stride, lc.row_bytes};
  const std::string path = write_table(dir, layout, 11);
  const ReadFile file = ReadFile::open(path);
  ReadEngine engine(*device);
  for (uint64_t seed : {1u, 2u}) {
    std::vector<int64_t> ids = random_ids(1500, layout.num_rows, seed);
    ids.push_back(layout.num_rows - 1);  // the row the file ends in
    ids.push_back(0);
    const std::size_t pitch = static_cast<std::size_t>(lc.row_bytes) + 8;  // an output pitch of its own
    std::vector<std::byte> out(ids.size() * pitch, std::byte{0x55});
    engine.read_rows(file, layout, ids, out, pitch);
    const std::vector<std::byte> expected = test::pread_rows(path, lc.row_stride, lc.row_bytes, ids, pitch);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      ASSERT_EQ(0, std::memcmp(out.data() + k * pitch, expected.data() + k * pitch, static_cast<std::size_t>(lc.row_bytes)))
          << "row " << ids[k] << " at position " << k;
      ASSERT_EQ(out[k * pitch + static_cast<std::size_t>(lc.row_bytes)], std::byte{0x55}) << "wrote past the row";
    }
    EXPECT_GT(engine.last_batch().reads, 0);
    EXPECT_LE(engine.last_batch().reads, static_cast<int64_t>(ids.size()));
    EXPECT_GT(engine.last_batch().iops(), 0);
    EXPECT_GT(engine.last_batch().mean_latency_seconds(), 0);
  }
  EXPECT_EQ(engine.total().depth, kDepth);
}

INSTANTIATE_TEST_SUITE_P(Io, RowsMatchPread,
                         ::testing::Combine(::testing::Values(IoBackend::kUring, IoBackend::kPread),
                                            ::testing::ValuesIn(kLayouts)),
                         [](const auto& info) {
                           return std::string(io_backend_name(std::get<0>(info.param))) + "_" +
                                  std::get<1>(info.param).name;
                         });

class ReadEngineTest : public ::testing::TestWithParam<IoBackend> {};

TEST_P(ReadEngineTest, RowsSharingABlockAreReadOnce) {
  GRAPHTIER_DEVICE_OR_SKIP(device, GetParam());
  TempDir dir;
  const RowLayout layout{64, 512, 512};
  const std::string path = write_table(dir, layout, 3);
  const ReadFile file = ReadFile::open(path);
  ReadEngine engine(*device);
  const std::vector<int64_t> ids = {3, 3, 0, 7, 5, 3, 8 + 1, 16 + 2};  // blocks 0, 0, 0, 0, 0, 0, 1, 2
  std::vector<std::byte> out(ids.size() * 512);
  engine.read_rows(file, layout, ids, out, 512);
  // Blocks 0, 1 and 2 adjoin: one read of 12 KiB serves all eight rows.
  EXPECT_EQ(engine.last_batch().reads, 1);
  EXPECT_EQ(engine.last_batch().bytes, 3 * 4096);
  EXPECT_EQ(out, test::pread_rows(path, 512, 512, ids, 512));
}

TEST_P(ReadEngineTest, WholeBlockRowsIntoAnAlignedOutputAreExactAndStayInTheirRows) {
  // Rows of whole blocks read into an output aligned for O_DIRECT go straight into their rows (no
  // staging copy); the rows either side of each must stay as they were.
  GRAPHTIER_DEVICE_OR_SKIP(device, GetParam());
  TempDir dir;
  const RowLayout layout{300, 4096, 4096};
  const std::string path = write_table(dir, layout, 5);
  const ReadFile file = ReadFile::open(path);
  ReadEngine engine(*device);
  std::vector<int64_t> ids = random_ids(200, layout.num_rows, 9);
  ids.push_back(layout.num_rows - 1);
  ids.push_back(ids.front());  // a duplicate shares its extent: copied from the staging slot
  const std::size_t pitch = 2 * 4096;  // every other output row is a guard that must stay 0x55
  const DirectIoBuffer out = allocate_direct_io_buffer(ids.size() * pitch);
  std::memset(out.get(), 0x55, ids.size() * pitch);
  engine.read_rows(file, layout, ids, std::span<std::byte>(out.get(), ids.size() * pitch), pitch);
  const std::vector<std::byte> expected = test::pread_rows(path, 4096, 4096, ids, pitch);
  for (std::size_t k = 0; k < ids.size(); ++k) {
    ASSERT_EQ(0, std::memcmp(out.get() + k * pitch, expected.data() + k * pitch, 4096)) << "row " << ids[k];
    for (std::size_t b = 4096; b < pitch; ++b) ASSERT_EQ(out.get()[k * pitch + b], std::byte{0x55}) << "guard of " << k;
  }
}

TEST_P(ReadEngineTest, RowsToTheirOwnDestinationsAreExactInPlaceOrNot) {
  // Per-row destinations (the host cache's lines, staging rows): aligned ones of whole-block rows
  // are read in place, misaligned ones through the staging slot; each gets its row and no more.
  GRAPHTIER_DEVICE_OR_SKIP(device, GetParam());
  TempDir dir;
  const RowLayout layout{300, 4096, 4096};
  const std::string path = write_table(dir, layout, 6);
  const ReadFile file = ReadFile::open(path);
  ReadEngine engine(*device);
  std::vector<int64_t> ids = random_ids(120, layout.num_rows, 4);
  ids.push_back(ids.front());  // a duplicate: one extent, two destinations
  const std::size_t slot = 3 * 4096;  // each destination's slot; the rest of it must stay 0x55
  const DirectIoBuffer buffer = allocate_direct_io_buffer(ids.size() * slot);
  std::memset(buffer.get(), 0x55, ids.size() * slot);
  std::vector<std::byte*> dsts(ids.size());
  for (std::size_t k = 0; k < ids.size(); ++k) {
    // Reversed slots, every third destination 8 bytes past its aligned start.
    dsts[k] = buffer.get() + (ids.size() - 1 - k) * slot + (k % 3 == 0 ? 8 : 0);
  }
  engine.read_rows(file, layout, ids, dsts);
  const std::vector<std::byte> expected = test::pread_rows(path, 4096, 4096, ids, 4096);
  for (std::size_t k = 0; k < ids.size(); ++k) {
    ASSERT_EQ(0, std::memcmp(dsts[k], expected.data() + k * 4096, 4096)) << "row " << ids[k] << " at " << k;
    const std::byte* base = buffer.get() + (ids.size() - 1 - k) * slot;
    for (const std::byte* b = base; b < base + slot; ++b) {
      if (b < dsts[k] || b >= dsts[k] + 4096) {
        ASSERT_EQ(*b, std::byte{0x55}) << "around row " << k;
      }
    }
  }
  EXPECT_THROW(engine.read_rows(file, layout, ids, std::span<std::byte* const>(dsts).first(3)), InvalidArgument);
  dsts[5] = nullptr;
  EXPECT_THROW(engine.read_rows(file, layout, ids, dsts), InvalidArgument);
}

TEST_P(ReadEngineTest, SmallReadLimitSplitsReadsAndKeepsStraddlingRowsWhole) {
  GRAPHTIER_DEVICE_OR_SKIP(device, GetParam());
  TempDir dir;
  const RowLayout layout{2000, 1536, 1536};
  const std::string path = write_table(dir, layout, 4);
  const ReadFile file = ReadFile::open(path);
  ReadEngine engine(*device, 4, ReadEngine::kBlockBytes);
  std::vector<int64_t> ids;
  for (int64_t i = 999; i >= 0; --i) ids.push_back(i);
  ids.push_back(500);
  std::vector<std::byte> out(ids.size() * 1536);
  engine.read_rows(file, layout, ids, out, 1536);
  EXPECT_EQ(out, test::pread_rows(path, 1536, 1536, ids, 1536));
  EXPECT_GT(engine.last_batch().reads, 1);
}

TEST_P(ReadEngineTest, OutOfRangeIdsAreRejectedBeforeAnyRead) {
  GRAPHTIER_DEVICE_OR_SKIP(device, GetParam());
  TempDir dir;
  const RowLayout layout{100, 4096, 4096};
  const ReadFile file = ReadFile::open(write_table(dir, layout, 5));
  ReadEngine engine(*device);
  std::vector<std::byte> out(3 * 4096, std::byte{0x55});
  for (const int64_t bad : {int64_t{100}, int64_t{-1}, int64_t{1} << 40}) {
    const std::vector<int64_t> ids = {1, bad, 2};
    try {
      engine.read_rows(file, layout, ids, out, 4096);
      FAIL() << "id " << bad << " was accepted";
    } catch (const OutOfRange& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("position 1"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(engine.total().reads, 0);
  EXPECT_EQ(out, std::vector<std::byte>(3 * 4096, std::byte{0x55}));
}

TEST_P(ReadEngineTest, BadArgumentsAreRejected) {
  GRAPHTIER_DEVICE_OR_SKIP(device, GetParam());
  TempDir dir;
  const RowLayout layout{10, 512, 512};
  const ReadFile file = ReadFile::open(write_table(dir, layout, 6));
  ReadEngine engine(*device);
  std::vector<std::byte> out(2 * 512);
  const std::vector<int64_t> ids = {1, 2};
  EXPECT_THROW(engine.read_rows(file, layout, ids, out, 256), InvalidArgument);               // pitch < row
  EXPECT_THROW(engine.read_rows(file, layout, ids, std::span(out).first(700), 512), InvalidArgument);  // too small
  EXPECT_THROW(engine.read_rows(file, RowLayout{10, 256, 512}, ids, out, 512), InvalidArgument);        // stride < row
  EXPECT_THROW(engine.set_depth(0), InvalidArgument);
  EXPECT_THROW(engine.set_depth(kDepth + 1), InvalidArgument);
  EXPECT_THROW(ReadEngine(*device, 1, 1000), InvalidArgument);
  engine.read_rows(file, layout, {}, {}, 512);  // nothing to read is fine
  EXPECT_EQ(engine.last_batch().reads, 0);
}

TEST_P(ReadEngineTest, TruncatedFileThrowsIoErrorNamingFileAndOffset) {
  GRAPHTIER_DEVICE_OR_SKIP(device, GetParam());
  const Watchdog watchdog(30);
  TempDir dir;
  const RowLayout layout{100, 4096, 4000};
  const std::string path = write_table(dir, layout, 7);
  // The manifest promises 100 rows, the file was cut inside row 60 (not at a block boundary).
  std::filesystem::resize_file(path, 60 * 4096 + 1000);
  const ReadFile file = ReadFile::open(path);
  ReadEngine engine(*device);
  std::vector<std::byte> out(4096);
  for (const int64_t id : {int64_t{60}, int64_t{61}, int64_t{99}}) {
    const std::vector<int64_t> ids = {id};
    try {
      engine.read_rows(file, layout, ids, out, 4096);
      FAIL() << "row " << id << " past the end of the file was read";
    } catch (const IoError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << what;
      EXPECT_NE(what.find("end of file"), std::string::npos) << what;
      EXPECT_NE(what.find("offset " + std::to_string(id * 4096)), std::string::npos) << what;
      EXPECT_EQ(e.code().value(), ENODATA);
    }
  }
  // Rows before the cut still read, through the same engine.
  const std::vector<int64_t> ids = {59, 0};
  std::vector<std::byte> rows(2 * 4000);
  engine.read_rows(file, layout, ids, rows, 4000);
  EXPECT_EQ(rows, test::pread_rows(path, 4096, 4000, ids, 4000));
}

TEST_P(ReadEngineTest, FileTruncatedAfterOpenThrowsIoError) {
  GRAPHTIER_DEVICE_OR_SKIP(device, GetParam());
  const Watchdog watchdog(30);
  TempDir dir;
  const RowLayout layout{64, 4096, 4096};
  const std::string path = write_table(dir, layout, 8);
  const ReadFile file = ReadFile::open(path);
  std::filesystem::resize_file(path, 8192);
  ReadEngine engine(*device);
  std::vector<std::byte> out(2 * 4096);
  const std::vector<int64_t> ids = {1, 40};
  EXPECT_THROW(engine.read_rows(file, layout, ids, out, 4096), IoError);
}

TEST_P(ReadEngineTest, TmpfsFileReadsExactly) {
  // tmpfs has O_DIRECT only since Linux 6.6; before, the file is opened without it.
  if (!std::filesystem::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm (tmpfs) here";
  GRAPHTIER_DEVICE_OR_SKIP(device, GetParam());
  const std::string path = "/dev/shm/graphtier-io-test-" + std::to_string(::getpid()) + ".bin";
  const RowLayout layout{1000, 300, 300};
  write_random_file(path, 1000 * 300, 9);
  {
    const ReadFile file = ReadFile::open(path);
    ReadEngine engine(*device);
    const std::vector<int64_t> ids = random_ids(400, layout.num_rows, 9);
    std::vector<std::byte> out(ids.size() * 300);
    engine.read_rows(file, layout, ids, out, 300);
    EXPECT_EQ(out, test::pread_rows(path, 300, 300, ids, 300)) << "O_DIRECT: " << file.direct();
  }
  std::filesystem::remove(path);
}

TEST_P(ReadEngineTest, BufferedFileReadsExactly) {
  GRAPHTIER_DEVICE_OR_SKIP(device, GetParam());
  TempDir dir;
  for (const LayoutCase& lc : kLayouts) {
    const RowLayout layout{std::max<int64_t>(8, (int64_t{1} << 20) / lc.row_stride), lc.row_stride, lc.row_bytes};
    const std::string path = write_table(dir, layout, 12);
    const ReadFile file = ReadFile::open(path, /*try_direct=*/false);
    ASSERT_FALSE(file.direct());
    ReadEngine engine(*device);
    std::vector<int64_t> ids = random_ids(300, layout.num_rows, 12);
    ids.push_back(layout.num_rows - 1);
    const std::size_t pitch = static_cast<std::size_t>(lc.row_bytes);
    std::vector<std::byte> out(ids.size() * pitch);
    engine.read_rows(file, layout, ids, out, pitch);
    EXPECT_EQ(out, test::pread_rows(path, lc.row_stride, lc.row_bytes, ids, pitch)) << lc.name;
  }
}

TEST_P(ReadEngineTest, BlockRequestsMatchPread) {
  GRAPHTIER_DEVICE_OR_SKIP(device, GetParam());
  TempDir dir;
  const std::string path = dir / "blocks.bin";
  write_random_file(path, 1 << 20, 10);
  const ReadFile file = ReadFile::open(path);
  ReadEngine engine(*device, 8);
  constexpr std::size_t kRequests = 100;
  const DirectIoBuffer buffer = allocate_direct_io_buffer(kRequests * 8192);
  std::vector<ReadRequest> requests;
  const std::vector<int64_t> blocks = random_ids(kRequests, 255, 10);
  for (std::size_t i = 0; i < kRequests; ++i) {
    // Lengths of 512 B to 8 KiB at 512-byte offsets: what O_DIRECT accepts.
    const std::size_t length = 512 * (1 + i % 16);
    requests.push_back(ReadRequest{&file, static_cast<uint64_t>(blocks[i]) * 4096, length, buffer.get() + i * 8192});
  }
  engine.read(requests);
  const int fd = ::open(path.c_str(), O_RDONLY);
  std::vector<std::byte> expected(8192);
  for (const ReadRequest& r : requests) {
    pread_exact(fd, expected.data(), r.length, r.offset, path);
    ASSERT_EQ(0, std::memcmp(r.dst, expected.data(), r.length)) << "offset " << r.offset;
  }
  ::close(fd);
  EXPECT_EQ(engine.last_batch().reads, static_cast<int64_t>(kRequests));
  EXPECT_EQ(engine.total().reads, static_cast<int64_t>(kRequests));

  // Past the end of the file: an IoError naming the file and the offset.
  const ReadRequest past{&file, 1 << 20, 4096, buffer.get()};
  try {
    engine.read(std::span(&past, 1));
    FAIL() << "read past the end succeeded";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("offset 1048576"), std::string::npos) << e.what();
  }
  if (file.direct()) {
    const ReadRequest unaligned{&file, 100, 4096, buffer.get()};
    EXPECT_THROW(engine.read(std::span(&unaligned, 1)), InvalidArgument);
  }
}

INSTANTIATE_TEST_SUITE_P(Io, ReadEngineTest, ::testing::Values(IoBackend::kUring, IoBackend::kPread),
                         [](const auto& info) { return std::string(io_backend_name(info.param)); });

TEST(IoBackendTest, ParsesNames) {
  EXPECT_EQ(parse_io_backend("auto"), IoBackend::kAuto);
  EXPECT_EQ(parse_io_backend("uring"), IoBackend::kUring);
  EXPECT_EQ(parse_io_backend("pread"), IoBackend::kPread);
  EXPECT_THROW(parse_io_backend("aio"), InvalidArgument);
  EXPECT_THROW(make_read_device(IoBackend::kAuto, 0), InvalidArgument);
  const auto device = make_read_device(IoBackend::kAuto, 4);
  EXPECT_EQ(device->max_in_flight(), 4);
}

TEST(ReadFileTest, MissingFileNamesThePath) {
  try {
    (void)ReadFile::open("/nonexistent/graphtier/features.bin");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/graphtier/features.bin"), std::string::npos);
    EXPECT_EQ(e.code().value(), ENOENT);
  }
}

}  // namespace
}  // namespace graphtier::io
