#include <cuda_runtime.h>

#include <algorithm>

#include "cuda_check.cuh"
#include "current_device.cuh"
#include "cuda/random_fill_cuda.hpp"
#include "graphtier/core/rng.hpp"

namespace graphtier::cuda {
namespace {

__global__ void philox_fill_kernel(uint64_t seed, uint64_t stream, uint64_t first_index, uint64_t* out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = philox_u64(seed, stream, first_index + static_cast<uint64_t>(i));
  }
}

}  // namespace

void philox_fill(uint64_t seed, uint64_t stream, uint64_t first_index, uint64_t* out, int64_t n, int device) {
  if (n == 0) return;
  const CurrentDevice on_device(device);
  constexpr int kThreads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65535));
  philox_fill_kernel<<<blocks, kThreads>>>(seed, stream, first_index, out, n);
  GRAPHTIER_CUDA_CHECK_LAUNCH("philox_fill_kernel");
  GRAPHTIER_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace graphtier::cuda
