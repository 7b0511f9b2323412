// Throughput of `generate`: topology in requested edges per second, features in bytes per second,
// and the peak resident memory, for one configuration given on the command line.
//
//   generate_bench --out DIR [--nodes 10M] [--edges 200M] [--dim 128] [--classes 64]
//                  [--dtype float32] [--align 0] [--threads 0] [--memory-budget 0] [--keep]
//
// Prints one JSON object on stdout. The dataset is removed afterwards unless --keep is given.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "graphtier/core/dtype.hpp"
#include "graphtier/core/error.hpp"
#include "graphtier/core/units.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph_generate/generate.hpp"

int main(int argc, char** argv) {
  using namespace graphtier;
  graph::GenerateOptions o;
  o.num_nodes = 10'000'000;
  o.num_edges = 200'000'000;
  o.feature_dim = 128;
  o.num_classes = 64;
  o.seed = 1;
  std::string out;
  int threads = 0;
  bool keep = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const auto value = [&]() -> std::string {
        GRAPHTIER_EXPECTS(i + 1 < argc, InvalidArgument, arg, " needs a value");
        return argv[++i];
      };
      if (arg == "--out") out = value();
      else if (arg == "--nodes") o.num_nodes = parse_count(value());
      else if (arg == "--edges") o.num_edges = parse_count(value());
      else if (arg == "--dim") o.feature_dim = parse_count(value());
      else if (arg == "--classes") o.num_classes = parse_count(value());
      else if (arg == "--dtype") o.feature_dtype = parse_dtype(value());
      else if (arg == "--align") o.alignment = parse_count(value());
      else if (arg == "--threads") threads = static_cast<int>(parse_count(value()));
      else if (arg == "--memory-budget") o.memory_budget = parse_bytes(value());
      else if (arg == "--keep") keep = true;
      else throw InvalidArgument("unknown argument " + arg);
    }
    GRAPHTIER_EXPECTS(!out.empty(), InvalidArgument, "--out DIR is required");
    o.overwrite = true;

    ThreadPool pool(threads);
    const graph::GenerateReport r = graph::generate_dataset(out, o, pool);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    nlohmann::ordered_json j;
    j["nodes"] = r.num_nodes;
    j["requested_edges"] = r.requested_edges;
    j["stored_edges"] = r.num_edges;
    j["feature_dim"] = o.feature_dim;
    j["feature_dtype"] = dtype_name(o.feature_dtype);
    j["threads"] = pool.size();
    j["topology_passes"] = r.topology_passes;
    j["topology_s"] = r.topology_seconds;
    j["topology_requested_edges_per_s"] = r.requested_edges / r.topology_seconds;
    j["labels_and_splits_s"] = r.nodes_seconds;
    j["features_s"] = r.feature_seconds;
    j["feature_bytes"] = r.feature_bytes;
    j["feature_gb_per_s"] = r.feature_seconds > 0 ? r.feature_bytes / r.feature_seconds / 1e9 : 0.0;
    j["total_s"] = r.total_seconds;
    j["total_bytes"] = r.total_bytes;
    j["peak_rss_bytes"] = static_cast<int64_t>(usage.ru_maxrss) * 1024;
    j["measured_homophily"] = r.measured_homophily;
    std::cout << j.dump() << std::endl;
    if (!keep) graph::remove_tree(out);
  } catch (const std::exception& e) {
    std::cerr << "generate_bench: error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
