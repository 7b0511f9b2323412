// The loader's CUDA calls (../device_ops.hpp).
#include <cuda_runtime.h>

#include "cuda_check.cuh"
#include "current_device.cuh"
#include "cuda_stream.cuh"
#include "device_ops.hpp"
#include "device_scratch.cuh"

namespace graphtier::loader::device {
using DeviceGuard = ::graphtier::cuda::CurrentDevice;

void* allocate_pinned(std::size_t bytes) {
  void* ptr = nullptr;
  GRAPHTIER_CUDA_CHECK(cudaHostAlloc(&ptr, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  return ptr;
}

void free_pinned(void* ptr) noexcept {
  if (ptr != nullptr) cudaFreeHost(ptr);
}

std::shared_ptr<void> allocate_output(std::size_t bytes, CudaStream stream, int device) {
  const DeviceGuard guard(device);
  const cudaStream_t s = cuda::native(stream);
  // No wait: the writers of the memory (the feature store's streams) wait for `stream` on the
  // device (FeatureStore::gather's output_after).
  return cuda::allocate_async(bytes, s);
}

std::function<bool()> record_fence(CudaStream consumer, int device) {
  const DeviceGuard guard(device);
  cudaEvent_t event = nullptr;
  GRAPHTIER_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  std::shared_ptr<CUevent_st> owned(event, [](cudaEvent_t e) { cudaEventDestroy(e); });
  GRAPHTIER_CUDA_CHECK(cudaEventRecord(event, cuda::native(consumer)));
  return [owned] {
    const cudaError_t status = cudaEventQuery(owned.get());
    if (status == cudaErrorNotReady) {
      // Not an error, but never left for a later launch check on this thread to find.
      if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
      return false;
    }
    if (status != cudaSuccess) (void)cudaGetLastError();
    return true;
  };
}

void order_after(CudaStream consumer, std::span<const CudaStream> waiters, int device) {
  if (waiters.empty()) return;
  const DeviceGuard guard(device);
  cudaEvent_t event = nullptr;
  const cudaError_t created = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  if (created == cudaErrorCudartUnloading || created == cudaErrorContextIsDestroyed) {
    (void)cudaGetLastError();
    return;  // the process is exiting: no work is left to order, and the memory goes with the context
  }
  GRAPHTIER_CUDA_CHECK(created);
  GRAPHTIER_CUDA_CHECK(cudaEventRecord(event, cuda::native(consumer)));
  for (const CudaStream w : waiters) GRAPHTIER_CUDA_CHECK(cudaStreamWaitEvent(cuda::native(w), event, 0));
  // Released once the waits that use it have completed (the runtime keeps it until then).
  GRAPHTIER_CUDA_CHECK(cudaEventDestroy(event));
}

}  // namespace graphtier::loader::device
