// .npy headers: parse_npy_header either refuses the bytes with FormatError or returns a header
// whose element count fits int64 and that make_npy_header writes back to a header parsing to the
// same type and shape.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "fuzz_common.hpp"
#include "graphtier/graph_convert/npy.hpp"

using namespace graphtier::graph;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  graphtier::fuzz::check_contract([&] {
    const NpyHeader h = parse_npy_header(std::span(reinterpret_cast<const std::byte*>(data), size), "fuzz.npy");
    graphtier::fuzz::require(h.data_offset >= 10 && static_cast<std::size_t>(h.data_offset) <= size,
                             "data offset outside the header bytes");
    int64_t numel = 1;
    for (const int64_t d : h.shape) {
      graphtier::fuzz::require(d >= 0, "negative dimension accepted");
      graphtier::fuzz::require(d == 0 || numel <= INT64_MAX / d, "element count overflows int64");
      numel *= d;
    }
    graphtier::fuzz::require(h.numel() == numel, "numel() disagrees with the shape");
    graphtier::fuzz::require(numel <= INT64_MAX / npy_type_size(h.type), "byte count overflows int64");
    const std::string again = make_npy_header(h.type, h.shape);
    NpyHeader h2;
    try {
      h2 = parse_npy_header(std::span(reinterpret_cast<const std::byte*>(again.data()), again.size()), "again.npy");
    } catch (const std::exception& e) {
      graphtier::fuzz::fail(std::string("a written header does not parse: ") + e.what());
    }
    graphtier::fuzz::require(h2.type == h.type && h2.shape == h.shape && !h2.fortran_order &&
                                 h2.data_offset == static_cast<int64_t>(again.size()) && h2.data_offset % 64 == 0,
                             "npy header round trip changed the value");
  });
  return 0;
}
