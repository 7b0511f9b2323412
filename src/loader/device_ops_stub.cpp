// The loader's CUDA calls in a build without CUDA: nothing can reach them (the loader refuses GPU
// options first), so each throws Unsupported, and the ones that release memory do nothing.
#include "device_ops.hpp"

#if !GRAPHTIER_WITH_CUDA
#include "graphtier/core/error.hpp"

namespace graphtier::loader::device {
namespace {

[[noreturn]] void no_cuda() { throw Unsupported("graphtier was built without CUDA (configure with the 'cuda' preset)"); }

}  // namespace

void* allocate_pinned(std::size_t) { no_cuda(); }
void free_pinned(void*) noexcept {}
std::shared_ptr<void> allocate_output(std::size_t, CudaStream, int) { no_cuda(); }
std::function<bool()> record_fence(CudaStream, int) { no_cuda(); }
void order_after(CudaStream, std::span<const CudaStream> waiters, int) {
  if (!waiters.empty()) no_cuda();
}

}  // namespace graphtier::loader::device
#endif
