// Writer of dataset format v1: everything goes into a temporary directory beside the target,
// which is validated and then renamed into place, so readers see the old dataset or the new one,
// never a mix, and a killed writer leaves at most a hidden temporary directory behind (the steps
// in graph/staged_directory.hpp).
#include <sys/stat.h>

#include <filesystem>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/interrupt.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/core/test_hook.hpp"
#include "graphtier/graph/dataset.hpp"
#include "graphtier/graph/staged_directory.hpp"

namespace graphtier::graph {
void remove_tree(const std::string& path) noexcept {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

DatasetWriter::DatasetWriter(std::string dir, bool overwrite) : dir_(std::move(dir)), overwrite_(overwrite) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  GRAPHTIER_EXPECTS(!dir_.empty(), InvalidArgument, "output directory must not be empty");
  if (path_exists(dir_)) {
    GRAPHTIER_EXPECTS(overwrite_, InvalidArgument, dir_, " already exists (pass --overwrite to replace it)");
    // Never replace something that is not a dataset: a typo must not swap away a home directory.
    std::error_code ec;
    const bool empty = std::filesystem::is_directory(dir_, ec) && std::filesystem::is_empty(dir_, ec);
    GRAPHTIER_EXPECTS(empty || path_exists(dir_ + "/" + kManifestName), InvalidArgument, dir_,
                      " exists and is not a graphtier dataset; refusing to replace it");
  }
  const std::string parent = parent_directory(dir_);
  GRAPHTIER_EXPECTS(std::filesystem::is_directory(parent), InvalidArgument, "parent directory ", parent,
                    " of the output does not exist");
  temp_dir_ = make_staging_directory(dir_);
}

DatasetWriter::~DatasetWriter() {
  if (!committed_) {
    arrays_.clear();  // close descriptors before removing the files
    remove_tree(temp_dir_);
  }
  unregister_temporary(temp_dir_);
}

OutputFile& DatasetWriter::open_array(const std::string& array) {
  GRAPHTIER_EXPECTS(!committed_, InvalidArgument, "dataset ", dir_, " is already committed");
  GRAPHTIER_EXPECTS(arrays_.count(array) == 0, InvalidArgument, "array '", array, "' is already open in ", temp_dir_);
  auto file = std::make_unique<OutputFile>(temp_dir_ + "/" + array + ".bin");
  OutputFile& ref = *file;
  arrays_.emplace(array, std::move(file));
  return ref;
}

void DatasetWriter::require_free_space(std::string_view what, int64_t rows, int64_t row_bytes) const {
  if (rows <= 0 || row_bytes <= 0) return;
  const int64_t available = free_space_bytes(temp_dir_);
  if (available < 0) return;  // no answer: the writes themselves will tell
  const auto free_bytes = static_cast<uint64_t>(available);
  // Compared by division: a hostile --feature-dim times the node count may exceed 64 bits.
  if (static_cast<uint64_t>(rows) <= free_bytes / static_cast<uint64_t>(row_bytes)) return;
  const double needed = static_cast<double>(rows) * static_cast<double>(row_bytes);
  throw IoError(ENOSPC, detail::concat(dir_, ": ", what, " need ", format_bytes(needed), " (",
                                       rows, " x ", row_bytes, " B) but the file system of ", parent_directory(dir_), " has ",
                                       format_bytes(static_cast<double>(free_bytes)), " free"));
}

void DatasetWriter::commit(Manifest manifest) {
  GRAPHTIER_EXPECTS(!committed_, InvalidArgument, "dataset ", dir_, " is already committed");
  manifest.files.clear();
  for (auto& [array, file] : arrays_) {
    const std::size_t bytes = file->close();
    manifest.files[array] = FileEntry{array + ".bin", bytes, file->checksum_hex()};
  }
  if (manifest.name.empty()) manifest.name = base_name(dir_);
  {
    OutputFile out(temp_dir_ + "/" + kManifestName);
    const std::string text = manifest.to_json();
    out.write(text.data(), text.size());
    out.close();
  }
  // A writer bug must never publish a dataset that readers reject.
  Dataset::open(temp_dir_);
  fsync_directory(temp_dir_);
  park_point("dataset_writer.staged");  // test hook: complete, validated, not yet in place

  publish_staging_directory(temp_dir_, dir_, committed_, "dataset_writer.swapped");
}

}  // namespace graphtier::graph
