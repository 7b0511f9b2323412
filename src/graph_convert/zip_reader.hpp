// Reader of zip archives as numpy writes them (.npz: np.savez stores members, np.savez_compressed
// deflates them; both may use ZIP64 records). Members are streamed: a stored member is a range
// of the archive file, a deflated one is inflated on the fly with zlib's raw inflate. Every member
// is checked against its CRC-32 in the central directory by the first stream that reads it to its
// end; until then streams read, rather than seek over, what they skip.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "byte_source.hpp"

namespace graphtier::graph::detail {

struct ZipMember {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflate
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
};

class ZipArchive {
 public:
  /// Reads the central directory. Throws IoError, or FormatError naming `path` if it is not a
  /// zip archive (or a multi-disk one).
  explicit ZipArchive(std::string path);

  const std::string& path() const noexcept { return path_; }
  const std::vector<ZipMember>& members() const noexcept { return members_; }
  const ZipMember* find(const std::string& name) const;

  /// The content of member `name`. Throws FormatError if it is missing, encrypted, or compressed
  /// with a method other than stored or deflate.
  SourcePtr member_source(const std::string& name) const;

 private:
  std::string path_;
  uint64_t file_size_ = 0;
  std::vector<ZipMember> members_;
};

}  // namespace graphtier::graph::detail
