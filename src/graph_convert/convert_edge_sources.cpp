// Edge inputs for the CSC builder: text lines of `src dst`, and .npy edge_index arrays.
#include <algorithm>
#include <cstring>
#include <future>
#include <limits>
#include <vector>

#include "convert_csc.hpp"
#include "text_lines.hpp"
#include "graphtier/core/error.hpp"

namespace graphtier::graph::detail {

using ::graphtier::detail::concat;

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

const char* skip_blanks(const char* p, const char* end) {
  while (p < end && is_blank(*p)) ++p;
  return p;
}

enum class IdStatus { kOk, kNotANumber, kTooLarge };

/// A non-negative decimal integer at p (advanced past it).
IdStatus parse_id(const char*& p, const char* end, int64_t& value) {
  const char* start = p;
  int64_t v = 0;
  while (p < end && *p >= '0' && *p <= '9') {
    const int digit = *p - '0';
    if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) return IdStatus::kTooLarge;
    v = v * 10 + digit;
    ++p;
  }
  if (p == start) return IdStatus::kNotANumber;
  value = v;
  return IdStatus::kOk;
}

struct EdgeLines {
  std::vector<int64_t> src;
  std::vector<int64_t> dst;
};

/// Parses the lines of `text` into `out`; see convert.hpp for the syntax.
/// Ids must lie below `limit` when it is known (>= 0), else below `cap` (what the CSC can hold).
std::optional<ParseError> parse_edge_lines(std::string_view text, EdgeLines& out, bool allow_extra_columns,
                                           int64_t limit, int64_t cap) {
  out.src.reserve(text.size() / 8);
  out.dst.reserve(text.size() / 8);
  const char* const begin = text.data();
  return for_each_line(text, [&](const char* line, const char* eol) -> std::optional<std::string> {
    const char* p = skip_blanks(line, eol);
    if (p == eol || *p == '#' || *p == '%') return std::nullopt;
    int64_t ids[2];
    for (int k = 0; k < 2; ++k) {
      if (k == 1) {
        // The separator: blanks, or a comma with optional blanks around it.
        const char* q = skip_blanks(p, eol);
        if (q < eol && *q == ',') q = skip_blanks(q + 1, eol);
        if (q == p) {
          return concat("expected two node ids separated by whitespace or a comma, got ", quote_line(text, line - begin));
        }
        p = q;
      }
      switch (parse_id(p, eol, ids[k])) {
        case IdStatus::kOk: break;
        case IdStatus::kTooLarge: return concat("node id does not fit in 64 bits in ", quote_line(text, line - begin));
        case IdStatus::kNotANumber:
          return concat("expected two non-negative integer node ids (src dst), got ", quote_line(text, line - begin));
      }
    }
    const char* rest = skip_blanks(p, eol);
    if (rest < eol) {
      const bool separated = rest != p || *rest == ',';
      if (!allow_extra_columns || !separated) {
        return concat("unexpected text after the two node ids in ", quote_line(text, line - begin),
                      separated ? " (pass --allow-extra-columns to ignore further columns)" : "");
      }
    }
    for (const int64_t id : ids) {
      if (id >= cap) {
        if (limit < 0) return node_id_problem(id);
        return concat("node id ", id, " is out of range [0, ", limit, ") (number of nodes ", limit, ")");
      }
    }
    out.src.push_back(ids[0]);
    out.dst.push_back(ids[1]);
    return std::nullopt;
  });
}

class TextEdgeSource final : public EdgeSource {
 public:
  TextEdgeSource(SourcePtr source, bool allow_extra_columns, std::optional<int64_t> num_nodes)
      : source_(std::move(source)),
        allow_extra_columns_(allow_extra_columns),
        limit_(num_nodes.value_or(-1)),
        cap_(limit_ >= 0 ? limit_ : max_nodes_for(kCscBytesPerNode)) {}

  void scan(ThreadPool& pool, Progress& progress,
            const std::function<void(std::span<const EdgeChunk>)>& consume) const override {
    std::vector<EdgeChunk> chunks;
    parse_lines<EdgeLines>(
        *source_, pool, &progress,
        [&](std::string_view text, EdgeLines& out) { return parse_edge_lines(text, out, allow_extra_columns_, limit_, cap_); },
        [&](std::vector<EdgeLines>& parts, const TextBlock&) {
          chunks.clear();
          for (const auto& part : parts) {
            chunks.push_back({part.src.data(), part.dst.data(), static_cast<int64_t>(part.src.size())});
          }
          consume(chunks);
        });
  }
  int64_t progress_total() const override { return static_cast<int64_t>(source_->input_size()); }
  std::string progress_unit() const override { return "B"; }
  const std::string& name() const override { return source_->name(); }

 private:
  SourcePtr source_;
  bool allow_extra_columns_;
  int64_t limit_;
  int64_t cap_;
};

/// How an edge_index array lies in memory.
struct EdgeArrayShape {
  int64_t num_edges = 0;
  bool rows_in_memory = false;  // all sources, then all destinations; else (src, dst) pairs
};

EdgeArrayShape edge_array_shape(const NpyArray& a, EdgeLayout layout) {
  if (a.ndim() != 2 || (a.dim(0) != 2 && a.dim(1) != 2)) {
    throw FormatError(a.name(), concat("edge_index has shape ", a.header().shape_string(), ", expected [2, E] or [E, 2]"));
  }
  if (npy_is_float(a.header().type)) {
    throw FormatError(a.name(), concat("edge_index holds ", npy_descr(a.header().type), " values; node ids must be integers"));
  }
  bool two_by_e = false;
  switch (layout) {
    case EdgeLayout::kAuto: two_by_e = a.dim(0) == 2; break;  // [2, 2] is read as [2, E]
    case EdgeLayout::kRows: two_by_e = true; break;
    case EdgeLayout::kColumns: two_by_e = false; break;
  }
  if (two_by_e && a.dim(0) != 2) {
    throw FormatError(a.name(), concat("edge_index has shape ", a.header().shape_string(), ", not [2, E]"));
  }
  if (!two_by_e && a.dim(1) != 2) {
    throw FormatError(a.name(), concat("edge_index has shape ", a.header().shape_string(), ", not [E, 2]"));
  }
  EdgeArrayShape s;
  s.num_edges = two_by_e ? a.dim(1) : a.dim(0);
  // Fortran order transposes the memory layout of the same logical array.
  s.rows_in_memory = two_by_e != a.header().fortran_order;
  return s;
}

class NpyEdgeSource final : public EdgeSource {
 public:
  NpyEdgeSource(NpyArray array, EdgeLayout layout) : array_(std::move(array)), shape_(edge_array_shape(array_, layout)) {}

  void scan(ThreadPool& pool, Progress& progress,
            const std::function<void(std::span<const EdgeChunk>)>& consume) const override {
    constexpr int64_t kBlockEdges = int64_t{1} << 20;
    const int64_t e = shape_.num_edges;
    if (e == 0) return;
    // Two readers side by side for [2, E]: sources from element 0, destinations from element E.
    std::optional<NpyReader> first = array_.reader(0);
    std::optional<NpyReader> second;
    if (shape_.rows_in_memory) second = array_.reader(e);

    struct Block {
      std::vector<int64_t> src, dst, pairs;
      int64_t count = 0;
    };
    Block blocks[2];
    const auto load = [&](Block& b, int64_t begin) {
      b.count = std::min(kBlockEdges, e - begin);
      b.src.resize(static_cast<std::size_t>(b.count));
      b.dst.resize(static_cast<std::size_t>(b.count));
      if (shape_.rows_in_memory) {
        first->read(b.src.data(), b.count);
        second->read(b.dst.data(), b.count);
      } else {
        b.pairs.resize(static_cast<std::size_t>(2 * b.count));
        first->read(b.pairs.data(), 2 * b.count);
        for (int64_t i = 0; i < b.count; ++i) {
          b.src[i] = b.pairs[2 * i];
          b.dst[i] = b.pairs[2 * i + 1];
        }
      }
    };
    // The next block is read while the pool works on this one.
    std::future<void> pending = std::async(std::launch::async, [&] { load(blocks[0], 0); });
    for (int64_t begin = 0, k = 0; begin < e; begin += kBlockEdges, ++k) {
      pending.get();
      Block& current = blocks[k & 1];
      if (begin + kBlockEdges < e) {
        pending = std::async(std::launch::async, [&, next = begin + kBlockEdges, k] { load(blocks[(k + 1) & 1], next); });
      }
      const EdgeChunk chunk{current.src.data(), current.dst.data(), current.count};
      try {
        consume(std::span<const EdgeChunk>(&chunk, 1));
      } catch (...) {
        if (pending.valid()) pending.wait();  // the loader uses `blocks`: let it finish first
        throw;
      }
      progress.add(current.count);
    }
  }
  int64_t progress_total() const override { return shape_.num_edges; }
  std::string progress_unit() const override { return " edges"; }
  const std::string& name() const override { return array_.name(); }

 private:
  NpyArray array_;
  EdgeArrayShape shape_;
};

}  // namespace

std::unique_ptr<EdgeSource> text_edge_source(SourcePtr source, bool allow_extra_columns,
                                             std::optional<int64_t> num_nodes) {
  return std::make_unique<TextEdgeSource>(std::move(source), allow_extra_columns, num_nodes);
}

std::unique_ptr<EdgeSource> npy_edge_source(NpyArray edge_index, EdgeLayout layout) {
  return std::make_unique<NpyEdgeSource>(std::move(edge_index), layout);
}

int64_t npy_edge_count(const NpyArray& edge_index, EdgeLayout layout) {
  return edge_array_shape(edge_index, layout).num_edges;
}

}  // namespace graphtier::graph::detail
