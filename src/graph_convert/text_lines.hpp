// Text inputs read as blocks of whole lines and parsed in parallel, with errors located as
// "path:line". The next block is read (and decompressed) on a background thread while the pool
// parses the current one, so a gzip input costs about max(inflate, parse / threads).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "byte_source.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/thread_pool.hpp"

namespace graphtier::graph::detail {

/// The longest line a text input may have, without its '\n': a longer one (a binary file, or one
/// with no line breaks) is refused with its line number before more of it is held in memory.
inline constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;

/// Text is read in blocks of kTextBlockBytes, and a block is parsed in parts of at least
/// kMinPartBytes. Fuzzing builds (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, the fuzz preset) use
/// tiny ones, so that the fuzzer's inputs of a few KiB cross block and part boundaries, and an
/// input costs no 16 MiB buffers.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
inline constexpr std::size_t kTextBlockBytes = 256;
inline constexpr std::size_t kMinPartBytes = 16;
#else
inline constexpr std::size_t kTextBlockBytes = std::size_t{16} << 20;
inline constexpr std::size_t kMinPartBytes = std::size_t{64} << 10;
#endif

struct TextBlock {
  std::string_view text;        // whole lines; only the input's last line may lack its '\n'
  int64_t first_line = 1;       // 1-based number of the first line
  uint64_t input_position = 0;  // source input bytes consumed up to the end of this block
};

class LineBlockReader {
 public:
  explicit LineBlockReader(const ByteSource& source, std::size_t block_bytes = kTextBlockBytes);
  ~LineBlockReader();
  LineBlockReader(const LineBlockReader&) = delete;
  LineBlockReader& operator=(const LineBlockReader&) = delete;

  /// The next block, valid until the following call; false at the end of the input. Throws
  /// FormatError("path:line") for a line longer than kMaxLineBytes.
  bool next(TextBlock& block);

 private:
  struct Buffer {
    std::string data;
    std::size_t lines_end = 0;  // data[0, lines_end) is whole lines
    int64_t newlines = 0;
    uint64_t input_position = 0;
    bool eof = false;
  };
  void fill(Buffer& buffer);

  std::unique_ptr<ByteStream> stream_;
  std::size_t block_bytes_;
  Buffer buffers_[2];
  int current_ = 0;
  int64_t next_line_ = 1;
  bool done_ = false;
  std::future<void> pending_;
};

/// Splits `text` (whole lines) into at most `parts` pieces of about equal size that start at
/// line starts; pieces of less than `min_bytes` are merged.
std::vector<std::string_view> split_at_lines(std::string_view text, int parts, std::size_t min_bytes = kMinPartBytes);

/// 1-based line number, in the input, of byte `offset` of `block.text`.
int64_t line_number(const TextBlock& block, std::size_t offset);

/// A problem a parser found: where the offending line starts within the part it was given, and
/// what is wrong.
struct ParseError {
  std::size_t offset = 0;
  std::string problem;
};

/// Calls line_problem(line, eol) for each line of `text` ([line, eol), without its '\n'); the
/// first problem it returns stops the walk and comes back as a ParseError at that line.
template <typename LineFn>  // std::optional<std::string>(const char* line, const char* eol)
std::optional<ParseError> for_each_line(std::string_view text, LineFn&& line_problem) {
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  for (const char* line = begin; line < end;) {
    const char* eol = static_cast<const char*>(std::memchr(line, '\n', static_cast<std::size_t>(end - line)));
    if (eol == nullptr) eol = end;
    if (std::optional<std::string> problem = line_problem(line, eol)) {
      return ParseError{static_cast<std::size_t>(line - begin), std::move(*problem)};
    }
    line = eol == end ? end : eol + 1;
  }
  return std::nullopt;
}

/// Throws FormatError("path:line", problem).
[[noreturn]] void throw_at_line(const std::string& name, int64_t line, const std::string& problem);

/// The line of `text` that starts at `line_begin`, quoted, shortened and with bytes outside
/// printable ASCII escaped (detail::printable) for messages.
std::string quote_line(std::string_view text, std::size_t line_begin);

/// Streams `source` in blocks; splits each block into parts that the pool parses in parallel
/// with parse(part_text, result) -> error or nothing, then hands the parts' results to
/// consume(results, block) in input order. The first error in input order is thrown as
/// FormatError("path:line", problem), whatever thread met it first.
template <typename Result>
void parse_lines(const ByteSource& source, ThreadPool& pool, Progress* progress,
                 const std::function<std::optional<ParseError>(std::string_view, Result&)>& parse,
                 const std::function<void(std::vector<Result>&, const TextBlock&)>& consume) {
  LineBlockReader reader(source);
  TextBlock block;
  uint64_t reported = 0;
  std::vector<Result> results;
  std::vector<std::optional<ParseError>> errors;
  while (reader.next(block)) {
    const auto parts = split_at_lines(block.text, pool.size() * 4);
    results.assign(parts.size(), Result{});
    errors.assign(parts.size(), std::nullopt);
    pool.parallel_for(0, static_cast<int64_t>(parts.size()), 1, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) errors[p] = parse(parts[p], results[p]);
    });
    for (std::size_t p = 0; p < parts.size(); ++p) {
      if (!errors[p]) continue;
      const std::size_t offset = static_cast<std::size_t>(parts[p].data() - block.text.data()) + errors[p]->offset;
      throw_at_line(source.name(), line_number(block, offset), errors[p]->problem);
    }
    consume(results, block);
    if (progress != nullptr) {
      progress->add(static_cast<int64_t>(block.input_position - reported));
      reported = block.input_position;
    }
  }
}

}  // namespace graphtier::graph::detail
