// ConvertArgs -> ConvertOptions: the one parser of the converters' text options, for
// `graphtier convert` (tools/cli/convert.cpp) and graphtier.convert (python/src/convert.cpp).
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

}  // namespace graphtier::graph
