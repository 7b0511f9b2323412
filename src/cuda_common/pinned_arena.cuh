// Page-locked host memory for the copies of one call, handed out as a bump arena. Only included by
// .cu files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "cuda_check.cuh"

namespace graphtier::cuda {

/// A bump arena of pinned memory: take() hands out 256-byte-aligned pieces; reset() (only once no
/// copy still reads or writes the arena: after the stream's synchronisation) reuses it from the
/// start. Growing retires the old block until reset() instead of freeing it under a copy in
/// flight, so cudaMallocHost runs only when a call needs more than any before it. Move-only.
class PinnedArena {
 public:
  PinnedArena() = default;
  ~PinnedArena() {
    for (void* p : retired_) cudaFreeHost(p);
    if (block_ != nullptr) cudaFreeHost(block_);
  }
  PinnedArena(const PinnedArena&) = delete;
  PinnedArena& operator=(const PinnedArena&) = delete;

  void* take(std::size_t bytes) {
    bytes = (bytes + 255) / 256 * 256;
    if (used_ + bytes > capacity_) {
      if (block_ != nullptr) retired_.push_back(block_);
      block_ = nullptr;
      capacity_ = std::max<std::size_t>({2 * capacity_, bytes, std::size_t{1} << 20});
      GRAPHTIER_CUDA_CHECK(cudaMallocHost(&block_, capacity_));
      used_ = 0;
    }
    void* p = static_cast<char*>(block_) + used_;
    used_ += bytes;
    return p;
  }

  void reset() {
    for (void* p : retired_) GRAPHTIER_CUDA_CHECK(cudaFreeHost(p));
    retired_.clear();
    used_ = 0;
  }

 private:
  void* block_ = nullptr;
  std::size_t capacity_ = 0, used_ = 0;
  std::vector<void*> retired_;
};

}  // namespace graphtier::cuda
