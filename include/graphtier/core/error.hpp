// Typed exceptions at the library boundary (docs/architecture.md, Errors and Conventions 5).
//
// Each derives from a standard exception, so the Python binding maps InvalidArgument and
// FormatError (std::invalid_argument) to ValueError and OutOfRange (std::out_of_range) to
// IndexError without glue; its translator (python/src/module.cpp) maps IoError to OSError and
// Unsupported to NotImplementedError.
#pragma once

#include <cerrno>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace graphtier {

namespace detail {
template <typename... Args>
std::string concat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

/// `text` with every byte outside printable ASCII written as \xNN, for messages that quote input
/// text (a line, a token, a header, a manifest string): binary input must not reach a terminal.
inline std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xf];
    }
  }
  return out;
}
}  // namespace detail

/// A caller passed a value the operation cannot accept (shape, dtype, option).
class InvalidArgument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// An id or position lies outside the valid range.
class OutOfRange : public std::out_of_range {
 public:
  using std::out_of_range::out_of_range;
};

/// A file exists but its contents are not what its format promises. The message names the file.
class FormatError : public std::invalid_argument {
 public:
  FormatError(const std::string& path, const std::string& problem)
      : std::invalid_argument(path + ": " + problem), path_(path) {}
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

/// An operating-system call failed; carries errno and names the file (and offset where known).
/// `what()` is the message as given (it names the file and carries strerror already); `code()`
/// holds the errno.
class IoError : public std::system_error {
 public:
  IoError(int err, std::string what) : std::system_error(err, std::generic_category()), what_(std::move(what)) {}
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  std::string what_;
};

/// The operation needs a backend this build or machine does not have (e.g. CUDA).
class Unsupported : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// A device (CUDA) call failed at run time for a reason other than memory or a missing device.
/// The message names the call, the file and line, and the driver's description.
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A device allocation failed for lack of memory: the caller may free memory and retry. A
/// DeviceError, so RuntimeError in Python, as PyTorch's CUDA OutOfMemoryError is.
class OutOfMemory : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

}  // namespace graphtier

/// Throws `Exc` with the concatenated message when `cond` is false.
#define GRAPHTIER_EXPECTS(cond, Exc, ...)                                  \
  do {                                                                     \
    if (!(cond)) throw Exc(::graphtier::detail::concat(__VA_ARGS__));      \
  } while (0)

/// Throws IoError for the current errno with the concatenated message.
#define GRAPHTIER_THROW_ERRNO(...) \
  throw ::graphtier::IoError(errno, ::graphtier::detail::concat(__VA_ARGS__))
