// ConvertArgs -> ConvertOptions: the one parser of the converters' text options, for
// `graphtier convert` (tools/cli/convert.cpp) and graphtier.convert (python/src/convert.cpp).
#include <cstdlib>
#include <string>

#include "graphtier/core/error.hpp"
#include "graphtier/core/memory.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/graph_convert/convert.hpp"

namespace graphtier::graph {

ConvertOptions to_options(const ConvertArgs& args) {
  ConvertOptions o;
  o.overwrite = args.overwrite;
  o.name = args.name;
  o.feature_dtype = parse_dtype(args.dtype);
  o.alignment = args.align;
  o.symmetrize = args.symmetrize;
  o.keep_self_loops = args.keep_self_loops;
  if (!args.num_nodes.empty()) o.num_nodes = parse_count(args.num_nodes);
  if (!args.num_classes.empty()) o.num_classes = parse_count(args.num_classes);
  // A percent budget is of the machine's memory; "0" (no limit) is not "0 bytes".
  o.memory_budget =
      args.memory_budget == "0" ? 0 : Budget::parse(args.memory_budget).resolve(physical_memory_bytes());
  return o;
}

void parse_split_fractions(std::string_view text, TypedEdgeListInput& input) {
  const std::string s(text);
  const auto comma = s.find(',');
  const auto number = [](const std::string& part, double& value) {
    char* end = nullptr;
    value = std::strtod(part.c_str(), &end);
    return !part.empty() && end == part.c_str() + part.size();
  };
  double train = 0, valid = 0;
  GRAPHTIER_EXPECTS(comma != std::string::npos && number(s.substr(0, comma), train) && number(s.substr(comma + 1), valid),
                    InvalidArgument, "--split must be two fractions TRAIN,VAL (as 0.2,0.1), got '",
                    detail::printable(text), "'");
  input.train_fraction = train;
  input.valid_fraction = valid;
}

}  // namespace graphtier::graph
