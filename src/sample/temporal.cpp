// Temporal sampling's names and the time order of the columns (temporal.hpp); the layer is
// cpu/temporal_sampler_cpu.cpp's.
#include "graphtier/sample/temporal.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <variant>

#include "graphtier/core/error.hpp"

namespace graphtier::sample {

std::string_view temporal_strategy_name(TemporalStrategy s) noexcept {
  return kTemporalStrategyNames[static_cast<std::size_t>(s)];
}

TemporalStrategy parse_temporal_strategy(std::string_view text) {
  for (std::size_t k = 0; k < kTemporalStrategyNames.size(); ++k) {
    if (text == kTemporalStrategyNames[k]) return static_cast<TemporalStrategy>(k);
  }
  throw InvalidArgument(detail::concat("unknown temporal strategy '", detail::printable(text), "' (expected ",
                                       kTemporalStrategyNames[0], " or ", kTemporalStrategyNames[1], ")"));
}

TemporalIndex TemporalIndex::build(const graph::CscView& csc, std::span<const int64_t> times, TimeSource source,
                                   std::span<const uint8_t> types, ThreadPool* pool) {
  csc.check_shape("temporal index");
  const int64_t n = csc.num_nodes();
  const int64_t e = csc.num_edges();
  const int64_t expected = source == TimeSource::kNode ? n : e;
  GRAPHTIER_EXPECTS(static_cast<int64_t>(times.size()) == expected, InvalidArgument, "temporal index: ", times.size(),
                    source == TimeSource::kNode ? " node times for a graph of " : " edge times for a graph of ",
                    expected, source == TimeSource::kNode ? " nodes" : " edges");
  GRAPHTIER_EXPECTS(types.empty() || static_cast<int64_t>(types.size()) == e, InvalidArgument, "temporal index: ",
                    types.size(), " edge types for ", e, " edges");
  TemporalIndex index;
  index.order.resize(static_cast<std::size_t>(e));
  index.time.resize(static_cast<std::size_t>(e));
  std::visit(
      [&](auto indices) {
        const auto sort_columns = [&](int64_t lo, int64_t hi) {
          for (int64_t v = lo; v < hi; ++v) {
            const int64_t begin = csc.indptr[v], end = csc.indptr[v + 1];
            int64_t* order = index.order.data() + begin;
            std::iota(order, order + (end - begin), begin);
            const auto time_of = [&](int64_t p) {
              return source == TimeSource::kNode ? times[static_cast<std::size_t>(indices[p])] : times[p];
            };
            // (relation, time, position): typed columns keep their relation segments in place.
            std::sort(order, order + (end - begin), [&](int64_t a, int64_t b) {
              if (!types.empty() && types[a] != types[b]) return types[a] < types[b];
              const int64_t ta = time_of(a), tb = time_of(b);
              return ta != tb ? ta < tb : a < b;
            });
            for (int64_t k = begin; k < end; ++k) index.time[k] = time_of(index.order[k]);
          }
        };
        if (pool == nullptr) {
          sort_columns(0, n);
        } else {
          pool->parallel_for(0, n, int64_t{1} << 12, sort_columns);
        }
      },
      csc.indices);
  return index;
}

TimeSource time_source(const graph::Dataset& dataset, std::string_view time_attr) {
  const auto [node_name, edge_name] = kTimeAttrNames;
  GRAPHTIER_EXPECTS(time_attr == node_name || time_attr == edge_name, InvalidArgument, "time_attr '",
                    detail::printable(time_attr), "': expected \"", node_name, "\" or \"", edge_name,
                    "\" (the dataset's ", node_name, ".bin or ", edge_name, ".bin)");
  const bool edge = time_attr == edge_name;
  GRAPHTIER_EXPECTS(edge ? dataset.has_edge_time() : dataset.has_node_time(), InvalidArgument, "time_attr '",
                    time_attr, "': dataset ", dataset.dir(), " has no ", edge ? "edge" : "node", " times (", time_attr,
                    ".bin)");
  return edge ? TimeSource::kEdge : TimeSource::kNode;
}

TemporalIndex temporal_index(const graph::Dataset& dataset, std::string_view time_attr, ThreadPool* pool) {
  const TimeSource source = time_source(dataset, time_attr);
  return TemporalIndex::build(graph::CscView::of(dataset),
                              source == TimeSource::kEdge ? dataset.edge_time() : dataset.node_time(), source,
                              dataset.hetero().type_per_edge, pool);
}

}  // namespace graphtier::sample
