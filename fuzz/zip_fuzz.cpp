// zip / .npz archives (ZipArchive): opening either refuses the file with FormatError, or every
// member (stored or deflated) either reads to its end with exactly the size the central directory
// gives, its CRC-32 checked, or throws FormatError; a member that is an .npy array opens or is
// refused with FormatError.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "npy_array.hpp"
#include "zip_reader.hpp"

using namespace graphtier::graph;

namespace {

constexpr std::size_t kMaxMembers = 16;

void read_member(const detail::ZipArchive& zip, const detail::ZipMember& m) {
  const auto source = zip.member_source(m.name);
  graphtier::fuzz::require(!source->size() || *source->size() == m.uncompressed_size,
                           "member size disagrees with the central directory");
  auto stream = source->open();
  std::vector<char> buffer(64 << 10);
  uint64_t total = 0;
  for (;;) {
    const std::size_t got = stream->read(buffer.data(), buffer.size());
    if (got == 0) break;
    total += got;
    graphtier::fuzz::require(total <= m.uncompressed_size, "member yields more bytes than its size");
  }
  graphtier::fuzz::require(total == m.uncompressed_size, "member ends before its size without an error");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graphtier::fuzz::quiet();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string path = graphtier::fuzz::scratch_dir() + "/data.npz";
  graphtier::fuzz::write_file(path, std::string_view(reinterpret_cast<const char*>(data), size));
  std::optional<detail::ZipArchive> zip;
  graphtier::fuzz::check_contract([&] { zip.emplace(path); });
  if (!zip) return 0;
  std::size_t checked = 0;
  for (const auto& m : zip->members()) {
    if (checked++ == kMaxMembers) break;
    if (zip->find(m.name) != &m) continue;  // a repeated name: member_source serves the first
    graphtier::fuzz::check_contract([&] { read_member(*zip, m); });
    if (m.name.size() > 4 && m.name.compare(m.name.size() - 4, 4, ".npy") == 0) {
      graphtier::fuzz::check_contract([&] {
        const auto array = detail::NpyArray::open(zip->member_source(m.name));
        auto reader = array.reader(0);
        std::vector<double> values(static_cast<std::size_t>(std::min<int64_t>(array.header().numel(), 4096)));
        reader.read(values.data(), static_cast<int64_t>(values.size()));
      });
    }
  }
  return 0;
}
