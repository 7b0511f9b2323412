// Arrays for building a CSC: large, zero-filled, and touched at random.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"

namespace graphtier::graph::detail {

/// A zero-filled array in its own mapping, backed by transparent huge pages where the kernel
/// allows. The CSC passes touch these arrays at random, so with 4 KiB pages nearly every access
/// would also miss the TLB.
template <typename T>
class LargeArray {
 public:
  explicit LargeArray(int64_t size) : size_(static_cast<std::size_t>(size)) {
    bytes_ = std::max<std::size_t>(size_ * sizeof(T), 1);
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      GRAPHTIER_THROW_ERRNO("cannot allocate ", format_bytes(static_cast<double>(bytes_)), " for the CSC: ",
                            std::strerror(errno));
    }
    ::madvise(p, bytes_, MADV_HUGEPAGE);  // a hint: without THP this is ordinary memory
    data_ = static_cast<T*>(p);
  }
  ~LargeArray() { ::munmap(data_, bytes_); }
  LargeArray(const LargeArray&) = delete;
  LargeArray& operator=(const LargeArray&) = delete;

  T* data() { return data_; }
  T& operator[](int64_t i) { return data_[i]; }
  const T& operator[](int64_t i) const { return data_[i]; }
  int64_t size() const { return static_cast<int64_t>(size_); }
  std::span<T> span() { return {data_, size_}; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace graphtier::graph::detail
