// io_uring device: one ring per device, reads batched into one submit-and-wait system call.
#pragma once

#include <memory>

#include "graphtier/io/read_device.hpp"

namespace graphtier::io {

/// Throws Unsupported (with the kernel's reason) where io_uring_queue_init fails, e.g. ENOSYS on
/// an old kernel or EPERM under a seccomp profile that blocks io_uring.
std::unique_ptr<ReadDevice> make_uring_device(int max_in_flight);

}  // namespace graphtier::io
