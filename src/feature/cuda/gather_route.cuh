// The routing of one gather on the device (graphtier/feature/gather_route.hpp has the decisions):
// a census of the ids (tier counts, the pinned rows' span), the zero-copy quota, each position's
// route, and the compaction of the positions the host must handle (the staged CPU half, the storage
// rows the cache missed) into mapped pinned memory, so that only those positions cross to the host.
// Everything is queued on the stream handed in; nothing waits.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "device_scratch.cuh"
#include "graphtier/core/memory.hpp"
#include "graphtier/feature/gather_route.hpp"

namespace graphtier::feature::cuda {

/// A list of positions the device compacts for the host: `host` is mapped pinned memory,
/// host[0] = count, host[1 + j] = the j-th position (ascending); `device` holds the same positions
/// in device memory (for the scatter of the rows the host stages for them).
struct PositionList {
  explicit PositionList(cudaStream_t stream) : device(stream), count(stream) {}

  Buffer host;  // pinned, mapped
  int64_t* host_mapped = nullptr;  // `host` as the device addresses it
  ::graphtier::cuda::DeviceScratch<int64_t> device;
  ::graphtier::cuda::DeviceScratch<int64_t> count;
};

class DeviceRouter {
 public:
  /// `table` (the zero-copy share by span) is copied to the device on `stream`.
  DeviceRouter(const SplitTable& table, int device, cudaStream_t stream);

  /// Whether the table ever leaves pinned rows to the CPU.
  bool splits_to_cpu() const noexcept { return to_cpu_; }

  /// Queues the census of ids[0, n) (device), the quota, and route[k] for every position.
  void route(const int64_t* ids, int64_t n, const RouteBounds& bounds, int64_t row_stride, uint8_t* route,
             cudaStream_t stream);

  /// Queues the compaction of the positions whose route is staged (is_staged) into `list`.
  void select_staged(const uint8_t* route, int64_t n, PositionList& list, cudaStream_t stream);
  /// Queues the compaction of the storage positions the cache missed (kRouteProbe, hit 0).
  void select_missed(const uint8_t* route, const uint8_t* hit, int64_t n, PositionList& list, cudaStream_t stream);

 private:
  template <typename Pred>
  void select(Pred pred, int64_t n, PositionList& list, cudaStream_t stream);

  int device_ = 0;
  bool to_cpu_ = false;
  bool split_ = false;  // some span splits the pinned rows both ways: ranks are needed
  Buffer table_;        // device SplitTable
  ::graphtier::cuda::DeviceScratch<GatherCensus> census_;
  ::graphtier::cuda::DeviceScratch<int64_t> quota_;
  ::graphtier::cuda::DeviceScratch<int64_t> flags_, ranks_;
  ::graphtier::cuda::DeviceScratch<uint8_t> temp_;
};

}  // namespace graphtier::feature::cuda
