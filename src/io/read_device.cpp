#include "graphtier/io/read_device.hpp"

#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "pread_device.hpp"
#include "uring_device.hpp"

namespace graphtier::io {

std::string_view io_backend_name(IoBackend backend) {
  switch (backend) {
    case IoBackend::kAuto: return "auto";
    case IoBackend::kUring: return "uring";
    case IoBackend::kPread: return "pread";
  }
  return "?";
}

IoBackend parse_io_backend(std::string_view text) {
  if (text == "auto") return IoBackend::kAuto;
  if (text == "uring") return IoBackend::kUring;
  if (text == "pread") return IoBackend::kPread;
  throw InvalidArgument(detail::concat("I/O backend must be auto, uring or pread, got '", text, "'"));
}

std::unique_ptr<ReadDevice> make_read_device(IoBackend backend, int max_in_flight) {
  GRAPHTIER_EXPECTS(max_in_flight >= 1, InvalidArgument, "reads in flight must be >= 1, got ", max_in_flight);
  switch (backend) {
    case IoBackend::kUring: return make_uring_device(max_in_flight);
    case IoBackend::kPread: return make_pread_device(max_in_flight);
    case IoBackend::kAuto: break;
  }
  try {
    return make_uring_device(max_in_flight);
  } catch (const Unsupported& e) {
    log_warn("io: ", e.what(), "; reading with ", max_in_flight, " pread threads instead");
    return make_pread_device(max_in_flight);
  }
}

}  // namespace graphtier::io
