// The loader's few CUDA calls (device-resident minibatches, docs/architecture.md, "Loader"): plain
// C++, defined in cuda/device_ops.cu in CUDA builds and by device_ops_stub.cpp (Unsupported)
// otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "graphtier/core/cuda_stream.hpp"

namespace graphtier::loader::device {

/// Page-locked host memory (cudaHostAlloc, mapped and portable, as core's pinned Buffer), for the
/// pinned rings (input ids, pinned outputs).
void* allocate_pinned(std::size_t bytes);
void free_pinned(void* ptr) noexcept;

/// Stream-ordered device memory from the device's kept pool, allocated on `stream` and freed in
/// order on it when the last owner lets go. Does not wait: memory the pool recycles from a batch
/// released on `stream` (after order_after) is free of its consumer's work only in `stream`'s
/// order, so any other stream that writes it must first wait for the work queued on `stream` (the
/// feature store does, given `stream` as FeatureStore::gather's output_after). Null for 0 bytes.
std::shared_ptr<void> allocate_output(std::size_t bytes, CudaStream stream, int device);

/// A fence for a pinned ring slot: an event recorded on `consumer` now, polled (cudaEventQuery)
/// by the returned function, which owns it. An error of the query counts as done (the context is
/// gone, or the fault is reported by the consumer's own calls), so a slot is never held forever.
std::function<bool()> record_fence(CudaStream consumer, int device);

/// Makes every stream of `waiters` wait for the work queued on `consumer` so far (one event, no
/// host wait): called before releasing memory that `waiters` free and `consumer` may still read.
void order_after(CudaStream consumer, std::span<const CudaStream> waiters, int device);

}  // namespace graphtier::loader::device
