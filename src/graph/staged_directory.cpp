// The lifecycle every atomic directory writer shares: the check of the target, the temporary's
// name, its registration, the sweep of dead writers' temporaries, and the rename protocol
// (docs/architecture.md, Errors).
#include "graphtier/graph/staged_directory.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
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

namespace graphtier::graph {
namespace {

/// `dir` without trailing slashes, checked as StagedDirectory's constructor says.
std::string checked_target(std::string dir, bool overwrite, std::string_view marker, std::string_view what) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  GRAPHTIER_EXPECTS(!dir.empty(), InvalidArgument, what, " must not be empty");
  if (path_exists(dir)) {
    GRAPHTIER_EXPECTS(overwrite, InvalidArgument, what, " ", dir, " already exists (pass --overwrite to replace it)");
    std::error_code ec;
    const bool empty = std::filesystem::is_directory(dir, ec) && std::filesystem::is_empty(dir, ec);
    GRAPHTIER_EXPECTS(empty || path_exists(detail::concat(dir, "/", marker)), InvalidArgument, what, " ", dir,
                      " exists and has no ", marker, "; refusing to replace it");
  }
  const std::string parent = parent_directory(dir);
  std::error_code ec;
  GRAPHTIER_EXPECTS(std::filesystem::is_directory(parent, ec), InvalidArgument, what, ": parent directory ", parent,
                    " does not exist");
  return dir;
}

/// Removes `.<name>.tmp-<pid>-<n>` directories left by writers that are no longer running
/// (killed with SIGKILL, or the machine went down).
void remove_stale_temporaries(const std::string& parent, const std::string& name) {
  DIR* d = ::opendir(parent.c_str());
  if (d == nullptr) return;
  const std::string prefix = "." + name + ".tmp-";
  while (dirent* entry = ::readdir(d)) {
    const std::string entry_name = entry->d_name;
    if (entry_name.rfind(prefix, 0) != 0) continue;
    const long pid = std::strtol(entry_name.c_str() + prefix.size(), nullptr, 10);
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
      remove_tree(parent + "/" + entry_name);
    }
  }
  ::closedir(d);
}

/// Creates and registers a fresh `<parent>/.<name>.tmp-<pid>-<n>` for `dir`, after sweeping the
/// dead writers' temporaries.
std::string make_staging_directory(const std::string& dir) {
  const std::string parent = parent_directory(dir);
  remove_stale_temporaries(parent, base_name(dir));
  static std::atomic<int> counter{0};
  const std::string temp_dir = detail::concat(parent, "/.", base_name(dir), ".tmp-", ::getpid(), "-", counter++);
  // Registered before it exists, so that an interrupt never finds it unregistered.
  register_temporary(temp_dir, dir);
  if (::mkdir(temp_dir.c_str(), 0755) != 0) {
    const int err = errno;
    unregister_temporary(temp_dir);
    errno = err;
    GRAPHTIER_THROW_ERRNO(temp_dir, ": cannot create temporary directory: ", std::strerror(errno));
  }
  return temp_dir;
}

/// The rename protocol of StagedDirectory::commit.
void publish_staging_directory(const std::string& temp_dir, const std::string& dir, bool& committed,
                               std::string_view swapped_point) {
  if (path_exists(dir)) {
    {
      const auto held = lock_interrupt_registry();
      if (::renameat2(AT_FDCWD, temp_dir.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) {
        GRAPHTIER_THROW_ERRNO("cannot replace ", dir, " with ", temp_dir, ": ", std::strerror(errno));
      }
      committed = true;
      register_temporary(temp_dir, "", held);  // now the previous tree: no output is lost with it
    }
    park_point(swapped_point);  // test hook: the new tree in place, the old one not yet removed
    remove_tree(temp_dir);
    unregister_temporary(temp_dir);
  } else {
    const auto held = lock_interrupt_registry();
    if (::rename(temp_dir.c_str(), dir.c_str()) != 0) {
      GRAPHTIER_THROW_ERRNO("cannot rename ", temp_dir, " to ", dir, ": ", std::strerror(errno));
    }
    committed = true;
    unregister_temporary(temp_dir, held);
  }
  fsync_directory(parent_directory(dir));
}

}  // namespace

void remove_tree(const std::string& path) noexcept {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

StagedDirectory::StagedDirectory(std::string dir, bool overwrite, std::string_view marker, std::string_view what)
    : dir_(checked_target(std::move(dir), overwrite, marker, what)), temp_dir_(make_staging_directory(dir_)) {}

StagedDirectory::~StagedDirectory() {
  if (!committed_) remove_tree(temp_dir_);
  unregister_temporary(temp_dir_);
}

int64_t StagedDirectory::free_bytes() const { return free_space_bytes(temp_dir_); }

void StagedDirectory::commit(std::string_view staged_point, std::string_view swapped_point) {
  GRAPHTIER_EXPECTS(!committed_, InvalidArgument, dir_, " is already committed");
  fsync_directory(temp_dir_);
  park_point(staged_point);
  publish_staging_directory(temp_dir_, dir_, committed_, swapped_point);
}

}  // namespace graphtier::graph
