#include "uring_device.hpp"

#include <liburing.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "graphtier/core/error.hpp"

namespace graphtier::io {

namespace {

class UringDevice final : public ReadDevice {
 public:
  explicit UringDevice(int max_in_flight) : max_in_flight_(max_in_flight) {
    GRAPHTIER_EXPECTS(max_in_flight >= 1, InvalidArgument, "io_uring depth must be >= 1, got ", max_in_flight);
    // COOP_TASKRUN runs completion work when this thread enters the kernel anyway, instead of
    // interrupting it; kernels before 5.19 reject the flag, and then the ring is set up without it.
    int rc = io_uring_queue_init(static_cast<unsigned>(max_in_flight), &ring_, IORING_SETUP_COOP_TASKRUN);
    if (rc == -EINVAL) rc = io_uring_queue_init(static_cast<unsigned>(max_in_flight), &ring_, 0);
    if (rc < 0) {
      throw Unsupported(detail::concat("io_uring_queue_init(", max_in_flight, ") failed: ", std::strerror(-rc)));
    }
  }

  ~UringDevice() override {
    // Reads still in flight write into buffers their owner is about to free: wait for them first.
    while (in_flight_ > 0) {
      io_uring_cqe* cqe = nullptr;
      const int rc = io_uring_wait_cqe(&ring_, &cqe);
      if (rc == -EINTR) continue;
      if (rc < 0) break;
      io_uring_cqe_seen(&ring_, cqe);
      --in_flight_;
    }
    io_uring_queue_exit(&ring_);
  }

  UringDevice(const UringDevice&) = delete;
  UringDevice& operator=(const UringDevice&) = delete;

  int max_in_flight() const noexcept override { return max_in_flight_; }
  std::string_view name() const noexcept override { return "uring"; }

  std::size_t submit_and_wait(std::span<const DeviceRead> reads, std::span<DeviceCompletion> out,
                              std::size_t min_complete) override {
    GRAPHTIER_EXPECTS(in_flight_ + reads.size() <= static_cast<std::size_t>(max_in_flight_), InvalidArgument,
                      "io_uring: ", in_flight_ + reads.size(), " reads in flight exceed the ring's ", max_in_flight_);
    for (const DeviceRead& r : reads) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);  // cannot be null: the ring holds max_in_flight_
      io_uring_prep_read(sqe, r.fd, r.dst, r.length, r.offset);
      io_uring_sqe_set_data64(sqe, r.tag);
    }
    in_flight_ += reads.size();
    const auto wait_for = static_cast<unsigned>(std::min({min_complete, in_flight_, out.size()}));
    for (;;) {
      const int rc = io_uring_submit_and_wait(&ring_, wait_for);
      if (rc >= 0) break;
      // EINTR and EAGAIN (the kernel short of memory for requests) leave unsubmitted entries in
      // the queue for the next try; nothing is lost.
      if (rc == -EINTR) continue;
      if (rc == -EAGAIN) {
        std::this_thread::yield();
        continue;
      }
      throw IoError(-rc, detail::concat("io_uring_submit_and_wait failed: ", std::strerror(-rc)));
    }
    std::size_t count = 0;
    unsigned head = 0;
    io_uring_cqe* cqe = nullptr;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      if (count == out.size()) break;
      out[count++] = DeviceCompletion{io_uring_cqe_get_data64(cqe), cqe->res};
    }
    io_uring_cq_advance(&ring_, static_cast<unsigned>(count));
    in_flight_ -= count;
    return count;
  }

 private:
  int max_in_flight_;
  std::size_t in_flight_ = 0;
  io_uring ring_{};
};

}  // namespace

std::unique_ptr<ReadDevice> make_uring_device(int max_in_flight) {
  return std::make_unique<UringDevice>(max_in_flight);
}

}  // namespace graphtier::io
