// TVM's history as source trees and builds, for bisecting (bundles/bisect.h): git run with
// argument vectors through host::run_process (never a shell string), a commit materialised as a
// source tree with its submodules' commits taken from mirrors, and the build script run on it.
// Requires: git and tar on PATH. Ensures: the repositories are only read (git archive, ls-tree,
// rev-list); every failure is an exception of one of two kinds, bad input (a directory that is no
// repository, an unknown revision) or a failure of the environment (git or tar failing, a mirror
// missing or lacking a commit), so the command can tell exit 2 from exit 3. A tree that does not
// build is no failure here but an outcome (BuildOutcome).
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/process.h"

namespace aotfuzz::tvm {

/// Bad input: no such directory, not a git repository, an unknown revision.
class HistoryInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The environment failed: git or tar cannot run or fail, a needed submodule has no mirror.
class HistoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A submodule's commit as its superproject records it (a gitlink, mode 160000).
struct Gitlink {
  std::string path;    ///< e.g. "3rdparty/dlpack"
  std::string commit;  ///< full hash
};

/// A git repository (bare or with a work tree), read through git itself.
class GitRepo {
 public:
  /// Throws HistoryInputError unless `dir` is the top of a repository (its work tree or its
  /// git directory); HistoryError when git cannot run.
  explicit GitRepo(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const { return dir_; }
  /// The repository's git directory (where `modules/` of initialised submodules live).
  const std::filesystem::path& git_dir() const { return git_dir_; }

  /// The full hash of the commit `rev` names; HistoryInputError for an unknown revision.
  std::string resolve(const std::string& rev) const;
  /// Whether commit `a` is an ancestor of (or equal to) commit `b`.
  bool is_ancestor(const std::string& a, const std::string& b) const;
  /// `git rev-list --reverse --ancestry-path OLDER..NEWER [-- PATHS]`: oldest first.
  std::vector<std::string> ancestry_path(const std::string& older, const std::string& newer,
                                         const std::vector<std::string>& paths) const;
  /// The subject line of a commit.
  std::string subject(const std::string& commit) const;
  /// The gitlinks directly under `dir` at `commit` (`git ls-tree COMMIT DIR/`).
  std::vector<Gitlink> gitlinks(const std::string& commit, const std::string& dir) const;
  /// `git archive` of `commit` through the tar file `scratch`, unpacked into `into` (created).
  /// HistoryError when the commit is not in this repository or tar fails.
  void extract(const std::string& commit, const std::filesystem::path& scratch,
               const std::filesystem::path& into) const;

 private:
  host::RunResult git(const std::vector<std::string>& args) const;
  std::string git_out(const std::vector<std::string>& args) const;
  std::filesystem::path dir_, git_dir_;
};

/// Where the submodules' mirrors are. A path given explicitly (`--submodule PATH=DIR`) wins;
/// otherwise the repository's own `modules/` (a checkout with initialised submodules), then the
/// known TVM submodules by name under each root: ROOT/<owner+name>/repo, ROOT/<owner+name>,
/// ROOT/<name>, ROOT/<name>.git (e.g. /work/.mirror/dmlc+dlpack/repo, ~/src/dlpack).
class SubmoduleMirrors {
 public:
  SubmoduleMirrors(std::vector<std::filesystem::path> roots,
                   std::map<std::string, std::filesystem::path> explicit_dirs,
                   std::filesystem::path superproject_git_dir = {});
  std::optional<std::filesystem::path> find(const std::string& path) const;
  /// Whether scripts/tvm/build.sh's CPU build needs the submodule at `path` (dlpack, dmlc-core
  /// and rang; not libbacktrace, vta-hw, cutlass, or ones this table does not know).
  static bool needed(const std::string& path);
  /// The directories searched for `path`, in order, for messages.
  std::vector<std::filesystem::path> searched(const std::string& path) const;

 private:
  std::vector<std::filesystem::path> roots_;
  std::map<std::string, std::filesystem::path> explicit_;
  std::filesystem::path modules_;
};

/// `PATH=DIR`; throws std::invalid_argument naming what is wrong.
std::pair<std::string, std::filesystem::path> parse_submodule_mirror(const std::string& text);

/// Materialises `commit` of `tvm` as the source tree `into`: `git archive` of the commit, plus
/// for each gitlink under 3rdparty/ the `git archive` of its commit from its mirror, through
/// tar files in `scratch_dir`. A submodule without a mirror that the build does not need is left
/// out, with a note in the result; one it needs is a HistoryError naming `--submodule`.
std::vector<std::string> materialise_tvm_tree(const GitRepo& tvm, const std::string& commit,
                                              const SubmoduleMirrors& mirrors,
                                              const std::filesystem::path& scratch_dir,
                                              const std::filesystem::path& into);

/// How to run the build script: `SCRIPT SRC [--release-patches] [--patch F]... [--jobs N]`.
struct BuildRequest {
  std::filesystem::path script;
  std::vector<std::filesystem::path> patches;
  bool release_patches = false;
  std::optional<int> jobs;
  /// A stop request (Ctrl-C): the build's process group is killed.
  const std::atomic<bool>* cancel = nullptr;
};

/// What the build script made of a tree.
struct BuildOutcome {
  bool built = false;
  std::filesystem::path home;  ///< its last line of output, a TVM home with build/libtvm.so
  std::string detail;          ///< why it did not build: the exit and the last lines it printed
  bool cancelled = false;
};
/// Runs the build script on `source` with this process's whole environment (it needs HOME for
/// its cache, and the user's CCACHE_* and AOTFUZZ_TVM_CACHE). A script that cannot be started is
/// a HistoryError; one that fails, prints no home, or prints a home that is no TVM build gives
/// `built == false`.
BuildOutcome build_tvm(const BuildRequest& request, const std::filesystem::path& source);

/// The last `n` non-empty lines of `text`, joined by newlines.
std::string last_lines(const std::string& text, int n);

}  // namespace aotfuzz::tvm
