// .npy arrays read as streams (NpyArray, NpyReader): open either refuses the file with
// FormatError or every element reads, and the converted values equal npy_to_float64 of the raw
// bytes, from the start and from the middle.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "npy_array.hpp"

using namespace graphtier::graph;

namespace {

bool same_double(double a, double b) { return a == b || (a != a && b != b); }

void check_from(const detail::NpyArray& array, int64_t first) {
  const int64_t numel = array.header().numel();
  const int64_t size = npy_type_size(array.header().type);
  auto raw = array.reader(first);
  auto as_double = array.reader(first);
  graphtier::fuzz::require(raw.remaining() == numel - first, "reader's remaining count is wrong");
  constexpr int64_t kChunk = 1024;
  std::vector<std::byte> bytes(static_cast<std::size_t>(kChunk * size));
  std::vector<double> expected(kChunk), got(kChunk);
  for (int64_t done = first; done < numel; done += kChunk) {
    const int64_t n = std::min(kChunk, numel - done);
    raw.read_raw(bytes.data(), n);
    as_double.read(got.data(), n);
    npy_to_float64(array.header().type, bytes.data(), expected.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      graphtier::fuzz::require(same_double(got[i], expected[i]), "read<double> disagrees with npy_to_float64");
    }
  }
  // Past the end is refused, not read.
  bool refused = false;
  try {
    double extra;
    raw.read(&extra, 1);
  } catch (const graphtier::FormatError&) {
    refused = true;
  }
  graphtier::fuzz::require(refused, "reading past the end of an .npy array did not throw FormatError");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graphtier::fuzz::quiet();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string path = graphtier::fuzz::scratch_dir() + "/array.npy";
  graphtier::fuzz::write_file(path, std::string_view(reinterpret_cast<const char*>(data), size));
  graphtier::fuzz::check_contract([&] {
    const auto array = detail::NpyArray::open(detail::file_source(path));
    const int64_t numel = array.header().numel();
    graphtier::fuzz::require(array.header().data_offset + array.header().data_bytes() <= static_cast<int64_t>(size),
                             "an array larger than its file was opened");
    check_from(array, 0);
    if (numel > 1) check_from(array, numel / 2);
    if (!npy_is_float(array.header().type) && numel > 0) {
      auto ints = array.reader(0);
      std::vector<int64_t> values(static_cast<std::size_t>(std::min<int64_t>(numel, 1024)));
      ints.read(values.data(), static_cast<int64_t>(values.size()));
    }
  });
  return 0;
}
