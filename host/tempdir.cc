// RAII temporary directories: mkdtemp on creation, recursive removal on destruction.
#include "host/tempdir.h"

#include <stdlib.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace aotfuzz::host {

bool usable_memory_temp_dir(const std::filesystem::path& dir, std::uint64_t min_free_bytes) {
  struct statfs fs {};
  if (::statfs(dir.c_str(), &fs) != 0 || fs.f_type != TMPFS_MAGIC) return false;
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) return false;
  if ((vfs.f_flag & (ST_RDONLY | ST_NOEXEC)) != 0) return false;
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return false;
  const auto free_bytes = static_cast<unsigned __int128>(vfs.f_bavail) * vfs.f_frsize;
  return free_bytes >= min_free_bytes;
}

std::filesystem::path temp_root() {
  const char* env = ::getenv("TMPDIR");
  if (env != nullptr && env[0] != '\0') return std::filesystem::path(env);
  // A case writes, compiles, links and runs a handful of small files, and TVM's export writes and
  // reads back a tar of them: on a disk file system the kernel's part in that is a large share of
  // a TVM case (docs/fuzzing.md).
  if (usable_memory_temp_dir("/dev/shm", kMemoryTempMinFree)) return "/dev/shm";
  return std::filesystem::path("/tmp");
}

TempDir::TempDir(std::string_view prefix) {
  // The pid in the name lets a later run tell a dead process's leftovers from a live one's.
  std::string templ =
      (temp_root() / (std::string(prefix) + "-" + std::to_string(::getpid()) + "-XXXXXX")).string();
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp(" + templ + ")");
  }
  path_ = std::filesystem::absolute(std::filesystem::path(buf.data()));
}

TempDir TempDir::adopt(std::filesystem::path path) {
  TempDir t(AdoptTag{});
  t.path_ = std::move(path);
  return t;
}

TempDir::~TempDir() { remove(); }

TempDir::TempDir(TempDir&& other) noexcept
    : path_(std::exchange(other.path_, {})), keep_(other.keep_) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, {});
    keep_ = other.keep_;
  }
  return *this;
}

void TempDir::keep() {
  keep_ = true;
  if (path_.empty()) return;
  // Best effort: a directory that cannot take the marker is still kept by this process.
  if (FILE* f = std::fopen((path_ / kKeepMarker).c_str(), "w")) std::fclose(f);
}

void TempDir::remove() noexcept {
  if (path_.empty() || keep_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  if (ec) {
    // A child may have left a directory without write permission: restore it and retry once.
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    for (auto it = std::filesystem::recursive_directory_iterator(
             path_, std::filesystem::directory_options::skip_permission_denied, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code ignored;
      if (it->is_directory(ignored)) {
        std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, ignored);
      }
    }
    std::filesystem::remove_all(path_, ec);
  }
  path_.clear();
}

ScopedTempRoot::ScopedTempRoot(std::string_view prefix) {
  remove_stale_temp_dirs();
  try {
    root_.emplace(prefix);
  } catch (const std::system_error&) {
    return;
  }
  if (const char* old = ::getenv("TMPDIR"); old != nullptr) old_tmpdir_ = old;
  if (::setenv("TMPDIR", root_->path().c_str(), 1) != 0) root_.reset();
}

ScopedTempRoot::~ScopedTempRoot() {
  if (!root_) return;
  if (old_tmpdir_) {
    ::setenv("TMPDIR", old_tmpdir_->c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  root_->remove();
}

std::optional<pid_t> temp_dir_owner(std::string_view name, std::string_view prefix) {
  // <prefix>...-<pid>-XXXXXX
  if (name.rfind(prefix, 0) != 0) return std::nullopt;
  const std::size_t last = name.rfind('-');
  if (last == std::string_view::npos || name.size() - last - 1 != 6 || last == 0) {
    return std::nullopt;
  }
  const std::size_t before = name.rfind('-', last - 1);
  if (before == std::string_view::npos || before + 1 >= last) return std::nullopt;
  pid_t pid = 0;
  const auto digits = name.substr(before + 1, last - before - 1);
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || pid <= 0) return std::nullopt;
  return pid;
}

namespace {

// Whether `pid` is a process that still runs (or one we may not judge). A zombie has ended: where
// no init reaps orphans (some containers), a killed campaign stays one indefinitely.
bool process_runs(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != 'Z';
}

}  // namespace

int remove_stale_temp_dirs(const std::filesystem::path& dir, std::string_view prefix) {
  int removed = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto owner = temp_dir_owner(name, prefix);
    if (!owner || *owner == ::getpid()) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
      continue;
    }
    if (process_runs(*owner)) continue;
    if (std::filesystem::exists(it->path() / TempDir::kKeepMarker, ec)) continue;
    TempDir leftover = TempDir::adopt(it->path());
    leftover.remove();
    ++removed;
  }
  return removed;
}

}  // namespace aotfuzz::host
