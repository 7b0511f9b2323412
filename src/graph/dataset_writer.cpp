// Writer of dataset format v1: everything goes into a temporary directory beside the target,
// which is validated and then renamed into place, so readers see the old dataset or the new one,
// never a mix, and a killed writer leaves at most a hidden temporary directory behind (the
// lifecycle is graph/staged_directory.hpp's).
#include <cerrno>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/log.hpp"
#include "graphtier/graph/dataset.hpp"

namespace graphtier::graph {

DatasetWriter::DatasetWriter(std::string dir, bool overwrite)
    : staged_(std::move(dir), overwrite, kManifestName, "output") {}

OutputFile& DatasetWriter::open_array(const std::string& array) {
  GRAPHTIER_EXPECTS(!staged_.committed(), InvalidArgument, "dataset ", staged_.dir(), " is already committed");
  GRAPHTIER_EXPECTS(arrays_.count(array) == 0, InvalidArgument, "array '", array, "' is already open in ",
                    staged_.temp_dir());
  auto file = std::make_unique<OutputFile>(staged_.temp_dir() + "/" + array + ".bin");
  OutputFile& ref = *file;
  arrays_.emplace(array, std::move(file));
  return ref;
}

MappedFile DatasetWriter::map_array(const std::string& array) {
  const auto it = arrays_.find(array);
  GRAPHTIER_EXPECTS(it != arrays_.end(), InvalidArgument, "array '", array, "' was not written in ", staged_.temp_dir());
  it->second->close();  // commit() closes it again: a no-op that keeps its size and checksum
  return MappedFile(staged_.temp_dir() + "/" + array + ".bin");
}

void DatasetWriter::require_free_space(std::string_view what, int64_t rows, int64_t row_bytes) const {
  if (rows <= 0 || row_bytes <= 0) return;
  const int64_t available = staged_.free_bytes();
  if (available < 0) return;  // no answer: the writes themselves will tell
  const auto free_bytes = static_cast<uint64_t>(available);
  // Compared by division: a hostile --feature-dim times the node count may exceed 64 bits.
  if (static_cast<uint64_t>(rows) <= free_bytes / static_cast<uint64_t>(row_bytes)) return;
  const double needed = static_cast<double>(rows) * static_cast<double>(row_bytes);
  throw IoError(ENOSPC, detail::concat(staged_.dir(), ": ", what, " need ", format_bytes(needed), " (", rows, " x ",
                                       row_bytes, " B) but the file system of ", parent_directory(staged_.dir()),
                                       " has ", format_bytes(static_cast<double>(free_bytes)), " free"));
}

void DatasetWriter::commit(Manifest manifest) {
  GRAPHTIER_EXPECTS(!staged_.committed(), InvalidArgument, "dataset ", staged_.dir(), " is already committed");
  manifest.files.clear();
  for (auto& [array, file] : arrays_) {
    const std::size_t bytes = file->close();
    manifest.files[array] = FileEntry{array + ".bin", bytes, file->checksum_hex()};
  }
  if (manifest.name.empty()) manifest.name = base_name(staged_.dir());
  {
    OutputFile out(staged_.temp_dir() + "/" + kManifestName);
    const std::string text = manifest.to_json();
    out.write(text.data(), text.size());
    out.close();
  }
  // A writer bug must never publish a dataset that readers reject.
  Dataset::open(staged_.temp_dir());
  // Parks at dataset_writer.staged (complete, validated, not yet in place), then at
  // dataset_writer.swapped when it replaces a dataset.
  staged_.commit("dataset_writer.staged", "dataset_writer.swapped");
}

}  // namespace graphtier::graph
