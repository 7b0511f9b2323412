// Front door of edge-list conversion: one text file (plain or gzip) of `src dst` lines.
#include "convert_nodes.hpp"
#include "convert_session.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::graph {

ConvertReport convert_edge_list(const EdgeListInput& input, const std::string& out, const ConvertOptions& options,
                                ThreadPool& pool) {
  const bool gzip = detail::is_gzip_file(input.path);
  const detail::SourcePtr source = gzip ? detail::gzip_source(input.path) : detail::file_source(input.path);
  detail::ConvertSession session(out, options, gzip ? "edge list (gzip)" : "edge list", pool);
  const auto edges = detail::text_edge_source(source, input.allow_extra_columns || input.edge_time, options.num_nodes);
  session.topology(*edges, std::nullopt);
  if (input.edge_time) {
    session.edge_time(detail::read_edge_list_times(*source, options.symmetrize, options.keep_self_loops, pool),
                      input.path);
  }
  return session.commit(::graphtier::detail::concat("graphtier convert edge-list ", input.path,
                                                    options.symmetrize ? " (symmetrized)" : "",
                                                    options.keep_self_loops ? " (self-loops kept)" : ""));
}

}  // namespace graphtier::graph
