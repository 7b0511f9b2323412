// The distributed sampler's packed rows (sample/row_wire.hpp) on a dataset's topology: bytes per
// neighbour id, and neighbour ids per second packed and unpacked, next to extracting the rows and
// to copying them as int64 (what crossing unpacked costs the CPU: one copy of 8 bytes an id).
//
//   row_wire_bench --dir DATASET [--stride 2] [--rounds 5]
//
// Rows of every stride-th node, ascending (as a row fetch asks for them). Prints one JSON object
// on stdout: the medians over the rounds.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graphtier/core/error.hpp"
#include "graphtier/graph/csc_view.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/sample/row_sampling.hpp"
#include "graphtier/sample/row_wire.hpp"

namespace {

using namespace graphtier;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  int64_t stride = 2, rounds = 5;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const auto value = [&]() -> std::string {
        GRAPHTIER_EXPECTS(i + 1 < argc, InvalidArgument, arg, " needs a value");
        return argv[++i];
      };
      if (arg == "--dir") {
        dir = value();
      } else if (arg == "--stride") {
        stride = std::stoll(value());
      } else if (arg == "--rounds") {
        rounds = std::stoll(value());
      } else {
        throw InvalidArgument("unknown argument " + arg);
      }
    }
    GRAPHTIER_EXPECTS(!dir.empty() && stride >= 1 && rounds >= 1, InvalidArgument,
                      "usage: row_wire_bench --dir DATASET [--stride >= 1] [--rounds >= 1]");
    const graph::Dataset dataset = graph::Dataset::open(dir);
    const graph::CscView csc = graph::CscView::of(dataset);
    std::vector<int64_t> nodes;
    for (int64_t v = 0; v < csc.num_nodes(); v += stride) nodes.push_back(v);
    std::vector<double> extract, copy, pack, unpack;
    std::size_t bytes = 0;
    int64_t ids = 0;
    for (int64_t r = 0; r < rounds; ++r) {
      const auto t0 = Clock::now();
      const sample::NeighborRows rows = sample::extract_rows(csc, nodes, 0);
      const auto t1 = Clock::now();
      std::vector<int64_t> copied(rows.indices.size());
      std::memcpy(copied.data(), rows.indices.data(), rows.indices.size() * sizeof(int64_t));
      const auto t2 = Clock::now();
      const std::vector<uint8_t> message = sample::pack_rows(rows);
      const auto t3 = Clock::now();
      const sample::NeighborRows back = sample::unpack_rows(message, nodes);
      const auto t4 = Clock::now();
      GRAPHTIER_EXPECTS(back.indices == rows.indices && back.first_edge == rows.first_edge && copied == rows.indices,
                        InvalidArgument, "row_wire_bench: the unpacked rows differ from the packed ones");
      ids = static_cast<int64_t>(rows.indices.size());
      bytes = message.size();
      const auto per_id = [&](Clock::time_point a, Clock::time_point b) {
        return static_cast<double>(ids) / std::chrono::duration<double>(b - a).count();
      };
      extract.push_back(per_id(t0, t1));
      copy.push_back(per_id(t1, t2));
      pack.push_back(per_id(t2, t3));
      unpack.push_back(per_id(t3, t4));
    }
    nlohmann::json out;
    out["dataset"] = dir;
    out["rows"] = nodes.size();
    out["neighbour_ids"] = ids;
    out["packed_bytes_per_id"] = static_cast<double>(bytes) / static_cast<double>(std::max<int64_t>(1, ids));
    out["ids_per_s"] = {{"extract", median(extract)}, {"copy_int64", median(copy)}, {"pack", median(pack)},
                        {"unpack", median(unpack)}};
    std::cout << out.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "row_wire_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
