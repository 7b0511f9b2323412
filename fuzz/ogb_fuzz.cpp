// OGB node-property layouts (convert_ogb, CSV.gz and npz): the input is split into the layout's
// files (records "%%%% raw/edge.csv\n...", fuzz_common.hpp); the conversion either commits a
// dataset that opens and agrees with its report, or is refused with a typed error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "layout_check.hpp"

using namespace graphtier::graph;

namespace {

const std::vector<std::string>& layout() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v{"raw/data.npz", "raw/node-label.npz"};
    for (const char* stem : {"raw/edge", "raw/num-node-list", "raw/num-edge-list", "raw/node-feat", "raw/node-label",
                             "split/s/train", "split/s/valid", "split/s/test"}) {
      v.push_back(std::string(stem) + ".csv");
      v.push_back(std::string(stem) + ".csv.gz");
    }
    return v;
  }();
  return names;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graphtier::fuzz::quiet();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static graphtier::ThreadPool pool(2);
  const std::string root = graphtier::fuzz::scratch_dir() + "/ogb";
  const std::string out = graphtier::fuzz::scratch_dir() + "/ogb-out";
  graphtier::fuzz::write_layout(root, std::string_view(reinterpret_cast<const char*>(data), size), layout());
  std::filesystem::create_directories(root + "/raw");
  graphtier::fuzz::check_contract([&] {
    ConvertOptions options;
    options.overwrite = true;
    options.chunk_bytes = 1 << 16;
    const auto report = convert_ogb(OgbInput{root, "", OgbFormat::kAuto}, out, options, pool);
    graphtier::fuzz::check_converted(report, out);
  });
  return 0;
}
