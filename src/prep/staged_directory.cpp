// The partition directory's atomic write: the same temporary naming, registry and rename protocol
// as graph::DatasetWriter (src/graph/dataset_writer.cpp), for a tree of datasets.
#include "staged_directory.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>  // renameat2
#include <cstring>
#include <filesystem>

#include "graphtier/core/error.hpp"
#include "graphtier/core/file.hpp"
#include "graphtier/core/interrupt.hpp"
#include "graphtier/core/test_hook.hpp"
#include "graphtier/graph/dataset.hpp"

namespace graphtier::prep::impl {
namespace {

std::string parent_of(const std::string& dir) {
  const auto slash = dir.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return dir.substr(0, slash);
}

std::string base_of(const std::string& dir) {
  const auto slash = dir.find_last_of('/');
  return slash == std::string::npos ? dir : dir.substr(slash + 1);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

/// Removes `.<name>.tmp-<pid>-<n>` directories of writers that are no longer running.
void remove_stale_temporaries(const std::string& parent, const std::string& name) {
  DIR* d = ::opendir(parent.c_str());
  if (d == nullptr) return;
  const std::string prefix = "." + name + ".tmp-";
  while (dirent* entry = ::readdir(d)) {
    const std::string entry_name = entry->d_name;
    if (entry_name.rfind(prefix, 0) != 0) continue;
    const long pid = std::strtol(entry_name.c_str() + prefix.size(), nullptr, 10);
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
      graph::remove_tree(parent + "/" + entry_name);
    }
  }
  ::closedir(d);
}

}  // namespace

StagedDirectory::StagedDirectory(std::string dir, bool overwrite, const std::string& marker) : dir_(std::move(dir)) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  GRAPHTIER_EXPECTS(!dir_.empty(), InvalidArgument, "--out must not be empty");
  if (exists(dir_)) {
    GRAPHTIER_EXPECTS(overwrite, InvalidArgument, "--out ", dir_, " already exists (pass --overwrite to replace it)");
    // Never replace something else: a typo must not swap away a home directory.
    std::error_code ec;
    const bool empty = std::filesystem::is_directory(dir_, ec) && std::filesystem::is_empty(dir_, ec);
    GRAPHTIER_EXPECTS(empty || exists(dir_ + "/" + marker), InvalidArgument, "--out ", dir_, " exists and has no ",
                      marker, "; refusing to replace it");
  }
  const std::string parent = parent_of(dir_);
  GRAPHTIER_EXPECTS(std::filesystem::is_directory(parent), InvalidArgument, "--out: parent directory ", parent,
                    " does not exist");
  remove_stale_temporaries(parent, base_of(dir_));
  static std::atomic<int> counter{0};
  temp_dir_ = detail::concat(parent, "/.", base_of(dir_), ".tmp-", ::getpid(), "-", counter++);
  register_temporary(temp_dir_, dir_);  // before it exists: an interrupt never finds it unregistered
  if (::mkdir(temp_dir_.c_str(), 0755) != 0) {
    const int err = errno;
    unregister_temporary(temp_dir_);
    errno = err;
    GRAPHTIER_THROW_ERRNO(temp_dir_, ": cannot create temporary directory: ", std::strerror(errno));
  }
}

StagedDirectory::~StagedDirectory() {
  if (!committed_) graph::remove_tree(temp_dir_);
  unregister_temporary(temp_dir_);
}

int64_t StagedDirectory::free_bytes() const {
  struct statvfs fs {};
  if (::statvfs(temp_dir_.c_str(), &fs) != 0) return -1;
  const uint64_t bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  return bytes > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(bytes);
}

void StagedDirectory::commit() {
  GRAPHTIER_EXPECTS(!committed_, InvalidArgument, dir_, " is already committed");
  fsync_directory(temp_dir_);
  park_point("partition.staged");  // test hook: complete, not yet in place
  // The rename happens with the registry held, so a cleanup runs wholly before it (removing the
  // new tree) or wholly after it (removing the old one): the target is never a mix.
  if (exists(dir_)) {
    {
      const auto held = lock_interrupt_registry();
      if (::renameat2(AT_FDCWD, temp_dir_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) != 0) {
        GRAPHTIER_THROW_ERRNO("cannot replace ", dir_, " with ", temp_dir_, ": ", std::strerror(errno));
      }
      committed_ = true;
      register_temporary(temp_dir_, "", held);  // now the previous tree: no output is lost with it
    }
    graph::remove_tree(temp_dir_);
    unregister_temporary(temp_dir_);
  } else {
    const auto held = lock_interrupt_registry();
    if (::rename(temp_dir_.c_str(), dir_.c_str()) != 0) {
      GRAPHTIER_THROW_ERRNO("cannot rename ", temp_dir_, " to ", dir_, ": ", std::strerror(errno));
    }
    committed_ = true;
    unregister_temporary(temp_dir_, held);
  }
  fsync_directory(parent_of(dir_));
}

}  // namespace graphtier::prep::impl
