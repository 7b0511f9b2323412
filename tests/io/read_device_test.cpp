// Where io_uring is blocked (a seccomp profile, as containers use), auto falls back to pread
// workers and reads still work; asking for io_uring alone fails clearly.
#include "graphtier/io/read_device.hpp"

#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/thread_pool.hpp"
#include "graphtier/io/read_engine.hpp"
#include "io/io_test_util.hpp"
#include "test_util.hpp"

namespace graphtier::io {
namespace {

// Makes io_uring_setup fail with ENOSYS in this process, as a seccomp profile that blocks it does.
bool block_io_uring_setup() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) == 0;
}

// Runs in a child process (the filter cannot be removed again): exits 0 when the fallback works.
void read_with_io_uring_blocked(const std::string& path) {
  if (!block_io_uring_setup()) std::_Exit(2);
  try {
    (void)make_read_device(IoBackend::kUring, 4);
    std::_Exit(3);  // io_uring was not blocked after all
  } catch (const Unsupported&) {
  }
  set_log_level(LogLevel::kError);  // the fallback's warning is expected here
  const auto device = make_read_device(IoBackend::kAuto, 4);
  if (device->name() != "pread") std::_Exit(4);
  const ReadFile file = ReadFile::open(path);
  ReadEngine engine(*device);
  const std::vector<int64_t> ids = {3, 1, 3, 7};
  std::vector<std::byte> out(ids.size() * 512);
  engine.read_rows(file, RowLayout{8, 512, 512}, ids, out, 512);
  std::_Exit(out == test::pread_rows(path, 512, 512, ids, 512) ? 0 : 5);
}

TEST(ReadDeviceTest, AutoFallsBackToPreadWhereIoUringIsBlocked) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  test::TempDir dir;
  const std::string path = dir / "rows.bin";
  test::write_random_file(path, 8 * 512, 41);
  EXPECT_EXIT(read_with_io_uring_blocked(path), ::testing::ExitedWithCode(0), "");
}

// An I/O depth from the user (--io-depth 100000) would start one pread thread per read in flight:
// the device caps its threads at kMaxBlockingIoThreads, reports the cap, and reads still work.
TEST(ReadDeviceTest, PreadCapsAHugeDepthAtTheThreadCap) {
  test::TempDir dir;
  const std::string path = dir / "rows.bin";
  test::write_random_file(path, 8 * 512, 43);
  const LogLevel before = log_level();
  set_log_level(LogLevel::kError);  // the cap's warning is expected here
  const auto device = make_read_device(IoBackend::kPread, 100000);
  set_log_level(before);
  EXPECT_EQ(device->max_in_flight(), kMaxBlockingIoThreads);
  const ReadFile file = ReadFile::open(path);
  ReadEngine engine(*device);
  const std::vector<int64_t> ids = {3, 1, 3, 7, 0};
  std::vector<std::byte> out(ids.size() * 512);
  engine.read_rows(file, RowLayout{8, 512, 512}, ids, out, 512);
  EXPECT_EQ(out, test::pread_rows(path, 512, 512, ids, 512));
}

}  // namespace
}  // namespace graphtier::io
