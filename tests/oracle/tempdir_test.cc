// Tests of TempDir: unique, under $TMPDIR, removed recursively unless kept, movable.
#include <gtest/gtest.h>

#include <filesystem>

#include "oracle/tempdir.h"
#include "tests/support/files.h"
#include "tests/support/processes.h"

namespace aotfuzz::oracle {
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

TEST(TempDir, AnUnusableTmpdirThrows) {
  test_support::ScopedTmpdir tmp;
  ::setenv("TMPDIR", "/nonexistent/aotfuzz/tmp", 1);
  EXPECT_THROW(TempDir(), std::system_error);
}

}  // namespace
}  // namespace aotfuzz::oracle
