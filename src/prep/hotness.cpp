// Method names and the degree scores.
#include "graphtier/prep/hotness.hpp"

#include "graphtier/core/error.hpp"
#include "graphtier/prep/out_neighbours.hpp"

namespace graphtier::prep {
namespace {

constexpr int64_t kNodeGrain = int64_t{1} << 16;

}  // namespace

std::string_view hotness_method_name(HotnessMethod method) {
  switch (method) {
    case HotnessMethod::kDegree: return "degree";
    case HotnessMethod::kInDegree: return "in-degree";
    case HotnessMethod::kOutDegree: return "out-degree";
    case HotnessMethod::kReversePageRank: return "rpr";
    case HotnessMethod::kWeightedReversePageRank: return "wrpr";
    case HotnessMethod::kExternal: return "scores";
    case HotnessMethod::kPresample: return "presample";
  }
  return "unknown";
}

HotnessMethod parse_hotness_method(std::string_view name) {
  for (auto m : {HotnessMethod::kDegree, HotnessMethod::kInDegree, HotnessMethod::kOutDegree,
                 HotnessMethod::kReversePageRank, HotnessMethod::kWeightedReversePageRank, HotnessMethod::kExternal,
                 HotnessMethod::kPresample}) {
    if (name == hotness_method_name(m)) return m;
  }
  if (name == "reverse-pagerank") return HotnessMethod::kReversePageRank;
  if (name == "weighted-reverse-pagerank") return HotnessMethod::kWeightedReversePageRank;
  throw InvalidArgument(detail::concat("unknown hotness method '", name,
                                       "' (expected degree, in-degree, out-degree, rpr, wrpr, scores or presample)"));
}

std::vector<double> in_degree_scores(const graph::CscView& csc, ThreadPool& pool) {
  csc.check_shape("in_degree_scores");
  std::vector<double> scores(static_cast<std::size_t>(csc.num_nodes()));
  pool.parallel_for(0, csc.num_nodes(), kNodeGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) scores[v] = static_cast<double>(csc.in_degree(v));
  });
  return scores;
}

std::vector<double> out_degree_scores(const graph::CscView& csc, ThreadPool& pool) {
  const std::vector<int64_t> degree = out_degrees(csc, pool);
  std::vector<double> scores(degree.size());
  pool.parallel_for(0, static_cast<int64_t>(degree.size()), kNodeGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) scores[v] = static_cast<double>(degree[v]);
  });
  return scores;
}

std::vector<double> degree_scores(const graph::CscView& csc, ThreadPool& pool) {
  const std::vector<int64_t> degree = out_degrees(csc, pool);
  std::vector<double> scores(degree.size());
  pool.parallel_for(0, static_cast<int64_t>(degree.size()), kNodeGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v < hi; ++v) scores[v] = static_cast<double>(degree[v] + csc.in_degree(v));
  });
  return scores;
}

}  // namespace graphtier::prep
