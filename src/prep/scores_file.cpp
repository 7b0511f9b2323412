// Externally supplied scores (the hook for pre-sampling visit counts): .npy of any numeric type,
// or raw float64.
#include <fcntl.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "graphtier/core/dtype.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/graph_convert/npy.hpp"
#include "graphtier/prep/hotness.hpp"

namespace graphtier::prep {

using graph::NpyType;

std::vector<double> read_scores_file(const std::string& path, int64_t num_nodes) {
  NpyType type = NpyType::kFloat64;
  int64_t offset = 0;
  if (graph::has_npy_magic(path)) {
    const graph::NpyHeader header = graph::read_npy_header(path);
    const auto& shape = header.shape;
    const bool column = shape.size() == 1 || (shape.size() == 2 && shape[1] == 1);
    if (!column || shape[0] != num_nodes) {
      throw FormatError(path, detail::concat("scores must have shape (", num_nodes, ",) for ", num_nodes,
                                             " nodes, got ", header.shape_string()));
    }
    type = header.type;
    offset = header.data_offset;
  }
  const FileDescriptor file(path, O_RDONLY);
  const int64_t element = graph::npy_type_size(type);
  const int64_t expected = offset + num_nodes * element;
  if (file.size() != expected) {
    throw FormatError(path, detail::concat("size is ", file.size(), " bytes, expected ", expected, " (", num_nodes,
                                           offset > 0 ? " scores after the .npy header)" : " raw float64 scores)"));
  }
  std::vector<double> scores(static_cast<std::size_t>(num_nodes));
  constexpr int64_t kBlock = int64_t{1} << 20;  // elements per read
  std::vector<std::byte> buffer(static_cast<std::size_t>(std::min(num_nodes, kBlock) * element));
  for (int64_t first = 0; first < num_nodes; first += kBlock) {
    const int64_t count = std::min(kBlock, num_nodes - first);
    pread_exact(file.get(), buffer.data(), static_cast<std::size_t>(count * element),
                static_cast<uint64_t>(offset + first * element), path);
    graph::npy_to_float64(type, buffer.data(), scores.data() + first, count);
  }
  for (int64_t v = 0; v < num_nodes; ++v) {
    if (!std::isfinite(scores[v])) {
      throw FormatError(path, detail::concat("score of node ", v, " is not finite (", scores[v], ")"));
    }
  }
  return scores;
}

}  // namespace graphtier::prep
