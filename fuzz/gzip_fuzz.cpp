// gzip streams (gzip_source, text_source): a gzip file either decompresses or is refused with
// FormatError; what it decompresses to, compressed again by zlib and read back, gives the same
// bytes.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "byte_source.hpp"
#include "fuzz_common.hpp"

using namespace graphtier::graph;

namespace {

// Decompressed output beyond this is not read (a 4 KiB input can inflate to about 4 MiB).
constexpr std::size_t kMaxOutput = std::size_t{16} << 20;

std::string read_all(const detail::ByteSource& source) {
  auto stream = source.open();
  std::string out;
  std::vector<char> buffer(64 << 10);
  while (out.size() < kMaxOutput) {
    const std::size_t got = stream->read(buffer.data(), buffer.size());
    if (got == 0) break;
    out.append(buffer.data(), got);
  }
  return out;
}

std::string gzip(const std::string& bytes) {
  z_stream z{};
  graphtier::fuzz::require(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK, "deflateInit2");
  std::string out(deflateBound(&z, bytes.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  graphtier::fuzz::require(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graphtier::fuzz::quiet();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string path = graphtier::fuzz::scratch_dir() + "/input.gz";
  graphtier::fuzz::write_file(path, std::string_view(reinterpret_cast<const char*>(data), size));
  graphtier::fuzz::check_contract([&] {
    const std::string plain = read_all(*detail::gzip_source(path));
    if (plain.size() >= kMaxOutput) return;
    // text_source must pick gzip by the magic bytes and read the same.
    if (detail::is_gzip_file(path)) {
      graphtier::fuzz::require(read_all(*detail::text_source(path)) == plain, "text_source reads gzip differently");
    }
    const std::string again_path = graphtier::fuzz::scratch_dir() + "/again.gz";
    graphtier::fuzz::write_file(again_path, gzip(plain));
    std::string again;
    try {
      again = read_all(*detail::gzip_source(again_path));
    } catch (const std::exception& e) {
      graphtier::fuzz::fail(std::string("zlib's own gzip of the output does not read: ") + e.what());
    }
    graphtier::fuzz::require(again == plain, "gzip round trip changed the bytes");
  });
  return 0;
}
