// Directories written atomically (docs/architecture.md, Errors): a tree is built under
// `<parent>/.<name>.tmp-<pid>-<n>` beside its target and renamed into place as a whole, so readers
// see the previous tree or the new one; the temporary is registered with the interrupt registry
// (core/interrupt.hpp) while it exists, and the temporaries of killed writers are swept by the
// next writer of the same target. StagedDirectory is that lifecycle, from the check of the target
// to the rename; DatasetWriter stages one dataset in one, the partition writer a tree of datasets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace graphtier::graph {

/// A tree staged beside `dir` for the lifetime of the object: removed unless committed.
class StagedDirectory {
 public:
  /// Checks the target, then sweeps the temporaries that writers no longer running left beside it
  /// and creates and registers a fresh temporary. `dir` (trailing slashes dropped) must not be
  /// empty and its parent must be a directory; an existing `dir` is replaced only with `overwrite`
  /// and only if it is an empty directory or holds `marker` (the manifest of what the writer
  /// writes), so that a typo never swaps away a home directory. `what` names the target in the
  /// messages ("output", "--out"). Throws InvalidArgument (the target) or IoError.
  StagedDirectory(std::string dir, bool overwrite, std::string_view marker, std::string_view what);
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  const std::string& dir() const noexcept { return dir_; }
  const std::string& temp_dir() const noexcept { return temp_dir_; }
  bool committed() const noexcept { return committed_; }
  /// Bytes the file system holding the temporary has free for unprivileged writers, -1 if unknown.
  int64_t free_bytes() const;

  /// fsyncs the temporary (complete: its files closed and fsynced), parks at `staged_point`
  /// (core/test_hook.hpp), then renames it to `dir` with the interrupt registry held, so that a
  /// cleanup runs wholly before (removing the new tree) or wholly after (removing the old one): an
  /// existing `dir` is exchanged with it (renameat2 RENAME_EXCHANGE) and then removed, after the
  /// park point `swapped_point`; then fsyncs the parent. committed() is true from the moment the
  /// target holds the new tree. Throws InvalidArgument if already committed, else IoError.
  void commit(std::string_view staged_point, std::string_view swapped_point);

 private:
  std::string dir_;
  std::string temp_dir_;
  bool committed_ = false;
};

/// Removes a directory tree; errors are ignored (cleanup paths).
void remove_tree(const std::string& path) noexcept;

}  // namespace graphtier::graph
