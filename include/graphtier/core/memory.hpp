// Memory kinds and an owning buffer that allocates from the right allocator for each kind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace graphtier {

/// Where bytes live. kPinned is page-locked host memory the GPU can read directly (zero-copy).
enum class MemoryKind : uint8_t { kHost, kPinned, kDevice };

std::string_view memory_kind_name(MemoryKind k);

/// Installed physical memory in bytes: what memory budgets given as a percent of RAM refer to.
int64_t physical_memory_bytes();

/// Makes glibc's malloc keep the memory a minibatch frees for the next one instead of handing it
/// back to the kernel and faulting in zeroed pages again (docs/benchmarks.md, "Freed memory kept":
/// the typed sampler 1.6x, the Python loader 1.6x): allocations below 32 MiB come from the heap,
/// the heap's free top is returned only above min(1 GiB, RAM / 16), and host Buffers of 32 MiB and
/// more (glibc maps and unmaps each) are kept when freed, up to RAM / 16 in all, for the next
/// Buffer they fit (gathers' outputs: docs/benchmarks.md, "Gathers from Python"). The programs call
/// it once at start (the `graphtier` command, the Python module); a library user decides for their
/// process. Does nothing where the user chose already (GLIBC_TUNABLES naming glibc.malloc,
/// MALLOC_TRIM_THRESHOLD_ or MALLOC_MMAP_THRESHOLD_ set), with GRAPHTIER_KEEP_FREED_MEMORY=0, or
/// off glibc. Returns whether it changed the settings.
bool keep_freed_memory();

/// True when this build has the CUDA backends and at least one GPU is visible.
bool cuda_available();

/// Waits until all work queued on `device` has finished: what a wall-clock throughput measurement
/// of asynchronous GPU work ends with. Throws Unsupported in a CPU-only build.
void device_synchronize(int device = 0);

/// Owning, move-only byte buffer. Host buffers are 64-byte aligned; pinned and device buffers
/// need a CUDA build and throw Unsupported otherwise.
class Buffer {
 public:
  Buffer() = default;
  Buffer(MemoryKind kind, std::size_t bytes, int device = 0);
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() noexcept { return data_; }
  const void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return bytes_; }
  MemoryKind kind() const noexcept { return kind_; }
  int device() const noexcept { return device_; }

 private:
  void release() noexcept;

  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t capacity_ = 0;  // host: the bytes allocated (a kept block's may exceed bytes_)
  MemoryKind kind_ = MemoryKind::kHost;
  int device_ = 0;
};

/// Copies `bytes` between any two memory kinds (cudaMemcpy where a device is involved).
void copy_bytes(void* dst, MemoryKind dst_kind, const void* src, MemoryKind src_kind, std::size_t bytes);

}  // namespace graphtier
