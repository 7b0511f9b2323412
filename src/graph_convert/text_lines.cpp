// Line blocks with read-ahead on a background thread; see text_lines.hpp.
#include "text_lines.hpp"

#include <algorithm>
#include <cstring>

namespace graphtier::graph::detail {

LineBlockReader::LineBlockReader(const ByteSource& source, std::size_t block_bytes)
    : stream_(source.open()), block_bytes_(std::max<std::size_t>(block_bytes, 1)) {
  pending_ = std::async(std::launch::async, [this] { fill(buffers_[0]); });
}

LineBlockReader::~LineBlockReader() {
  if (pending_.valid()) {
    try {
      pending_.get();
    } catch (...) {
      // Already failing (or abandoned early): the read's own error no longer matters.
    }
  }
}

namespace {

[[noreturn]] void throw_line_too_long(const std::string& name, int64_t line) {
  throw_at_line(name, line, ::graphtier::detail::concat("line is longer than ", kMaxLineBytes,
                                                        " bytes, the limit for a line of text (not a text file?)"));
}

}  // namespace

void LineBlockReader::fill(Buffer& b) {
  // b.data already starts with the previous block's unfinished line. next_line_ is the number of
  // its first line (next() changes it only between fills).
  std::size_t tail_begin = 0;  // start of the unfinished last line of b.data
  for (;;) {
    const std::size_t old_size = b.data.size();
    const std::size_t want = std::max(block_bytes_ - std::min(block_bytes_, old_size), block_bytes_ / 4 + 1);
    b.data.resize(old_size + want);
    std::size_t got = 0;
    while (got < want) {
      const std::size_t n = stream_->read(b.data.data() + old_size + got, want - got);
      if (n == 0) {
        b.eof = true;
        break;
      }
      got += n;
    }
    b.data.resize(old_size + got);
    // The unfinished last line must not grow past the limit while we wait for its end.
    if (const std::size_t last = b.data.find_last_of('\n'); last != std::string::npos) tail_begin = last + 1;
    if (b.data.size() - tail_begin > kMaxLineBytes) {
      throw_line_too_long(stream_->name(), next_line_ + std::count(b.data.data(), b.data.data() + tail_begin, '\n'));
    }
    if (b.eof) {
      b.lines_end = b.data.size();
      break;
    }
    if (b.data.size() >= block_bytes_) {
      const std::size_t last = b.data.find_last_of('\n');
      if (last != std::string::npos) {
        b.lines_end = last + 1;
        break;
      }
      // A line longer than a block: keep reading until it ends.
    }
  }
  // Any line longer than the limit holds one of these checkpoints, half the limit apart: the line
  // around each is measured, and the rest is not scanned line by line.
  const char* const base = b.data.data();
  for (std::size_t c = 0; c < b.lines_end; c += kMaxLineBytes / 2) {
    const auto* next = static_cast<const char*>(std::memchr(base + c, '\n', b.lines_end - c));
    const auto* prev = static_cast<const char*>(::memrchr(base, '\n', c));
    const std::size_t line_end = next != nullptr ? static_cast<std::size_t>(next - base) : b.lines_end;
    const std::size_t line_begin = prev != nullptr ? static_cast<std::size_t>(prev - base) + 1 : 0;
    if (line_end - line_begin > kMaxLineBytes) {
      throw_line_too_long(stream_->name(), next_line_ + std::count(base, base + line_begin, '\n'));
    }
  }
  b.newlines = std::count(base, base + b.lines_end, '\n');
  b.input_position = stream_->input_position();
}

bool LineBlockReader::next(TextBlock& block) {
  if (done_) return false;
  pending_.get();
  Buffer& b = buffers_[current_];
  if (b.lines_end == 0) {
    done_ = true;
    return false;
  }
  block.text = std::string_view(b.data.data(), b.lines_end);
  block.first_line = next_line_;
  block.input_position = b.input_position;
  next_line_ += b.newlines;
  if (b.eof) {
    done_ = true;
  } else {
    Buffer& other = buffers_[current_ ^ 1];
    other.data.assign(b.data, b.lines_end, std::string::npos);
    other.lines_end = 0;
    other.newlines = 0;
    other.eof = false;
    pending_ = std::async(std::launch::async, [this, &other] { fill(other); });
  }
  current_ ^= 1;
  return true;
}

std::vector<std::string_view> split_at_lines(std::string_view text, int parts, std::size_t min_bytes) {
  std::vector<std::string_view> out;
  parts = std::max(parts, 1);
  const std::size_t target = std::max(min_bytes, text.size() / static_cast<std::size_t>(parts) + 1);
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = begin + target;
    if (end >= text.size()) {
      end = text.size();
    } else {
      const std::size_t nl = text.find('\n', end - 1);
      end = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    out.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return out;
}

int64_t line_number(const TextBlock& block, std::size_t offset) {
  offset = std::min(offset, block.text.size());
  return block.first_line + std::count(block.text.data(), block.text.data() + offset, '\n');
}

void throw_at_line(const std::string& name, int64_t line, const std::string& problem) {
  throw FormatError(name + ":" + std::to_string(line), problem);
}

std::string quote_line(std::string_view text, std::size_t line_begin) {
  line_begin = std::min(line_begin, text.size());
  std::size_t end = text.find('\n', line_begin);
  if (end == std::string_view::npos) end = text.size();
  std::string line(text.substr(line_begin, end - line_begin));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  constexpr std::size_t kMax = 80;
  const bool shortened = line.size() > kMax;
  return "'" + ::graphtier::detail::printable(std::string_view(line).substr(0, kMax)) + (shortened ? "...'" : "'");
}

}  // namespace graphtier::graph::detail
