// Zip central directory (with ZIP64 extensions) and member streams for stored and deflated members.
// Record layouts: PKWARE APPNOTE.TXT sections 4.3.7 (local header), 4.3.12 (central directory
// header), 4.3.14-4.3.16 (ZIP64 end records and end of central directory), 4.5.3 (ZIP64 extra).
#include "zip_reader.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"

namespace graphtier::graph::detail {

using ::graphtier::detail::concat;

namespace {

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr std::size_t kEndRecordBytes = 22;
constexpr std::size_t kZip64LocatorBytes = 20;
constexpr std::size_t kMaxCommentBytes = 0xffff;

uint16_t le16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t le32(const unsigned char* p) { return static_cast<uint32_t>(le16(p)) | (static_cast<uint32_t>(le16(p + 2)) << 16); }
uint64_t le64(const unsigned char* p) { return static_cast<uint64_t>(le32(p)) | (static_cast<uint64_t>(le32(p + 4)) << 32); }

std::vector<unsigned char> read_at(const FileDescriptor& fd, uint64_t offset, std::size_t bytes, const std::string& path) {
  std::vector<unsigned char> buf(bytes);
  if (bytes > 0) pread_exact(fd.get(), buf.data(), bytes, offset, path);
  return buf;
}

/// Replaces the 32-bit fields saturated at 0xffffffff by their values in the ZIP64 extra field,
/// which lists only the saturated ones, in this order.
void apply_zip64_extra(ZipMember& m, const unsigned char* extra, std::size_t length, bool size32_full,
                       bool csize32_full, bool offset32_full, const std::string& path) {
  std::size_t pos = 0;
  while (pos + 4 <= length) {
    const uint16_t id = le16(extra + pos);
    const uint16_t size = le16(extra + pos + 2);
    if (pos + 4 + size > length) break;
    if (id == 0x0001) {
      const unsigned char* field = extra + pos + 4;
      std::size_t used = 0;
      const auto next = [&](uint64_t& target) {
        if (used + 8 > size) throw FormatError(path, concat("member ", m.name, ": ZIP64 extra field is too short"));
        target = le64(field + used);
        used += 8;
      };
      if (size32_full) next(m.uncompressed_size);
      if (csize32_full) next(m.compressed_size);
      if (offset32_full) next(m.local_header_offset);
      return;
    }
    pos += 4 + size;
  }
  if (size32_full || csize32_full || offset32_full) {
    throw FormatError(path, concat("member ", m.name, ": 32-bit size or offset is saturated but there is no ZIP64 extra field"));
  }
}

/// Set once a stream of the member has read it start to end and found its CRC-32 right; until
/// then every stream reads what it skips, so that whichever stream reaches the end checks it.
using CrcChecked = std::shared_ptr<std::atomic<bool>>;

class ZipMemberStream final : public ByteStream {
 public:
  ZipMemberStream(const std::string& path, std::string stream_name, const ZipMember& member, uint64_t data_offset,
                  CrcChecked crc_checked)
      : ByteStream(std::move(stream_name)), path_(path), fd_(path, O_RDONLY), member_(member), raw_position_(data_offset),
        raw_end_(data_offset + member.compressed_size), crc_checked_(std::move(crc_checked)) {
    ::posix_fadvise(fd_.get(), static_cast<off_t>(data_offset), static_cast<off_t>(member.compressed_size),
                    POSIX_FADV_SEQUENTIAL);
    if (member_.method == 8) {
      std::memset(&zs_, 0, sizeof zs_);
      // Negative window bits: a raw deflate stream, as zip stores it (no zlib or gzip wrapper).
      if (::inflateInit2(&zs_, -MAX_WBITS) != Z_OK) throw IoError(ENOMEM, name() + ": inflateInit2 failed");
      inflating_ = true;
      input_.resize(std::size_t{1} << 20);
    }
  }
  ~ZipMemberStream() override {
    if (inflating_) ::inflateEnd(&zs_);
  }

  std::size_t read(void* buffer, std::size_t bytes) override {
    bytes = std::min<std::size_t>(bytes, std::size_t{1} << 30);  // zlib counts in 32 bits
    if (bytes == 0 || produced_ == member_.uncompressed_size) return 0;
    const std::size_t n = member_.method == 0 ? read_stored(buffer, bytes) : read_deflated(buffer, bytes);
    if (crc_valid_) crc_ = ::crc32_z(crc_, static_cast<const Bytef*>(buffer), n);
    produced_ += n;
    if (produced_ == member_.uncompressed_size && crc_valid_) {
      if (crc_ != member_.crc32) {
        throw FormatError(name(), concat("Bad CRC-32: computed ", crc_, ", the archive's central directory says ",
                                         member_.crc32, " (corrupt archive)"));
      }
      crc_checked_->store(true, std::memory_order_relaxed);
    }
    return n;
  }

  void skip(uint64_t bytes) override {
    // Inflating is the only way forward; a stored member is read through until its CRC-32 has
    // been checked once.
    if (member_.method != 0 || (crc_valid_ && !crc_checked_->load(std::memory_order_relaxed))) {
      ByteStream::skip(bytes);
      return;
    }
    if (bytes > member_.uncompressed_size - produced_) {
      throw FormatError(name(), concat("ends ", bytes - (member_.uncompressed_size - produced_),
                                       " bytes early (truncated member?)"));
    }
    raw_position_ += bytes;
    produced_ += bytes;
    crc_valid_ = false;  // bytes not seen cannot be checked
  }

  uint64_t input_position() const override { return raw_position_ - (raw_end_ - member_.compressed_size); }

 private:
  std::size_t read_stored(void* buffer, std::size_t bytes) {
    const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(bytes, raw_end_ - raw_position_));
    pread_exact(fd_.get(), buffer, n, raw_position_, path_);
    raw_position_ += n;
    return n;
  }

  std::size_t read_deflated(void* buffer, std::size_t bytes) {
    zs_.next_out = static_cast<Bytef*>(buffer);
    zs_.avail_out = static_cast<uInt>(bytes);
    while (zs_.avail_out == bytes) {
      if (zs_.avail_in == 0 && raw_position_ < raw_end_) {
        const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(input_.size(), raw_end_ - raw_position_));
        pread_exact(fd_.get(), input_.data(), n, raw_position_, path_);
        raw_position_ += n;
        zs_.next_in = input_.data();
        zs_.avail_in = static_cast<uInt>(n);
      }
      const int ret = ::inflate(&zs_, Z_NO_FLUSH);
      const std::size_t got = bytes - zs_.avail_out;
      if (ret == Z_STREAM_END) {
        if (produced_ + got != member_.uncompressed_size) {
          throw FormatError(name(), concat("inflates to ", produced_ + got, " bytes, the archive says ",
                                           member_.uncompressed_size));
        }
        return got;
      }
      if (ret == Z_BUF_ERROR && zs_.avail_in == 0 && raw_position_ == raw_end_) {
        throw FormatError(name(), "deflate stream ends early (truncated archive?)");
      }
      if (ret != Z_OK && ret != Z_BUF_ERROR) {
        throw FormatError(name(), concat("corrupt deflate data: ", zs_.msg != nullptr ? zs_.msg : "zlib error"));
      }
      if (produced_ + got > member_.uncompressed_size) {
        throw FormatError(name(), concat("inflates to more than the ", member_.uncompressed_size,
                                         " bytes the archive says"));
      }
    }
    return bytes - zs_.avail_out;
  }

  std::string path_;
  FileDescriptor fd_;
  ZipMember member_;
  uint64_t raw_position_;
  uint64_t raw_end_;
  uint64_t produced_ = 0;
  CrcChecked crc_checked_;
  uLong crc_ = ::crc32(0L, Z_NULL, 0);
  bool crc_valid_ = true;
  bool inflating_ = false;
  z_stream zs_{};
  std::vector<Bytef> input_;
};

class ZipMemberSource final : public ByteSource {
 public:
  ZipMemberSource(std::string path, std::string name, ZipMember member, uint64_t data_offset)
      : ByteSource(std::move(name)), path_(std::move(path)), member_(std::move(member)), data_offset_(data_offset) {}
  std::unique_ptr<ByteStream> open() const override {
    return std::make_unique<ZipMemberStream>(path_, name(), member_, data_offset_, crc_checked_);
  }
  std::optional<uint64_t> size() const override { return member_.uncompressed_size; }
  uint64_t input_size() const override { return member_.compressed_size; }

 private:
  std::string path_;
  ZipMember member_;
  uint64_t data_offset_;
  CrcChecked crc_checked_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace

ZipArchive::ZipArchive(std::string path) : path_(std::move(path)) {
  file_size_ = file_size(path_);
  const FileDescriptor fd(path_, O_RDONLY);
  if (file_size_ < kEndRecordBytes) throw FormatError(path_, "is not a zip archive (too short)");

  // The end record sits at the end, before an optional comment of up to 64 KiB: scan backwards.
  const uint64_t tail_bytes = std::min<uint64_t>(file_size_, kEndRecordBytes + kMaxCommentBytes + kZip64LocatorBytes);
  const uint64_t tail_offset = file_size_ - tail_bytes;
  const auto tail = read_at(fd, tail_offset, static_cast<std::size_t>(tail_bytes), path_);
  std::size_t end_pos = std::string::npos;
  for (std::size_t pos = tail.size() - kEndRecordBytes + 1; pos-- > 0;) {
    if (le32(tail.data() + pos) == kEndSignature) {
      end_pos = pos;
      break;
    }
  }
  if (end_pos == std::string::npos) throw FormatError(path_, "is not a zip archive (no end of central directory record)");
  const unsigned char* end = tail.data() + end_pos;
  if (le16(end + 4) != 0 || le16(end + 6) != 0) throw FormatError(path_, "multi-disk zip archives are not supported");
  uint64_t entries = le16(end + 10);
  uint64_t cd_size = le32(end + 12);
  uint64_t cd_offset = le32(end + 16);

  if (end_pos >= kZip64LocatorBytes && le32(end - kZip64LocatorBytes) == kZip64LocatorSignature) {
    const uint64_t zip64_end_offset = le64(end - kZip64LocatorBytes + 8);
    const auto rec = read_at(fd, zip64_end_offset, 56, path_);
    if (le32(rec.data()) != kZip64EndSignature) throw FormatError(path_, "ZIP64 end record is missing or corrupt");
    entries = le64(rec.data() + 32);
    cd_size = le64(rec.data() + 40);
    cd_offset = le64(rec.data() + 48);
  }
  if (cd_offset > file_size_ || cd_size > file_size_ - cd_offset) {
    throw FormatError(path_, concat("central directory [", cd_offset, ", +", cd_size, ") lies outside the file (",
                                    file_size_, " bytes; truncated archive?)"));
  }

  const auto cd = read_at(fd, cd_offset, static_cast<std::size_t>(cd_size), path_);
  std::size_t pos = 0;
  for (uint64_t i = 0; i < entries; ++i) {
    if (pos + 46 > cd.size() || le32(cd.data() + pos) != kCentralHeaderSignature) {
      throw FormatError(path_, concat("central directory entry ", i, " is corrupt"));
    }
    const unsigned char* h = cd.data() + pos;
    const uint16_t flags = le16(h + 8);
    const uint16_t name_len = le16(h + 28), extra_len = le16(h + 30), comment_len = le16(h + 32);
    if (pos + 46 + name_len + extra_len + comment_len > cd.size()) {
      throw FormatError(path_, concat("central directory entry ", i, " runs past the directory"));
    }
    ZipMember m;
    m.name.assign(reinterpret_cast<const char*>(h + 46), name_len);
    m.method = le16(h + 10);
    m.crc32 = le32(h + 16);
    m.compressed_size = le32(h + 20);
    m.uncompressed_size = le32(h + 24);
    m.local_header_offset = le32(h + 42);
    apply_zip64_extra(m, h + 46 + name_len, extra_len, m.uncompressed_size == 0xffffffffu,
                      m.compressed_size == 0xffffffffu, m.local_header_offset == 0xffffffffu, path_);
    if (flags & 0x1) m.method = 0xffff;  // encrypted: refused when opened
    members_.push_back(std::move(m));
    pos += 46 + name_len + extra_len + comment_len;
  }
}

const ZipMember* ZipArchive::find(const std::string& name) const {
  for (const auto& m : members_) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

SourcePtr ZipArchive::member_source(const std::string& name) const {
  const ZipMember* m = find(name);
  if (m == nullptr) {
    std::string names;
    for (const auto& member : members_) names += (names.empty() ? "" : ", ") + ::graphtier::detail::printable(member.name);
    throw FormatError(path_, concat("has no member '", name, "' (members: ", names.empty() ? "none" : names, ")"));
  }
  const std::string member_name = path_ + ":" + name;
  if (m->method == 0xffff) throw FormatError(member_name, "is encrypted; not supported");
  if (m->method != 0 && m->method != 8) {
    throw FormatError(member_name, concat("uses compression method ", m->method,
                                          "; only stored (0) and deflate (8) are supported"));
  }
  if (m->method == 0 && m->compressed_size != m->uncompressed_size) {
    throw FormatError(member_name, "stored member whose compressed and uncompressed sizes differ");
  }
  const FileDescriptor fd(path_, O_RDONLY);
  const auto local = read_at(fd, m->local_header_offset, 30, path_);
  if (le32(local.data()) != kLocalHeaderSignature) {
    throw FormatError(member_name, concat("local header at offset ", m->local_header_offset, " is corrupt"));
  }
  // Sizes come from the central directory: the local copy may be zero when a data descriptor
  // follows the data.
  const uint64_t data_offset = m->local_header_offset + 30 + le16(local.data() + 26) + le16(local.data() + 28);
  if (data_offset > file_size_ || m->compressed_size > file_size_ - data_offset) {
    throw FormatError(member_name, concat("data runs past the end of the archive (", file_size_,
                                          " bytes; truncated archive?)"));
  }
  return std::make_shared<ZipMemberSource>(path_, member_name, *m, data_offset);
}

}  // namespace graphtier::graph::detail
