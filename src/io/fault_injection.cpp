#include "graphtier/io/fault_injection.hpp"

#include <cerrno>
#include <cstring>

#include "graphtier/core/rng.hpp"

namespace graphtier::io {

namespace {
constexpr std::byte kPoison{0xEE};
}  // namespace

std::size_t FaultInjectingDevice::submit_and_wait(std::span<const DeviceRead> reads, std::span<DeviceCompletion> out,
                                                  std::size_t min_complete) {
  for (const DeviceRead& r : reads) in_flight_[r.tag] = r;
  const std::size_t n = inner_.submit_and_wait(reads, out, min_complete);
  for (std::size_t i = 0; i < n; ++i) {
    DeviceCompletion& c = out[i];
    const DeviceRead r = in_flight_.at(c.tag);
    in_flight_.erase(c.tag);
    ++counts_.completions;
    if (c.result < 0) continue;  // a real error passes through untouched
    const PhiloxBlock bits = philox_block(plan_.seed, 0, draws_++);
    const double u = u32_to_unit_float(bits.v[0]);
    const auto fail_with = [&](int err, int64_t& count) {
      std::memset(r.dst, static_cast<int>(kPoison), static_cast<std::size_t>(c.result));
      c.result = -err;
      ++count;
    };
    if (plan_.eio_at_offset >= r.offset && plan_.eio_at_offset < r.offset + r.length) {
      fail_with(EIO, counts_.eio);
    } else if (u < plan_.eio_probability) {
      fail_with(EIO, counts_.eio);
    } else if (u < plan_.eio_probability + plan_.eagain_probability) {
      fail_with(EAGAIN, counts_.eagain);
    } else if (u < plan_.eio_probability + plan_.eagain_probability + plan_.eintr_probability) {
      fail_with(EINTR, counts_.eintr);
    } else if (u < plan_.eio_probability + plan_.eagain_probability + plan_.eintr_probability +
                       plan_.short_read_probability &&
               c.result > 1) {
      const auto cut = static_cast<int32_t>(1 + bounded_u64(philox_u64(plan_.seed, 1, draws_), c.result - 1));
      std::memset(r.dst + cut, static_cast<int>(kPoison), static_cast<std::size_t>(c.result - cut));
      c.result = cut;
      ++counts_.short_reads;
    }
  }
  return n;
}

}  // namespace graphtier::io
