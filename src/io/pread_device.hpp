// pread device: worker threads each doing one blocking pread at a time, for where io_uring is not
// available or not wanted.
#pragma once

#include <memory>

#include "graphtier/io/read_device.hpp"

namespace graphtier::io {

/// `max_in_flight` workers, started here and joined by the device's destructor. A blocking read
/// occupies a thread for its whole latency, so reaching a queue depth of d takes d threads: the
/// count is capped at kMaxBlockingIoThreads (with a warning), which max_in_flight() then reports,
/// and a thread that cannot start throws IoError after the started ones are joined.
std::unique_ptr<ReadDevice> make_pread_device(int max_in_flight);

}  // namespace graphtier::io
