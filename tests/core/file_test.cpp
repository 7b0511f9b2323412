#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "test_util.hpp"

namespace graphtier {
namespace {

TEST(OutputFile, WritesChecksumsAndMapsBack) {
  test::TempDir dir;
  std::vector<int64_t> values(100000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(i * i);
  std::string sum;
  {
    OutputFile out(dir / "a.bin", 4096);  // small buffer: many flushes
    out.write_span(std::span<const int64_t>(values));
    out.write_zeros(3);
    EXPECT_EQ(out.close(), values.size() * 8 + 3);
    sum = out.checksum_hex();
  }
  EXPECT_EQ(sum.size(), 16u);
  EXPECT_EQ(checksum_file(dir / "a.bin"), sum);
  MappedFile map(dir / "a.bin");
  ASSERT_EQ(map.size(), values.size() * 8 + 3);
  EXPECT_EQ(map.as<int64_t>()[99999], values[99999]);
}

TEST(Files, ErrorsNameThePath) {
  try {
    MappedFile map("/nonexistent/graphtier/x.bin");
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/graphtier/x.bin"), std::string::npos);
    EXPECT_EQ(e.code().value(), ENOENT);
  }
}

TEST(Files, PreadPastTheEndIsATruncationError) {
  test::TempDir dir;
  test::write_file(dir / "short.bin", "abc");
  const int fd = ::open((dir / "short.bin").c_str(), O_RDONLY);
  char buf[8];
  try {
    pread_exact(fd, buf, 8, 0, dir / "short.bin");
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos);
  }
  ::close(fd);
}

TEST(Files, FullDiskIsReportedWithThePath) {
  // /dev/full fails every write with ENOSPC.
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "/dev/full not available";
  const int fd = ::open("/dev/full", O_WRONLY);
  const char data[16] = {};
  try {
    pwrite_exact(fd, data, sizeof data, 0, "/dev/full");
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_EQ(e.code().value(), ENOSPC);
    EXPECT_NE(std::string(e.what()).find("no space left"), std::string::npos);
  }
  ::close(fd);
}

}  // namespace
}  // namespace graphtier
