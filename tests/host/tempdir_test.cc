// Tests of TempDir: unique, under $TMPDIR, removed recursively unless kept, movable.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>

#include "host/process.h"
#include "host/tempdir.h"
#include "tests/support/files.h"
#include "tests/support/processes.h"

namespace aotfuzz::host {
namespace {

namespace fs = std::filesystem;
using test_support::count_entries;
using test_support::write_file;

TEST(TempDir, IsCreatedUniquelyUnderTmpdirWithThePrefix) {
  test_support::ScopedTmpdir tmp;
  EXPECT_EQ(temp_root(), tmp.path());
  TempDir a("case");
  TempDir b("case");
  EXPECT_NE(a.path(), b.path());
  EXPECT_TRUE(fs::is_directory(a.path()));
  EXPECT_EQ(a.path().parent_path(), fs::absolute(tmp.path()));
  EXPECT_EQ(a.path().filename().string().rfind("case-", 0), 0u) << a.path();
  EXPECT_EQ(count_entries(tmp.path()), 2u);
}

TEST(TempDir, IsRemovedWithItsContentsOnDestruction) {
  test_support::ScopedTmpdir tmp;
  fs::path where;
  {
    TempDir dir;
    where = dir.path();
    fs::create_directories(dir.file("a") / "b");
    write_file(dir.file("a") / "b" / "c.txt", "x");
    // A read-only subdirectory still goes.
    fs::permissions(dir.file("a") / "b", fs::perms::owner_read | fs::perms::owner_exec);
  }
  EXPECT_FALSE(fs::exists(where));
  EXPECT_EQ(count_entries(tmp.path()), 0u);
}

TEST(TempDir, KeepLeavesItOnDisk) {
  test_support::ScopedTmpdir tmp;
  fs::path where;
  {
    TempDir dir;
    dir.keep();
    EXPECT_TRUE(dir.kept());
    where = dir.path();
  }
  EXPECT_TRUE(fs::is_directory(where));
  fs::remove_all(where);
}

TEST(TempDir, MovingTransfersOwnership) {
  test_support::ScopedTmpdir tmp;
  TempDir a;
  fs::path where = a.path();
  TempDir b(std::move(a));
  EXPECT_EQ(b.path(), where);
  TempDir c;
  fs::path other = c.path();
  c = std::move(b);
  EXPECT_FALSE(fs::exists(other)) << "the overwritten directory is removed";
  EXPECT_TRUE(fs::exists(where));
  c.remove();
  EXPECT_FALSE(fs::exists(where));
}

TEST(TempDir, NamesCarryTheOwnersPid) {
  test_support::ScopedTmpdir tmp;
  TempDir a("aotfuzz-case");
  EXPECT_EQ(temp_dir_owner(a.path().filename().string()), ::getpid()) << a.path();
  EXPECT_FALSE(temp_dir_owner("aotfuzz-case-XXXXXX").has_value());
  EXPECT_FALSE(temp_dir_owner("other-12-abcdef").has_value());
  EXPECT_FALSE(temp_dir_owner("aotfuzz-case-12-abc").has_value());
}

TEST(TempDir, LeftoversOfDeadRunsAreRemovedAndLiveOnesKept) {
  test_support::ScopedTmpdir tmp;
  // A pid above the kernel's pid_max: never a running process.
  const fs::path dead = tmp.path() / "aotfuzz-case-999999999-abcdef";
  const fs::path dead_cc = tmp.path() / "aotfuzz-cc-999999998-ghijkl";
  fs::create_directories(dead / "sub");
  write_file((dead / "sub" / "main.c").string(), "int main(void) { return 0; }\n");
  fs::create_directories(dead_cc);
  TempDir live("aotfuzz-case");
  const fs::path alien = tmp.path() / "someone-else-999999999-abcdef";
  fs::create_directories(alien);
  EXPECT_EQ(remove_stale_temp_dirs(), 2);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_FALSE(fs::exists(dead_cc));
  EXPECT_TRUE(fs::exists(live.path()));
  EXPECT_TRUE(fs::exists(alien));
  EXPECT_EQ(remove_stale_temp_dirs(), 0);
}

TEST(TempDir, AKeptDirectoryOfADeadRunIsNeverSwept) {
  test_support::ScopedTmpdir tmp;
  fs::path kept;
  {
    TempDir dir("aotfuzz-case");
    dir.keep();
    write_file(dir.file("main.c").string(), "int main(void) { return 0; }\n");
    kept = dir.path();
  }
  // The same directory as a run that has since ended would have left it (`run --keep`).
  const fs::path dead = tmp.path() / "aotfuzz-case-999999999-kepttt";
  fs::rename(kept, dead);
  EXPECT_EQ(remove_stale_temp_dirs(), 0);
  EXPECT_TRUE(fs::exists(dead / "main.c"));
}

TEST(TempDir, LeftoversOfAZombieAreRemoved) {
  test_support::ScopedTmpdir tmp;
  // An ended child not yet reaped: what a killed campaign stays where no init reaps orphans.
  const pid_t zombie = ::fork();
  ASSERT_GE(zombie, 0);
  if (zombie == 0) ::_exit(0);
  // Until it has ended, its /proc entry says running or sleeping.
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(zombie), &info, WEXITED | WNOWAIT), 0);
  const fs::path left = tmp.path() / ("aotfuzz-case-" + std::to_string(zombie) + "-abcdef");
  fs::create_directories(left);
  EXPECT_EQ(remove_stale_temp_dirs(), 1);
  EXPECT_FALSE(fs::exists(left));
  ::waitpid(zombie, nullptr, 0);
}

TEST(ScopedTempRoot, BecomesTmpdirAndIsRemovedWithWhatWasPutInIt) {
  test_support::ScopedTmpdir tmp;
  fs::path root;
  {
    ScopedTempRoot scoped;
    ASSERT_NE(scoped.root(), nullptr);
    root = scoped.root()->path();
    EXPECT_EQ(root.parent_path(), tmp.path());
    EXPECT_EQ(temp_root(), root);
    TempDir inner("aotfuzz-case");
    inner.keep();
    write_file(inner.file("main.c").string(), "int main(void) { return 0; }\n");
    EXPECT_EQ(inner.path().parent_path(), root);
    // Children see it as theirs.
    EXPECT_EQ(RunLimits::minimal_environment().at("TMPDIR"), root.string());
  }
  EXPECT_FALSE(fs::exists(root));
  EXPECT_EQ(temp_root(), tmp.path());
  EXPECT_EQ(count_entries(tmp.path()), 0);
}

TEST(ScopedTempRoot, RemovesTheRootsOfDeadRunsAndKeepsLiveOnes) {
  test_support::ScopedTmpdir tmp;
  const fs::path dead = tmp.path() / "aotfuzz-root-999999999-abcdef";
  fs::create_directories(dead / "aotfuzz-case-999999999-ghijkl");
  TempDir live("aotfuzz-root");
  ScopedTempRoot scoped;
  ASSERT_NE(scoped.root(), nullptr);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live.path()));
}

TEST(ScopedTempRoot, ARootThatCannotBeMadeChangesNothing) {
  test_support::ScopedTmpdir tmp;
  const std::string file = (tmp.path() / "a-file").string();
  write_file(file, "not a directory\n");
  ::setenv("TMPDIR", file.c_str(), 1);
  {
    ScopedTempRoot scoped;
    EXPECT_EQ(scoped.root(), nullptr);
    EXPECT_EQ(temp_root(), fs::path(file));
  }
  EXPECT_EQ(temp_root(), fs::path(file));
}

TEST(TempRoot, WithoutTmpdirIsDevShmWhenThatIsAUsableMemoryFileSystemElseTmp) {
  test_support::ScopedTmpdir tmp;
  // The scope puts TMPDIR back when it ends.
  ::unsetenv("TMPDIR");
  const fs::path expected =
      usable_memory_temp_dir("/dev/shm", kMemoryTempMinFree) ? "/dev/shm" : "/tmp";
  EXPECT_EQ(temp_root(), expected);
  ::setenv("TMPDIR", "", 1);
  EXPECT_EQ(temp_root(), expected);
}

TEST(TempRoot, OnlyAWritableTmpfsWithRoomIsAMemoryTemporaryDirectory) {
  test_support::ScopedTmpdir tmp;
  EXPECT_FALSE(usable_memory_temp_dir("/proc", 0));
  EXPECT_FALSE(usable_memory_temp_dir("/nonexistent/aotfuzz", 0));
  EXPECT_FALSE(usable_memory_temp_dir("/dev/shm", UINT64_MAX));
  // The test's own TMPDIR is wherever the machine keeps it; set, it is the root whatever it is.
  EXPECT_EQ(temp_root(), tmp.path());
}

TEST(TempDir, AnUnusableTmpdirThrows) {
  test_support::ScopedTmpdir tmp;
  ::setenv("TMPDIR", "/nonexistent/aotfuzz/tmp", 1);
  EXPECT_THROW(TempDir(), std::system_error);
}

}  // namespace
}  // namespace aotfuzz::host
