// RAII unique temporary directory (mkdtemp), removed recursively unless kept.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace aotfuzz::host {

/// The directory temporary files go under: $TMPDIR when set and non-empty, else /dev/shm when
/// it is a memory file system aotfuzz may write and run programs in with kMemoryTempMinFree
/// bytes free (usable_memory_temp_dir), else /tmp.
std::filesystem::path temp_root();

/// Whether `dir` is a tmpfs, writable and searchable by this process, mounted neither read-only
/// nor noexec (the compiled test programs run from the temporary directories), with at least
/// `min_free_bytes` free.
bool usable_memory_temp_dir(const std::filesystem::path& dir, std::uint64_t min_free_bytes);
inline constexpr std::uint64_t kMemoryTempMinFree = std::uint64_t{512} << 20;

/// A fresh directory `<temp_root()>/<prefix>-<pid>-XXXXXX`, created mode 0700 and removed with
/// all its contents on destruction unless keep() was called. Movable, not copyable.
class TempDir {
 public:
  /// Creates the directory; throws std::system_error when it cannot be created.
  explicit TempDir(std::string_view prefix = "aotfuzz");
  ~TempDir();

  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// The directory's absolute path.
  const std::filesystem::path& path() const { return path_; }
  /// `path() / name`, for files placed inside.
  std::filesystem::path file(std::string_view name) const { return path_ / name; }

  /// Leave the directory on disk after destruction (for inspecting a finding), and out of every
  /// later remove_stale_temp_dirs: a marker file kKeepMarker inside says it was asked for.
  void keep();
  static constexpr const char* kKeepMarker = ".aotfuzz-kept";
  bool kept() const { return keep_; }

  /// Removes the directory now (unless kept); errors are ignored, as in the destructor.
  void remove() noexcept;

  /// Takes charge of an existing directory (removed on destruction like one made here).
  static TempDir adopt(std::filesystem::path path);

 private:
  struct AdoptTag {};
  explicit TempDir(AdoptTag) {}
  std::filesystem::path path_;
  bool keep_ = false;
};

/// A process's own temporary root: a fresh TempDir `<temp_root()>/<prefix>-<pid>-XXXXXX` made
/// the TMPDIR of this process and so of its children (compilers, runners, probes), until
/// destruction restores TMPDIR and removes the root with everything in it. What dead processes
/// left in the old root is removed first; a run killed with SIGKILL leaves one directory, which
/// the next run removes. When the root cannot be made nothing changes: temporary files go where
/// they went before, and fail there as they would have. setenv is not thread-safe: make one in
/// a command's main thread before it starts others.
class ScopedTempRoot {
 public:
  explicit ScopedTempRoot(std::string_view prefix = "aotfuzz-root");
  ~ScopedTempRoot();
  ScopedTempRoot(const ScopedTempRoot&) = delete;
  ScopedTempRoot& operator=(const ScopedTempRoot&) = delete;

  /// The root, or nullptr when it could not be made.
  const TempDir* root() const { return root_ ? &*root_ : nullptr; }

 private:
  std::optional<std::string> old_tmpdir_;
  std::optional<TempDir> root_;
};

/// The pid in a temporary directory's name `<prefix>...-<pid>-XXXXXX` (a TempDir's, or a bundle
/// being built, `.tmp-<pid>-XXXXXX`), else nullopt.
std::optional<pid_t> temp_dir_owner(std::string_view name, std::string_view prefix = "aotfuzz");

/// Removes the directories under `dir` named as temp_dir_owner reads that processes no longer
/// running left behind (killed with SIGKILL, or a second Ctrl-C): the user's own only, never a
/// live process's, and never one kept with TempDir::keep(). Returns how many were removed.
/// Campaigns call it when they start, for temp_root() and for their findings directory.
int remove_stale_temp_dirs(const std::filesystem::path& dir = temp_root(),
                           std::string_view prefix = "aotfuzz");

}  // namespace aotfuzz::host
