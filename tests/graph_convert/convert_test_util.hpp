// Fixtures shared by the converter tests: gzip files, hand-built zip archives (stored, deflated,
// ZIP64), in-memory .npy files, and the CSC of a dataset as plain vectors.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph_convert/npy.hpp"
#include "test_util.hpp"

namespace graphtier::test {

inline void write_gzip(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("gzopen failed for " + path);
  if (!text.empty()) gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

/// The bytes of an .npy file holding `values` with `shape`.
template <typename T>
std::string npy_bytes(graph::NpyType type, std::vector<int64_t> shape, const std::vector<T>& values) {
  std::string out = graph::make_npy_header(type, shape);
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  return out;
}

template <typename T>
void write_npy_file(const std::string& path, graph::NpyType type, std::vector<int64_t> shape, const std::vector<T>& values) {
  write_file(path, npy_bytes(type, std::move(shape), values));
}

struct ZipEntry {
  std::string name;
  std::string data;
  bool deflate = false;
};

namespace detail {
inline void put16(std::string& s, uint32_t v) {
  s += static_cast<char>(v & 0xff);
  s += static_cast<char>((v >> 8) & 0xff);
}
inline void put32(std::string& s, uint32_t v) {
  put16(s, v & 0xffff);
  put16(s, v >> 16);
}
inline void put64(std::string& s, uint64_t v) {
  put32(s, static_cast<uint32_t>(v));
  put32(s, static_cast<uint32_t>(v >> 32));
}
inline std::string raw_deflate(const std::string& data) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("deflateInit2");
  std::string out(deflateBound(&zs, data.size()) + 16, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}
}  // namespace detail

/// A zip archive as APPNOTE describes it. With `zip64`, every size and offset in the central
/// directory is saturated and given in a ZIP64 extra field, and ZIP64 end records are written
/// (what Python's zipfile does for members over 4 GiB).
inline std::string make_zip(const std::vector<ZipEntry>& entries, bool zip64 = false) {
  using detail::put16;
  using detail::put32;
  using detail::put64;
  std::string out, central;
  for (const auto& e : entries) {
    const std::string stored = e.deflate ? detail::raw_deflate(e.data) : e.data;
    const uint32_t crc = static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(e.data.data()),
                                                     static_cast<uInt>(e.data.size())));
    const uint64_t offset = out.size();
    const uint16_t method = e.deflate ? 8 : 0;
    put32(out, 0x04034b50);
    put16(out, zip64 ? 45 : 20);
    put16(out, 0);
    put16(out, method);
    put16(out, 0);
    put16(out, 0);
    put32(out, crc);
    put32(out, zip64 ? 0xffffffffu : static_cast<uint32_t>(stored.size()));
    put32(out, zip64 ? 0xffffffffu : static_cast<uint32_t>(e.data.size()));
    put16(out, static_cast<uint16_t>(e.name.size()));
    put16(out, zip64 ? 20 : 0);
    out += e.name;
    if (zip64) {
      put16(out, 0x0001);
      put16(out, 16);
      put64(out, e.data.size());
      put64(out, stored.size());
    }
    out += stored;

    put32(central, 0x02014b50);
    put16(central, zip64 ? 45 : 20);
    put16(central, zip64 ? 45 : 20);
    put16(central, 0);
    put16(central, method);
    put16(central, 0);
    put16(central, 0);
    put32(central, crc);
    put32(central, zip64 ? 0xffffffffu : static_cast<uint32_t>(stored.size()));
    put32(central, zip64 ? 0xffffffffu : static_cast<uint32_t>(e.data.size()));
    put16(central, static_cast<uint16_t>(e.name.size()));
    put16(central, zip64 ? 28 : 0);
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put32(central, 0);
    put32(central, zip64 ? 0xffffffffu : static_cast<uint32_t>(offset));
    central += e.name;
    if (zip64) {
      put16(central, 0x0001);
      put16(central, 24);
      put64(central, e.data.size());
      put64(central, stored.size());
      put64(central, offset);
    }
  }
  const uint64_t cd_offset = out.size();
  out += central;
  if (zip64) {
    const uint64_t end64 = out.size();
    put32(out, 0x06064b50);
    put64(out, 44);
    put16(out, 45);
    put16(out, 45);
    put32(out, 0);
    put32(out, 0);
    put64(out, entries.size());
    put64(out, entries.size());
    put64(out, central.size());
    put64(out, cd_offset);
    put32(out, 0x07064b50);
    put32(out, 0);
    put64(out, end64);
    put32(out, 1);
  }
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, zip64 ? 0xffff : static_cast<uint16_t>(entries.size()));
  put16(out, zip64 ? 0xffff : static_cast<uint16_t>(entries.size()));
  put32(out, zip64 ? 0xffffffffu : static_cast<uint32_t>(central.size()));
  put32(out, zip64 ? 0xffffffffu : static_cast<uint32_t>(cd_offset));
  put16(out, 0);
  return out;
}

struct Csc {
  std::vector<int64_t> indptr;
  std::vector<int64_t> indices;
  bool operator==(const Csc&) const = default;
};

inline Csc read_csc(const graph::Dataset& d) {
  Csc c;
  c.indptr.assign(d.indptr().begin(), d.indptr().end());
  std::visit([&](auto span) { c.indices.assign(span.begin(), span.end()); }, d.indices());
  return c;
}

template <typename T>
std::vector<T> to_vector(std::span<const T> s) {
  return std::vector<T>(s.begin(), s.end());
}

/// True when python3 can import numpy and scipy (the Planetoid path and np.savez fixtures).
inline bool python_has_numpy_scipy() {
  return run_shell("python3 -c 'import numpy, scipy.sparse'").exit_code == 0;
}

/// Runs `fn`, which must throw E; returns the message.
template <typename E = FormatError, typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception was thrown";
  return {};
}

/// Expects every one of `parts` in `message`.
inline void expect_mentions(const std::string& message, std::initializer_list<std::string> parts) {
  for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
}

}  // namespace graphtier::test
