// partition.json: parse_partition_json either refuses the text with FormatError or returns a
// manifest whose bounds are consistent, which serialises (partition_json) and parses again to
// the same text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.hpp"
#include "partition_manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace graphtier::prep;
  const std::string text(reinterpret_cast<const char*>(data), size);
  graphtier::fuzz::check_contract([&] {
    const auto m = impl::parse_partition_json(text, "partition.json");
    const PartitionLayout& l = m.layout;
    for (int64_t i = 0; i < l.process_rows; ++i) {
      const auto [t0, t1] = l.topology_range(i);
      graphtier::fuzz::require(0 <= t0 && t0 <= t1 && t1 <= l.num_nodes,
                               "a parsed partition has a range outside [0, num_nodes]");
      for (const auto& [lo, hi] : l.local_ranges(i)) {
        graphtier::fuzz::require(0 <= lo && lo <= hi && hi <= l.num_nodes,
                                 "a parsed partition has a range outside [0, num_nodes]");
      }
    }
    const std::string json = impl::partition_json(m);
    std::string again;
    try {
      again = impl::partition_json(impl::parse_partition_json(json, "partition.json (round trip)"));
    } catch (const std::exception& e) {
      graphtier::fuzz::fail(std::string("a parsed partition manifest does not parse again: ") + e.what());
    }
    graphtier::fuzz::require(again == json, "partition manifest round trip changed the value");
  });
  return 0;
}
