#include "io_loop.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include "graphtier/core/error.hpp"

namespace graphtier::io {

namespace {

using Clock = std::chrono::steady_clock;

// A read that keeps coming back with EAGAIN/EINTR or without new bytes is given up on after this
// many tries in a row, so that a device stuck in that state fails the call instead of hanging it.
constexpr int kMaxStalls = 64;
// After this many EAGAIN/EINTR in a row, back off (stall count x kBackoff) before resubmitting, so
// that a transient EAGAIN (a full device queue) has time to clear; with kMaxStalls this caps the
// waiting for one read at about 0.1 s.
constexpr int kStallsBeforeBackoff = 8;
constexpr auto kBackoff = std::chrono::microseconds(50);
// O_DIRECT needs offsets and buffers aligned to the logical block size; every read starts aligned
// to it, and the remainder of a short read is realigned down to it (re-reading a partial block).
constexpr uint64_t kDirectAlignment = 512;

struct Slot {
  std::size_t index = 0;
  LoopRead read;         // the read as started
  uint64_t offset = 0;   // the part still to be read starts here
  uint64_t reached = 0;  // furthest file offset delivered so far
  int stalls = 0;
  Clock::time_point submitted;

  uint64_t end() const { return read.offset + read.length; }
  uint64_t needed_end() const { return read.offset + read.needed; }
  DeviceRead device_read(uint64_t tag) const {
    const uint64_t done = offset - read.offset;
    return DeviceRead{read.file->fd(), offset, static_cast<uint32_t>(read.length - done), read.dst + done, tag};
  }
};

std::exception_ptr read_error(const Slot& s, int err) {
  return std::make_exception_ptr(IoError(
      err, graphtier::detail::concat(s.read.file->path(), ": read of ", s.end() - s.offset, " bytes at offset ",
                                     s.offset, " failed: ", std::strerror(err))));
}

std::exception_ptr end_of_file_error(const Slot& s) {
  return std::make_exception_ptr(IoError(
      ENODATA, graphtier::detail::concat(s.read.file->path(), ": unexpected end of file at offset ", s.reached,
                                         " while reading ", s.needed_end() - s.read.offset, " bytes at offset ",
                                         s.read.offset, " (file truncated?)")));
}

}  // namespace

void run_reads(ReadDevice& device, int depth, std::size_t count,
               const std::function<LoopRead(std::size_t index, int slot)>& start,
               const std::function<void(std::size_t index, int slot)>& finish, IoStats& stats) {
  const auto begin = Clock::now();
  depth = std::clamp(depth, 1, device.max_in_flight());
  std::vector<Slot> slots(static_cast<std::size_t>(depth));
  std::vector<int> free_slots;
  for (int s = depth - 1; s >= 0; --s) free_slots.push_back(s);
  std::vector<DeviceRead> to_submit;
  std::vector<DeviceCompletion> completions(static_cast<std::size_t>(depth));
  std::exception_ptr error;
  std::size_t next = 0;
  std::size_t in_flight = 0;
  int64_t reads = 0;
  int64_t bytes = 0;
  double latency_sum = 0;

  // Resubmitted remainders wait in to_submit and go out with the next round's new reads: one
  // system call per round.
  while (in_flight > 0 || !to_submit.empty() || (next < count && !error)) {
    // Start new reads while slots are free; after an error only the reads in flight are drained.
    const auto now = Clock::now();
    while (!error && next < count && !free_slots.empty()) {
      const int s = free_slots.back();
      free_slots.pop_back();
      Slot& slot = slots[static_cast<std::size_t>(s)];
      slot.index = next;
      slot.read = start(next, s);
      slot.offset = slot.reached = slot.read.offset;
      slot.stalls = 0;
      slot.submitted = now;
      to_submit.push_back(slot.device_read(static_cast<uint64_t>(s)));
      ++next;
    }
    in_flight += to_submit.size();
    const std::size_t n = device.submit_and_wait(to_submit, completions, 1);
    in_flight -= n;
    const auto done_at = Clock::now();
    to_submit.clear();
    std::chrono::microseconds backoff{0};
    for (std::size_t c = 0; c < n; ++c) {
      const int s = static_cast<int>(completions[c].tag);
      Slot& slot = slots[static_cast<std::size_t>(s)];
      const int32_t res = completions[c].result;
      ++reads;
      latency_sum += std::chrono::duration<double>(done_at - slot.submitted).count();
      bool resubmit = false;
      if (res == -EAGAIN || res == -EINTR) {
        resubmit = true;
        ++slot.stalls;
      } else if (res < 0) {
        if (!error) error = read_error(slot, -res);
      } else if (res == 0) {
        if (!error) error = end_of_file_error(slot);
      } else {
        bytes += res;
        const uint64_t delivered = slot.offset + static_cast<uint64_t>(res);
        if (delivered >= slot.needed_end()) {
          if (!error) finish(slot.index, s);
        } else {
          // A short read: go on from where it stopped (from the block it stopped in, for O_DIRECT).
          resubmit = true;
          if (delivered > slot.reached) {
            slot.reached = delivered;
            slot.stalls = 0;
          } else {
            ++slot.stalls;
          }
          slot.offset = slot.read.file->direct() ? delivered / kDirectAlignment * kDirectAlignment : delivered;
        }
      }
      if (resubmit && slot.stalls > kMaxStalls && !error) {
        // Retried too often without progress: EAGAIN/EINTR that does not clear, or (for O_DIRECT,
        // whose remainder restarts at a block boundary) a file that ends inside the block.
        error = res < 0 ? read_error(slot, -res) : end_of_file_error(slot);
      }
      if (resubmit && !error) {
        if (res < 0 && slot.stalls > kStallsBeforeBackoff) backoff = std::max(backoff, kBackoff * slot.stalls);
        slot.submitted = done_at;
        to_submit.push_back(slot.device_read(static_cast<uint64_t>(s)));
      } else {
        free_slots.push_back(s);
      }
    }
    // Waiting for the reads still in flight spaces retries out by itself; only when none is left
    // does the loop sleep, once, for the longest backoff wanted.
    if (in_flight == 0 && backoff.count() > 0) std::this_thread::sleep_for(backoff);
  }
  stats.reads += reads;
  stats.bytes += bytes;
  stats.latency_seconds_sum += latency_sum;
  stats.seconds += std::chrono::duration<double>(Clock::now() - begin).count();
  stats.depth = depth;
  if (error) std::rethrow_exception(error);
}

}  // namespace graphtier::io
