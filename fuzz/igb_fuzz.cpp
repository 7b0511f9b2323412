// IGB layouts (convert_igb, size "experimental"): the input is split into the layout's files
// (records "%%%% experimental/processed/paper/node_feat.npy\n...", fuzz_common.hpp); the
// conversion either commits a dataset that opens and agrees with its report, or is refused with
// a typed error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "layout_check.hpp"

using namespace graphtier::graph;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graphtier::fuzz::quiet();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static graphtier::ThreadPool pool(2);
  static const std::vector<std::string> layout{
      "experimental/processed/paper/node_feat.npy", "experimental/processed/paper/node_label_19.npy",
      "experimental/processed/paper__cites__paper/edge_index.npy"};
  const std::string root = graphtier::fuzz::scratch_dir() + "/igb";
  const std::string out = graphtier::fuzz::scratch_dir() + "/igb-out";
  graphtier::fuzz::write_layout(root, std::string_view(reinterpret_cast<const char*>(data), size), layout);
  std::filesystem::create_directories(root + "/experimental/processed");
  graphtier::fuzz::check_contract([&] {
    IgbInput input;
    input.root = root;
    input.size = "experimental";
    input.feature_dim = 4;  // raw (header-less) feature files: rows of 4 float32
    ConvertOptions options;
    options.overwrite = true;
    options.chunk_bytes = 1 << 16;
    const auto report = convert_igb(input, out, options, pool);
    graphtier::fuzz::check_converted(report, out);
  });
  return 0;
}
