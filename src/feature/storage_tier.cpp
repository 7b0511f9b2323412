#include "storage_tier.hpp"

#include "graphtier/io/calibrate.hpp"

namespace graphtier::feature {

namespace {
// Below this the file fits in any page cache or device buffer and calibration measures noise.
constexpr uint64_t kMinCalibrationBytes = uint64_t{64} << 20;
}  // namespace

StorageTier::StorageTier(const std::string& path, const graph::FeatureLayout& layout, int64_t num_nodes,
                         io::ReadDevice& device, int depth)
    : file_(io::ReadFile::open(path)),
      layout_{num_nodes, layout.row_stride, layout.row_bytes()},
      engine_(device, depth) {
  if (depth <= 0 && file_.size() >= kMinCalibrationBytes) {
    io::CalibrationOptions options;
    options.max_depth = device.max_in_flight();
    options.seconds_per_depth = 0.05;
    io::calibrate(engine_, file_, options);
  }
}

const io::IoStats& StorageTier::read(std::span<const int64_t> ids, std::span<std::byte* const> dsts) {
  engine_.read_rows(file_, layout_, ids, dsts);
  return engine_.last_batch();
}

}  // namespace graphtier::feature
