// OwnedCudaStream: a stream of the caller's own, or Unsupported where there is no GPU.
#include <gtest/gtest.h>

#include <utility>

#include "graphtier/core/cuda_stream.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"

namespace graphtier {
namespace {

TEST(OwnedCudaStream, IsUnsupportedWithoutAGpu) {
  if (cuda_available()) GTEST_SKIP() << "CUDA device present: the Unsupported path is not exercised";
  EXPECT_THROW(OwnedCudaStream(0), Unsupported);
}

TEST(OwnedCudaStream, OwnsAStreamOtherThanTheDefaultAndMovesIt) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device (or CPU-only build): owned streams not checked";
  OwnedCudaStream a(0);
  void* const handle = a.get().handle;
  EXPECT_NE(handle, nullptr);
  EXPECT_EQ(a.device(), 0);
  OwnedCudaStream b(std::move(a));
  EXPECT_EQ(a.get().handle, nullptr);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_EQ(b.get().handle, handle);
  OwnedCudaStream c(0);
  c = std::move(b);
  EXPECT_EQ(c.get().handle, handle);
  EXPECT_EQ(b.get().handle, nullptr);  // NOLINT(bugprone-use-after-move)
}

}  // namespace
}  // namespace graphtier
