// Directories written atomically (docs/architecture.md, Errors): a tree is built under
// `<parent>/.<name>.tmp-<pid>-<n>` beside its target and renamed into place as a whole, so readers
// see the previous tree or the new one; the temporary is registered with the interrupt registry
// (core/interrupt.hpp) while it exists, and the temporaries of killed writers are swept by the
// next writer of the same target. DatasetWriter stages one dataset this way; StagedDirectory
// stages any tree (the partition directory, whose datasets are staged inside it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace graphtier::graph {

/// Removes the temporaries that writers no longer running left beside `dir`, then creates and
/// registers a fresh `<parent>/.<name>.tmp-<pid>-<n>` for `dir` and returns its path. The caller
/// has checked that `dir` may be written and that its parent exists. Throws IoError.
std::string make_staging_directory(const std::string& dir);

/// Renames `temp_dir` (complete and fsynced) to `dir` with the interrupt registry held, so that a
/// cleanup runs wholly before (removing the new tree) or wholly after (removing the old one): an
/// existing `dir` is exchanged with it (renameat2 RENAME_EXCHANGE) and then removed, after the
/// park point `swapped_point`. Sets `committed` the moment the target holds the new tree; then
/// fsyncs the parent. Throws IoError.
void publish_staging_directory(const std::string& temp_dir, const std::string& dir, bool& committed,
                               std::string_view swapped_point);

/// A tree staged beside `dir` for the lifetime of the object: removed unless committed.
class StagedDirectory {
 public:
  /// The caller has checked that `dir` may be (re)placed and that its parent exists.
  explicit StagedDirectory(std::string dir);
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  const std::string& dir() const noexcept { return dir_; }
  const std::string& temp_dir() const noexcept { return temp_dir_; }
  /// Bytes the file system holding the temporary has free for unprivileged writers, -1 if unknown.
  int64_t free_bytes() const;

  /// fsyncs the temporary, parks at `staged_point` (core/test_hook.hpp), then
  /// publish_staging_directory with `swapped_point`.
  void commit(std::string_view staged_point, std::string_view swapped_point);

 private:
  std::string dir_;
  std::string temp_dir_;
  bool committed_ = false;
};

}  // namespace graphtier::graph
