#include "cuda/gather_route.cuh"

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>

#include "cuda_check.cuh"

namespace graphtier::feature::cuda {

namespace {

constexpr int kThreads = 256;
constexpr unsigned kFullMask = 0xffffffffu;

unsigned blocks_for(int64_t items, int64_t per_block, int64_t cap = 65535) {
  return static_cast<unsigned>(std::clamp<int64_t>((items + per_block - 1) / per_block, 1, cap));
}

__device__ __forceinline__ int64_t warp_sum(int64_t v) {
  for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(kFullMask, v, d);
  return v;
}

__device__ __forceinline__ int64_t warp_max(int64_t v) {
  for (int d = 16; d > 0; d /= 2) {
    const int64_t other = __shfl_down_sync(kFullMask, v, d);
    v = other > v ? other : v;
  }
  return v;
}

// Each thread adds its positions with census_add; warps, then the block, merge by + and max (exact
// in any order: integers), and thread 0 adds the block's share: one atomic per field and block.
// Every thread reaches the shuffles and the barrier (the loop bound is per thread, they follow it).
__global__ void __launch_bounds__(kThreads) census_kernel(const int64_t* ids, int64_t n, RouteBounds b,
                                                          GatherCensus* out) {
  constexpr int kWarps = kThreads / 32;
  __shared__ int64_t partial[5][kWarps];
  GatherCensus c;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    census_add(c, ids[k], b);
  }
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int64_t v[5] = {warp_sum(c.hot), warp_sum(c.pinned), warp_sum(c.storage), warp_max(c.pinned_low_gap),
                        warp_max(c.pinned_high_end)};
  if (threadIdx.x % 32 == 0) {
    for (int f = 0; f < 5; ++f) partial[f][warp] = v[f];
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  int64_t total[5] = {0, 0, 0, 0, 0};
  for (int w = 0; w < kWarps; ++w) {
    for (int f = 0; f < 3; ++f) total[f] += partial[f][w];
    for (int f = 3; f < 5; ++f) total[f] = partial[f][w] > total[f] ? partial[f][w] : total[f];
  }
  const auto add = [](int64_t* address, int64_t value) {
    if (value != 0) atomicAdd(reinterpret_cast<unsigned long long*>(address), static_cast<unsigned long long>(value));
  };
  add(&out->hot, total[0]);
  add(&out->pinned, total[1]);
  add(&out->storage, total[2]);
  if (total[3] > 0) atomicMax(reinterpret_cast<long long*>(&out->pinned_low_gap), static_cast<long long>(total[3]));
  if (total[4] > 0) atomicMax(reinterpret_cast<long long*>(&out->pinned_high_end), static_cast<long long>(total[4]));
}

__global__ void quota_kernel(const GatherCensus* census, const SplitTable* table, RouteBounds b, int64_t row_stride,
                             int64_t* quota) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *quota = zero_copy_quota(*table, *census, b, row_stride);
}

__global__ void pinned_flags_kernel(const int64_t* ids, int64_t n, RouteBounds b, int64_t* flags) {
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    flags[k] = is_pinned(ids[k], b) ? 1 : 0;
  }
}

// ranks null: the quota is 0 or every pinned row (the table never splits), so any rank below the
// pinned count, 0 included, decides the same route.
__global__ void route_kernel(const int64_t* ids, int64_t n, RouteBounds b, const int64_t* ranks, const int64_t* quota,
                             uint8_t* route) {
  const int64_t q = *quota;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    route[k] = route_of(ids[k], b, ranks != nullptr ? ranks[k] : 0, q);
  }
}

// host[0] = count, host[1 + j] = positions[j]: only the selected positions cross to the host.
__global__ void copy_out_kernel(const int64_t* count, const int64_t* positions, int64_t* host) {
  const int64_t m = *count;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (first == 0) host[0] = m;
  for (int64_t j = first; j < m; j += static_cast<int64_t>(gridDim.x) * blockDim.x) host[1 + j] = positions[j];
}

struct StagedAt {
  const uint8_t* route;
  __device__ bool operator()(int64_t k) const { return is_staged(route[k]); }
};

struct MissedAt {
  const uint8_t* route;
  const uint8_t* hit;
  __device__ bool operator()(int64_t k) const { return route[k] == kRouteProbe && hit[k] == 0; }
};

}  // namespace

DeviceRouter::DeviceRouter(const SplitTable& table, int device, cudaStream_t stream)
    : device_(device),
      census_(1, stream),
      quota_(1, stream),
      flags_(stream),
      ranks_(stream),
      temp_(stream) {
  to_cpu_ = ::graphtier::feature::splits_to_cpu(table);
  for (const uint32_t s : table.share) split_ = split_ || (s > 0 && s < static_cast<uint32_t>(kShareOne));
  table_ = Buffer(MemoryKind::kDevice, sizeof(SplitTable), device);
  Buffer staging(MemoryKind::kPinned, sizeof(SplitTable), device);
  *static_cast<SplitTable*>(staging.data()) = table;
  GRAPHTIER_CUDA_CHECK(cudaMemcpyAsync(table_.data(), staging.data(), sizeof(SplitTable), cudaMemcpyHostToDevice, stream));
  GRAPHTIER_CUDA_CHECK(cudaStreamSynchronize(stream));  // before `staging` is freed (start-up only)
}

void DeviceRouter::route(const int64_t* ids, int64_t n, const RouteBounds& bounds, int64_t row_stride, uint8_t* route,
                         cudaStream_t stream) {
  GRAPHTIER_CUDA_CHECK(cudaMemsetAsync(census_.get(), 0, sizeof(GatherCensus), stream));
  if (n == 0) return;
  // A few ids per thread at most batch sizes; few blocks, so few atomics on the census's fields.
  const unsigned grid = blocks_for(n, kThreads, 256);
  census_kernel<<<grid, kThreads, 0, stream>>>(ids, n, bounds, census_.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("census_kernel");
  quota_kernel<<<1, 32, 0, stream>>>(census_.get(), static_cast<const SplitTable*>(table_.data()), bounds, row_stride,
                                     quota_.get());
  GRAPHTIER_CUDA_CHECK_LAUNCH("quota_kernel");
  const bool pinned_tier = bounds.cpu_end > bounds.gpu_end;
  const int64_t* ranks = nullptr;
  if (split_ && pinned_tier) {
    // The number of pinned ids before each position: the first `quota` of them by position go
    // zero-copy, the same split as a host walking the positions in order.
    flags_.grow(n);
    ranks_.grow(n);
    pinned_flags_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(ids, n, bounds, flags_.get());
    GRAPHTIER_CUDA_CHECK_LAUNCH("pinned_flags_kernel");
    std::size_t temp_bytes = 0;
    GRAPHTIER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, flags_.get(), ranks_.get(), n, stream));
    temp_.grow(static_cast<int64_t>(std::max<std::size_t>(temp_bytes, 1)));
    GRAPHTIER_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.get(), temp_bytes, flags_.get(), ranks_.get(), n, stream));
    ranks = ranks_.get();
  }
  route_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(ids, n, bounds, ranks, quota_.get(), route);
  GRAPHTIER_CUDA_CHECK_LAUNCH("route_kernel");
}

template <typename Pred>
void DeviceRouter::select(Pred pred, int64_t n, PositionList& list, cudaStream_t stream) {
  const auto bytes = static_cast<std::size_t>(n + 1) * sizeof(int64_t);
  if (list.host.size() < bytes) {
    // Grown between gathers only (the previous gather's reads of it are over: it ended with a
    // synchronisation).
    list.host = Buffer(MemoryKind::kPinned, std::max(bytes, list.host.size() * 2), device_);
    void* mapped = nullptr;
    GRAPHTIER_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, list.host.data(), 0));
    list.host_mapped = static_cast<int64_t*>(mapped);
  }
  list.device.grow(std::max<int64_t>(n, 1));
  list.count.grow(1);
  const thrust::counting_iterator<int64_t> positions(0);
  std::size_t temp_bytes = 0;
  GRAPHTIER_CUDA_CHECK(
      cub::DeviceSelect::If(nullptr, temp_bytes, positions, list.device.get(), list.count.get(), n, pred, stream));
  temp_.grow(static_cast<int64_t>(std::max<std::size_t>(temp_bytes, 1)));
  GRAPHTIER_CUDA_CHECK(
      cub::DeviceSelect::If(temp_.get(), temp_bytes, positions, list.device.get(), list.count.get(), n, pred, stream));
  copy_out_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(list.count.get(), list.device.get(),
                                                                      list.host_mapped);
  GRAPHTIER_CUDA_CHECK_LAUNCH("copy_out_kernel");
}

void DeviceRouter::select_staged(const uint8_t* route, int64_t n, PositionList& list, cudaStream_t stream) {
  select(StagedAt{route}, n, list, stream);
}

void DeviceRouter::select_missed(const uint8_t* route, const uint8_t* hit, int64_t n, PositionList& list,
                                 cudaStream_t stream) {
  select(MissedAt{route, hit}, n, list, stream);
}

}  // namespace graphtier::feature::cuda
