// Packing of the distributed sampler's replies (row_wire.hpp): two passes per message, one that
// sizes every value and picks each record's coding, one that writes into the exact buffer.
#include "graphtier/sample/row_wire.hpp"

#include <array>
#include <bit>
#include <cstring>
#include <limits>

#include "graphtier/core/error.hpp"

namespace graphtier::sample {

namespace {

constexpr int kMaxVarintBytes = 10;  // 64 bits in 7-bit groups

// Deltas are taken in uint64 (wrapping), so any pair of non-negative int64 has one; the reader
// undoes the wrap and refuses a result outside [0, 2^63).
uint64_t zigzag(uint64_t from, uint64_t to) {
  const auto d = static_cast<int64_t>(to - from);
  return (static_cast<uint64_t>(d) << 1) ^ static_cast<uint64_t>(d >> 63);
}

uint64_t unzigzag(uint64_t from, uint64_t z) {
  return from + ((z >> 1) ^ (~(z & 1) + 1));  // from + the signed delta, wrapping
}

// Bytes of a varint by the value's bit width (0 for v = 0 counts as one byte).
constexpr auto kVarintBytes = [] {
  std::array<uint8_t, 65> t{};
  for (int w = 0; w <= 64; ++w) t[static_cast<std::size_t>(w)] = static_cast<uint8_t>(w == 0 ? 1 : (w + 6) / 7);
  return t;
}();

int varint_bytes(uint64_t v) { return kVarintBytes[static_cast<std::size_t>(std::bit_width(v))]; }

// Values below 2^56 (at most 8 bytes packed) are written and read as one 8-byte word, without a
// branch on their length (1-3 bytes at random: a byte loop mispredicted about every value).
static_assert(std::endian::native == std::endian::little, "packed words are little-endian");
constexpr uint64_t kWordLimit = uint64_t{1} << 56;
constexpr uint64_t kContinue = 0x8080808080808080;
// A packer's buffer has this many bytes past its end, for the last word's store.
constexpr std::size_t kSlack = 8;

uint8_t* put(uint8_t* p, uint64_t v) {
  if (v >= kWordLimit) {
    while (v >= 0x80) {
      *p++ = static_cast<uint8_t>(v | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<uint8_t>(v);
    return p;
  }
  const int n = varint_bytes(v);
  // 7-bit groups to bytes (unrolled); ids and positions below 2^28 (graphs of up to 268M nodes)
  // take the short form, a branch that always goes the same way on one graph.
  uint64_t w = (v & 0x7f) | ((v << 1) & 0x7f00) | ((v << 2) & 0x7f0000) | ((v << 3) & 0x7f000000);
  if (v >= uint64_t{1} << 28) {
    for (int g = 4; g < 8; ++g) w |= ((v >> (7 * g)) & 0x7f) << (8 * g);
  }
  w |= kContinue & ((uint64_t{1} << (8 * (n - 1))) - 1);  // every byte but the last continues
  std::memcpy(p, &w, sizeof w);
  return p + n;
}

/// Bytes of ids[0, n) under coding 0 (zigzag deltas from the previous id, from 0) and coding 1
/// (plain varints).
struct IdCost {
  int64_t delta = 0;
  int64_t plain = 0;
  int coding() const { return plain < delta ? 1 : 0; }
  int64_t bytes() const { return plain < delta ? plain : delta; }
};

IdCost id_cost(const int64_t* ids, int64_t n) {
  IdCost c;
  uint64_t prev = 0;
  for (int64_t j = 0; j < n; ++j) {
    const auto id = static_cast<uint64_t>(ids[j]);
    c.delta += varint_bytes(zigzag(prev, id));
    c.plain += varint_bytes(id);
    prev = id;
  }
  return c;
}

uint8_t* put_ids(uint8_t* p, const int64_t* ids, int64_t n, int coding) {
  uint64_t prev = 0;
  for (int64_t j = 0; j < n; ++j) {
    const auto id = static_cast<uint64_t>(ids[j]);
    p = put(p, coding == 0 ? zigzag(prev, id) : id);
    prev = id;
  }
  return p;
}

void require_non_negative(std::span<const int64_t> values, const char* what) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    GRAPHTIER_EXPECTS(values[i] >= 0, InvalidArgument, "packing ", what, ": entry ", i, " is ", values[i],
                      ", expected >= 0");
  }
}

/// Reads one message, refusing anything a packer could not have written.
class Reader {
 public:
  Reader(std::span<const uint8_t> message, const char* what) : m_(message), what_(what) {}

  uint64_t varint() {
    if (m_.size() - at_ >= sizeof(uint64_t)) {
      uint64_t w;
      std::memcpy(&w, m_.data() + at_, sizeof w);
      if (const uint64_t stops = ~w & kContinue; stops != 0) {  // ends within the word
        const int n = std::countr_zero(stops) / 8 + 1;
        w &= ~uint64_t{0} >> (64 - 8 * n);
        uint64_t v = (w & 0x7f) | ((w >> 1) & 0x3f80) | ((w >> 2) & 0x1fc000) | ((w >> 3) & 0xfe00000);
        if (n > 4) {
          for (int g = 4; g < 8; ++g) v |= ((w >> (8 * g)) & 0x7f) << (7 * g);
        }
        at_ += static_cast<std::size_t>(n);
        return v;
      }
    }
    const std::size_t start = at_;
    uint64_t v = 0;
    for (int i = 0;; ++i) {
      GRAPHTIER_EXPECTS(at_ < m_.size(), InvalidArgument, what_, ": the message ends inside a value at byte ", start,
                        " of ", m_.size());
      const uint8_t b = m_[at_++];
      // The tenth byte holds bit 63 only; more would not fit in 64 bits.
      GRAPHTIER_EXPECTS(i < kMaxVarintBytes - 1 || b <= 1, InvalidArgument, what_, ": an overlong value at byte ",
                        start);
      v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0) return v;
    }
  }

  /// A value that must be an int64 >= 0.
  int64_t non_negative(uint64_t v, const char* name) const {
    GRAPHTIER_EXPECTS(v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), InvalidArgument, what_, ": ",
                      name, " at byte ", at_, " is negative or beyond int64");
    return static_cast<int64_t>(v);
  }

  /// A record's head: (count, coding), the count bounded by the bytes left (each of its values
  /// takes at least `bytes_per_entry`), so a corrupt count cannot ask for a huge allocation.
  std::pair<int64_t, int> head(int64_t bytes_per_entry, const char* name) {
    const uint64_t h = varint();
    const uint64_t count = h >> 1;
    GRAPHTIER_EXPECTS(count <= left() / static_cast<uint64_t>(bytes_per_entry), InvalidArgument, what_, ": a ", name,
                      " of ", count, " at byte ", at_, " needs more than the ", left(), " bytes left");
    return {static_cast<int64_t>(count), static_cast<int>(h & 1)};
  }

  /// The message's total of neighbour ids (rows) or picks (draws), which sizes the output once,
  /// bounded by the bytes left as a record's count is.
  int64_t total(int64_t bytes_per_entry, const char* name) {
    const uint64_t t = varint();
    GRAPHTIER_EXPECTS(t <= left() / static_cast<uint64_t>(bytes_per_entry), InvalidArgument, what_, ": ", t, " ", name,
                      " need more than the ", left(), " bytes of the message");
    return static_cast<int64_t>(t);
  }

  void ids(int64_t* out, int64_t n, int coding, const char* name) {
    uint64_t prev = 0;
    for (int64_t j = 0; j < n; ++j) {
      const uint64_t v = varint();
      prev = coding == 0 ? unzigzag(prev, v) : v;
      out[j] = non_negative(prev, name);
    }
  }

  void finish() const {
    GRAPHTIER_EXPECTS(at_ == m_.size(), InvalidArgument, what_, ": the message goes on past its last record (byte ",
                      at_, " of ", m_.size(), ")");
  }

 private:
  uint64_t left() const { return m_.size() - at_; }

  std::span<const uint8_t> m_;
  std::size_t at_ = 0;
  const char* what_;
};

}  // namespace

std::vector<uint8_t> pack_ids(std::span<const int64_t> ids) {
  require_non_negative(ids, "ids");
  const auto n = static_cast<int64_t>(ids.size());
  const IdCost c = id_cost(ids.data(), n);
  const auto bytes = static_cast<std::size_t>(varint_bytes(2 * static_cast<uint64_t>(n) + 1) + c.bytes());
  std::vector<uint8_t> out(bytes + kSlack);
  put_ids(put(out.data(), 2 * static_cast<uint64_t>(n) + static_cast<uint64_t>(c.coding())), ids.data(), n,
          c.coding());
  out.resize(bytes);
  return out;
}

std::vector<int64_t> unpack_ids(std::span<const uint8_t> message) {
  Reader r(message, "packed ids");
  const auto [count, coding] = r.head(1, "list");
  std::vector<int64_t> ids(static_cast<std::size_t>(count));
  r.ids(ids.data(), count, coding, "an id");
  r.finish();
  return ids;
}

std::vector<uint8_t> pack_rows(const NeighborRows& rows) {
  const auto n = static_cast<int64_t>(rows.first_edge.size());
  GRAPHTIER_EXPECTS(static_cast<int64_t>(rows.indptr.size()) == n + 1 && rows.indptr.front() == 0, InvalidArgument,
                    "packing rows: indptr has ", rows.indptr.size(), " entries, expected ", n + 1, " starting at 0");
  GRAPHTIER_EXPECTS(static_cast<int64_t>(rows.indices.size()) == rows.indptr.back(), InvalidArgument,
                    "packing rows: ", rows.indices.size(), " indices, indptr says ", rows.indptr.back());
  for (int64_t k = 0; k < n; ++k) {
    GRAPHTIER_EXPECTS(rows.indptr[k] <= rows.indptr[k + 1], InvalidArgument, "packing rows: indptr decreases at ", k);
  }
  require_non_negative(rows.indices, "rows' neighbour ids");
  require_non_negative(rows.first_edge, "rows' first edges");
  std::vector<int> coding(static_cast<std::size_t>(n));
  int64_t bytes = 0;
  uint64_t end = 0;  // the previous row's first_edge + degree
  for (int64_t k = 0; k < n; ++k) {
    const int64_t degree = rows.indptr[k + 1] - rows.indptr[k];
    const IdCost c = id_cost(rows.indices.data() + rows.indptr[k], degree);
    coding[static_cast<std::size_t>(k)] = c.coding();
    const auto first = static_cast<uint64_t>(rows.first_edge[k]);
    bytes += varint_bytes(2 * static_cast<uint64_t>(degree) + 1) + varint_bytes(zigzag(end, first)) + c.bytes();
    end = first + static_cast<uint64_t>(degree);
  }
  const auto total = static_cast<uint64_t>(rows.indptr.back());
  bytes += varint_bytes(total);
  std::vector<uint8_t> out(static_cast<std::size_t>(bytes) + kSlack);
  uint8_t* p = put(out.data(), total);
  end = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t degree = rows.indptr[k + 1] - rows.indptr[k];
    const int c = coding[static_cast<std::size_t>(k)];
    const auto first = static_cast<uint64_t>(rows.first_edge[k]);
    p = put(p, 2 * static_cast<uint64_t>(degree) + static_cast<uint64_t>(c));
    p = put(p, zigzag(end, first));
    p = put_ids(p, rows.indices.data() + rows.indptr[k], degree, c);
    end = first + static_cast<uint64_t>(degree);
  }
  out.resize(static_cast<std::size_t>(bytes));
  return out;
}

NeighborRows unpack_rows(std::span<const uint8_t> message, std::span<const int64_t> nodes) {
  Reader r(message, "packed rows");
  NeighborRows rows;
  rows.nodes.assign(nodes.begin(), nodes.end());
  rows.indptr.reserve(nodes.size() + 1);
  rows.indptr.push_back(0);
  rows.first_edge.reserve(nodes.size());
  const int64_t total = r.total(1, "neighbour ids");
  rows.indices.resize(static_cast<std::size_t>(total));
  int64_t at = 0;
  uint64_t end = 0;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const auto [degree, coding] = r.head(1, "row");
    const int64_t first = r.non_negative(unzigzag(end, r.varint()), "a first edge");
    GRAPHTIER_EXPECTS(degree <= total - at, InvalidArgument, "packed rows: row ", k, " of degree ", degree,
                      " goes past the message's ", total, " neighbour ids");
    r.ids(rows.indices.data() + at, degree, coding, "a neighbour id");
    at += degree;
    rows.first_edge.push_back(first);
    rows.indptr.push_back(at);
    end = static_cast<uint64_t>(first) + static_cast<uint64_t>(degree);
  }
  GRAPHTIER_EXPECTS(at == total, InvalidArgument, "packed rows: the rows hold ", at, " neighbour ids, the message says ",
                    total);
  r.finish();
  return rows;
}

std::vector<uint8_t> pack_draws(const RowDraws& draws) {
  int64_t picks = 0;
  for (std::size_t i = 0; i < draws.counts.size(); ++i) {
    GRAPHTIER_EXPECTS(draws.counts[i] >= 0, InvalidArgument, "packing draws: request ", i, " has ", draws.counts[i],
                      " picks");
    picks += draws.counts[i];
  }
  GRAPHTIER_EXPECTS(static_cast<int64_t>(draws.neighbors.size()) == picks &&
                        static_cast<int64_t>(draws.edge_ids.size()) == picks,
                    InvalidArgument, "packing draws: the counts add up to ", picks, " picks, with ",
                    draws.neighbors.size(), " neighbours and ", draws.edge_ids.size(), " edge ids");
  require_non_negative(draws.neighbors, "draws' neighbour ids");
  require_non_negative(draws.edge_ids, "draws' edge ids");
  std::vector<int> coding(draws.counts.size());
  int64_t bytes = 0;
  int64_t at = 0;
  uint64_t prev_edge = 0;
  for (std::size_t i = 0; i < draws.counts.size(); ++i) {
    const int64_t count = draws.counts[i];
    const IdCost c = id_cost(draws.neighbors.data() + at, count);
    coding[i] = c.coding();
    bytes += varint_bytes(2 * static_cast<uint64_t>(count) + 1) + c.bytes();
    for (int64_t j = at; j < at + count; ++j) {
      const auto e = static_cast<uint64_t>(draws.edge_ids[static_cast<std::size_t>(j)]);
      bytes += varint_bytes(zigzag(prev_edge, e));
      prev_edge = e;
    }
    at += count;
  }
  bytes += varint_bytes(static_cast<uint64_t>(picks));
  std::vector<uint8_t> out(static_cast<std::size_t>(bytes) + kSlack);
  uint8_t* p = put(out.data(), static_cast<uint64_t>(picks));
  at = 0;
  prev_edge = 0;
  for (std::size_t i = 0; i < draws.counts.size(); ++i) {
    const int64_t count = draws.counts[i];
    p = put(p, 2 * static_cast<uint64_t>(count) + static_cast<uint64_t>(coding[i]));
    p = put_ids(p, draws.neighbors.data() + at, count, coding[i]);
    for (int64_t j = at; j < at + count; ++j) {
      const auto e = static_cast<uint64_t>(draws.edge_ids[static_cast<std::size_t>(j)]);
      p = put(p, zigzag(prev_edge, e));
      prev_edge = e;
    }
    at += count;
  }
  out.resize(static_cast<std::size_t>(bytes));
  return out;
}

RowDraws unpack_draws(std::span<const uint8_t> message, int64_t requests) {
  GRAPHTIER_EXPECTS(requests >= 0, InvalidArgument, "unpacking draws: ", requests, " requests");
  Reader r(message, "packed draws");
  RowDraws draws;
  draws.counts.reserve(static_cast<std::size_t>(requests));
  const int64_t total = r.total(2, "picks");  // a neighbour and an edge id per pick
  draws.neighbors.resize(static_cast<std::size_t>(total));
  draws.edge_ids.resize(static_cast<std::size_t>(total));
  int64_t at = 0;
  uint64_t prev_edge = 0;
  for (int64_t i = 0; i < requests; ++i) {
    const auto [count, coding] = r.head(2, "request");
    GRAPHTIER_EXPECTS(count <= total - at, InvalidArgument, "packed draws: request ", i, " of ", count,
                      " picks goes past the message's ", total);
    r.ids(draws.neighbors.data() + at, count, coding, "a neighbour id");
    for (int64_t j = at; j < at + count; ++j) {
      prev_edge = unzigzag(prev_edge, r.varint());
      draws.edge_ids[static_cast<std::size_t>(j)] = r.non_negative(prev_edge, "an edge id");
    }
    at += count;
    draws.counts.push_back(count);
  }
  GRAPHTIER_EXPECTS(at == total, InvalidArgument, "packed draws: the requests hold ", at, " picks, the message says ",
                    total);
  r.finish();
  return draws;
}

}  // namespace graphtier::sample
