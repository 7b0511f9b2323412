// Front door for allocation: dispatches on the memory kind (docs/architecture.md, Device dispatch).
#include "graphtier/core/memory.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "graphtier/core/device_memory.hpp"
#include "graphtier/core/error.hpp"
#if GRAPHTIER_WITH_CUDA
#include "memory_cuda.hpp"
#endif

namespace graphtier {
namespace {

constexpr std::size_t kPageBytes = 4096;

// Host blocks of glibc's mmap size and above, kept when freed for the next allocation that fits
// them: glibc unmaps such a block on free, and the next minibatch's output (a gather's tensor, a
// loader batch's features) faults zeroed pages in again. Off until keep_freed_memory() turns it on;
// holds at most `budget_` bytes, the most recently freed first (docs/benchmarks.md, "Freed memory
// kept").
class KeptBlocks {
 public:
  static constexpr std::size_t kMinBytes = std::size_t{32} << 20;  // glibc's largest mmap threshold
  static constexpr std::size_t kGranule = std::size_t{2} << 20;

  void enable(std::size_t budget) {
    std::lock_guard lock(mutex_);
    budget_ = budget;
  }

  /// The bytes to allocate for a request: a large one with 1/8 spare, so that the next minibatch,
  /// a little larger, fits the block this one frees (pages never touched cost no memory).
  static std::size_t capacity(std::size_t bytes) {
    if (bytes < kMinBytes) return bytes;
    return (bytes + bytes / 8 + kGranule - 1) / kGranule * kGranule;
  }

  /// The smallest kept block of `bytes` to 1.25 x `bytes` (its capacity in `*held`), or nullptr.
  void* take(std::size_t bytes, std::size_t* held) {
    if (bytes < kMinBytes) return nullptr;
    std::lock_guard lock(mutex_);
    auto best = blocks_.end();
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
      if (it->bytes >= bytes && it->bytes <= bytes + bytes / 4 && (best == blocks_.end() || it->bytes < best->bytes)) {
        best = it;
      }
    }
    if (best == blocks_.end()) return nullptr;
    void* p = best->data;
    *held = best->bytes;
    kept_ -= best->bytes;
    blocks_.erase(best);
    return p;
  }

  /// Keeps a freed block, evicting the oldest beyond the budget; false: the caller frees it.
  bool give(void* p, std::size_t bytes) {
    if (bytes < kMinBytes) return false;
    std::vector<void*> evicted;
    {
      std::lock_guard lock(mutex_);
      if (bytes > budget_) return false;
      blocks_.push_back({p, bytes});
      kept_ += bytes;
      while (kept_ > budget_) {
        evicted.push_back(blocks_.front().data);
        kept_ -= blocks_.front().bytes;
        blocks_.erase(blocks_.begin());
      }
    }
    for (void* e : evicted) std::free(e);
    return true;
  }

 private:
  struct Block {
    void* data;
    std::size_t bytes;
  };
  std::mutex mutex_;
  std::size_t budget_ = 0;
  std::size_t kept_ = 0;
  std::vector<Block> blocks_;  // oldest first
};

KeptBlocks& kept_blocks() {
  static KeptBlocks* blocks = new KeptBlocks();  // never destroyed: buffers may die after main returns
  return *blocks;
}

}  // namespace

int64_t physical_memory_bytes() {
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  // Fuzzing builds (the fuzz preset) see a machine of 256 KiB: checks of sizes read from input
  // against memory refuse what libFuzzer's memory limit would count as a crash, and a mutated id
  // (a node count of millions, every per-node pass instrumented) cannot slow every execution to a
  // crawl: the conversions fuzzed hold at most 32K nodes (fuzz/README.md).
  return int64_t{256} << 10;
#endif
  return static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(::sysconf(_SC_PAGE_SIZE));
}

bool keep_freed_memory() {
#if defined(__GLIBC__) && !defined(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
  const auto set = [](const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && value[0] != '\0';
  };
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const char* mine = std::getenv("GRAPHTIER_KEEP_FREED_MEMORY");
  if ((tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr) || set("MALLOC_TRIM_THRESHOLD_") ||
      set("MALLOC_MMAP_THRESHOLD_") || (mine != nullptr && std::strcmp(mine, "0") == 0)) {
    return false;
  }
  constexpr int64_t kMmapThreshold = int64_t{32} << 20;  // glibc's largest (DEFAULT_MMAP_THRESHOLD_MAX)
  const int64_t trim = std::min<int64_t>(int64_t{1} << 30, physical_memory_bytes() / 16);
  if (::mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThreshold)) != 1 ||
      ::mallopt(M_TRIM_THRESHOLD, static_cast<int>(trim)) != 1) {
    return false;
  }
  kept_blocks().enable(static_cast<std::size_t>(physical_memory_bytes() / 16));
  return true;
#else
  return false;
#endif
}

std::string_view memory_kind_name(MemoryKind k) {
  switch (k) {
    case MemoryKind::kHost: return "host";
    case MemoryKind::kPinned: return "pinned";
    case MemoryKind::kDevice: return "device";
  }
  return "unknown";
}

bool cuda_available() {
#if GRAPHTIER_WITH_CUDA
  return cuda::device_count() > 0;
#else
  return false;
#endif
}

DeviceMemory device_memory(int device) {
#if GRAPHTIER_WITH_CUDA
  return cuda::device_memory(device);
#else
  static_cast<void>(device);
  throw Unsupported("device_memory needs a CUDA build");
#endif
}

void require_device_memory(std::string_view what, int64_t bytes, int device) {
  if (bytes <= 0) return;
  check_device_budget(what, bytes, device_memory(device), device);
}

void trim_device_pool(int device) {
#if GRAPHTIER_WITH_CUDA
  cuda::trim_pool(device);
#else
  static_cast<void>(device);
#endif
}

void device_synchronize(int device) {
#if GRAPHTIER_WITH_CUDA
  cuda::synchronize(device);
#else
  throw Unsupported("device_synchronize needs a CUDA build");
#endif
}

Buffer::Buffer(MemoryKind kind, std::size_t bytes, int device) : bytes_(bytes), kind_(kind), device_(device) {
  if (bytes == 0) return;
  switch (kind) {
    case MemoryKind::kHost: {
      // A buffer of a page or more starts on a page: rows of whole blocks are read into it by
      // O_DIRECT in place (a gather's rows that no cache keeps).
      const std::size_t align = bytes >= kPageBytes ? kPageBytes : 64;
      data_ = kept_blocks().take(bytes, &capacity_);
      if (data_ != nullptr) return;
      capacity_ = KeptBlocks::capacity((bytes + align - 1) / align * align);
      data_ = std::aligned_alloc(align, capacity_);
      if (data_ == nullptr) throw std::bad_alloc();
      return;
    }
    case MemoryKind::kPinned:
    case MemoryKind::kDevice:
#if GRAPHTIER_WITH_CUDA
      data_ = kind == MemoryKind::kPinned ? cuda::allocate_pinned(bytes) : cuda::allocate_device(bytes, device);
      return;
#else
      throw Unsupported(detail::concat("cannot allocate ", memory_kind_name(kind),
                                       " memory: graphtier was built without CUDA (configure with the 'cuda' preset)"));
#endif
  }
}

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      capacity_(std::exchange(other.capacity_, 0)),
      kind_(other.kind_),
      device_(other.device_) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    kind_ = other.kind_;
    device_ = other.device_;
  }
  return *this;
}

void Buffer::release() noexcept {
  if (data_ == nullptr) return;
  switch (kind_) {
    case MemoryKind::kHost:
      if (!kept_blocks().give(data_, capacity_)) std::free(data_);
      break;
#if GRAPHTIER_WITH_CUDA
    case MemoryKind::kPinned: cuda::free_pinned(data_); break;
    case MemoryKind::kDevice: cuda::free_device(data_, device_); break;
#else
    default: break;
#endif
  }
  data_ = nullptr;
  bytes_ = 0;
  capacity_ = 0;
}

void copy_bytes(void* dst, MemoryKind dst_kind, const void* src, MemoryKind src_kind, std::size_t bytes) {
  if (bytes == 0) return;
  if (dst_kind != MemoryKind::kDevice && src_kind != MemoryKind::kDevice) {
    std::memcpy(dst, src, bytes);
    return;
  }
#if GRAPHTIER_WITH_CUDA
  cuda::copy(dst, src, bytes);
#else
  throw Unsupported("copying device memory needs a CUDA build");
#endif
}

}  // namespace graphtier
