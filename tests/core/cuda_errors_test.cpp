// A failed CUDA call arrives as the typed exception of error.hpp that says what the caller can do:
// Unsupported where the machine lacks the GPU, OutOfMemory when device memory is exhausted.
#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <type_traits>

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"

namespace graphtier {
namespace {

// Python maps both to RuntimeError without glue, as PyTorch's CUDA OutOfMemoryError is one.
static_assert(std::is_base_of_v<DeviceError, OutOfMemory>);
static_assert(std::is_base_of_v<std::runtime_error, DeviceError>);

TEST(CudaErrors, PinnedAndDeviceMemoryWithoutAGpuAreUnsupported) {
  if (cuda_available()) GTEST_SKIP() << "CUDA device present: the no-GPU path is not exercised";
  // In a CUDA build this is the driver's answer (no driver, no device), mapped by the CUDA check.
  EXPECT_THROW(Buffer(MemoryKind::kPinned, 64), Unsupported);
  EXPECT_THROW(Buffer(MemoryKind::kDevice, 64), Unsupported);
}

TEST(CudaErrors, ExhaustedDeviceMemoryIsOutOfMemory) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device (or CPU-only build): device out-of-memory not checked";
  EXPECT_THROW(Buffer(MemoryKind::kDevice, std::size_t{1} << 60), OutOfMemory);
}

TEST(CudaErrors, ADeviceOrdinalBeyondTheGpusIsUnsupported) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device (or CPU-only build): device ordinals not checked";
  EXPECT_THROW(Buffer(MemoryKind::kDevice, 64, 1 << 20), Unsupported);
}

}  // namespace
}  // namespace graphtier
