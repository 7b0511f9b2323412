#include "graphtier/graph/csc_view.hpp"

#include <variant>

#include "graphtier/core/error.hpp"

namespace graphtier::graph {

void CscView::check_shape(const char* what) const {
  GRAPHTIER_EXPECTS(!indptr.empty(), InvalidArgument, what, ": indptr must have num_nodes + 1 entries, got none");
  GRAPHTIER_EXPECTS(indptr.front() == 0, InvalidArgument, what, ": indptr[0] is ", indptr.front(), ", expected 0");
  const auto edges = static_cast<int64_t>(std::visit([](auto span) { return span.size(); }, indices));
  GRAPHTIER_EXPECTS(indptr.back() == edges, InvalidArgument, what, ": indptr ends at ", indptr.back(), " but there are ",
                    edges, " indices");
}

}  // namespace graphtier::graph
