// The kernel side of the read engine: an asynchronous queue of single positional reads.
//
// A device starts reads and reports each one's raw outcome (bytes read, or -errno) exactly as the
// kernel gave it: no retries, no error translation. Short reads, EAGAIN and EINTR are handled
// once, in the engine's I/O loop (docs/architecture.md, Conventions 5), whichever device is
// underneath; that is also what lets a test put a fault-injecting device in front of a real one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace graphtier::io {

/// One read of `length` bytes at `offset` of `fd` into `dst`; `tag` comes back with its completion.
struct DeviceRead {
  int fd = -1;
  uint64_t offset = 0;
  uint32_t length = 0;
  std::byte* dst = nullptr;
  uint64_t tag = 0;
};

/// The outcome of one DeviceRead: `result` is the byte count (0 at end of file, possibly fewer
/// than asked) or -errno.
struct DeviceCompletion {
  uint64_t tag = 0;
  int32_t result = 0;
};

class ReadDevice {
 public:
  virtual ~ReadDevice() = default;

  /// The most reads that may be in flight at once (the ring size, or the worker count).
  virtual int max_in_flight() const noexcept = 0;
  virtual std::string_view name() const noexcept = 0;

  /// Starts `reads` (the caller keeps the number in flight within max_in_flight()), then waits
  /// until at least `min_complete` reads have completed and writes up to `out.size()` completions
  /// to `out`, returning how many. Completions come in any order. Throws IoError only when the
  /// device itself fails (not for the outcome of a read).
  virtual std::size_t submit_and_wait(std::span<const DeviceRead> reads, std::span<DeviceCompletion> out,
                                      std::size_t min_complete) = 0;
};

enum class IoBackend {
  kAuto,   // io_uring, or the pread workers where io_uring cannot be set up (seccomp, old kernel)
  kUring,  // io_uring only; throws Unsupported where it cannot be set up
  kPread,  // a pool of threads each doing one blocking pread at a time
};

std::string_view io_backend_name(IoBackend backend);
/// "auto", "uring" or "pread"; throws InvalidArgument otherwise.
IoBackend parse_io_backend(std::string_view text);

/// A device for one engine (one thread) with room for `max_in_flight` reads in flight: an io_uring
/// ring of that size, or that many pread workers. Created once and handed to the engine
/// (docs/architecture.md, Conventions 4), never in a hot path.
std::unique_ptr<ReadDevice> make_read_device(IoBackend backend, int max_in_flight);

}  // namespace graphtier::io
