// Edge-list text (text_source, LineBlockReader, the `src dst` parser): a file either parses or is
// refused with FormatError "path:line: problem"; the edges it parses to, written back as text,
// parse to the same edges; what parses without --allow-extra-columns parses the same with it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "convert_csc.hpp"
#include "fuzz_common.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/thread_pool.hpp"

using namespace graphtier::graph;

namespace {

using Edges = std::vector<std::pair<int64_t, int64_t>>;

graphtier::ThreadPool& pool() {
  static graphtier::ThreadPool p(2);
  return p;
}

Edges parse(const std::string& path, bool allow_extra_columns) {
  const auto source = detail::text_edge_source(detail::text_source(path), allow_extra_columns, std::nullopt);
  graphtier::Progress progress("fuzz", source->progress_total(), source->progress_unit());
  Edges edges;
  source->scan(pool(), progress, [&](std::span<const detail::EdgeChunk> chunks) {
    for (const auto& c : chunks) {
      for (int64_t i = 0; i < c.count; ++i) {
        graphtier::fuzz::require(c.src[i] >= 0 && c.dst[i] >= 0, "negative node id parsed");
        edges.emplace_back(c.src[i], c.dst[i]);
      }
    }
  });
  return edges;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graphtier::fuzz::quiet();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string path = graphtier::fuzz::scratch_dir() + "/edges.txt";
  graphtier::fuzz::write_file(path, std::string_view(reinterpret_cast<const char*>(data), size));
  std::optional<Edges> strict;
  graphtier::fuzz::check_contract([&] { strict = parse(path, false); });
  std::optional<Edges> lenient;
  graphtier::fuzz::check_contract([&] { lenient = parse(path, true); });
  if (strict) graphtier::fuzz::require(lenient && *lenient == *strict, "--allow-extra-columns changed accepted edges");
  if (!lenient) return 0;
  std::string text;
  for (const auto& [s, d] : *lenient) text += std::to_string(s) + " " + std::to_string(d) + "\n";
  const std::string again_path = graphtier::fuzz::scratch_dir() + "/again.txt";
  graphtier::fuzz::write_file(again_path, text);
  Edges again;
  try {
    again = parse(again_path, false);
  } catch (const std::exception& e) {
    graphtier::fuzz::fail(std::string("parsed edges written back do not parse: ") + e.what());
  }
  graphtier::fuzz::require(again == *lenient, "edge-list round trip changed the edges");
  return 0;
}
