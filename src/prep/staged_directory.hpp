// A directory tree built under a hidden temporary name beside its target and renamed into place
// as a whole, as graph::DatasetWriter does for one dataset (docs/architecture.md, Errors): readers
// see the previous tree or the new one, an interrupt removes the temporary (it is registered), and
// the temporaries of killed writers are swept by the next writer of the same target.
#pragma once

#include <string>

namespace graphtier::prep::impl {

class StagedDirectory {
 public:
  /// `marker`: the file that identifies a tree this writer may replace (e.g. partition.json); an
  /// existing `dir` without it (and not empty) is refused, as is any existing `dir` without
  /// `overwrite`. Throws InvalidArgument naming --out, IoError when the temporary cannot be made.
  StagedDirectory(std::string dir, bool overwrite, const std::string& marker);
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  const std::string& dir() const noexcept { return dir_; }
  const std::string& temp_dir() const noexcept { return temp_dir_; }
  /// The file system's space free for unprivileged writers at the temporary, or -1 if unknown.
  int64_t free_bytes() const;

  /// fsyncs the temporary and renames it to dir() (exchanging with an existing tree, which is
  /// then removed).
  void commit();

 private:
  std::string dir_;
  std::string temp_dir_;
  bool committed_ = false;
};

}  // namespace graphtier::prep::impl
