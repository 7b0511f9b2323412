// manifest.json: Manifest::from_json either refuses the text with FormatError or returns a
// manifest that serialises (to_json) and parses again to the same value.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.hpp"
#include "graphtier/graph/dataset.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  graphtier::fuzz::check_contract([&] {
    const auto m = graphtier::graph::Manifest::from_json(text, "manifest.json");
    const std::string json = m.to_json();
    graphtier::graph::Manifest again;
    try {
      again = graphtier::graph::Manifest::from_json(json, "manifest.json (round trip)");
    } catch (const std::exception& e) {
      graphtier::fuzz::fail(std::string("a parsed manifest does not parse again: ") + e.what());
    }
    graphtier::fuzz::require(again.to_json() == json, "manifest round trip changed the value");
  });
  return 0;
}
