// Shell words of replay lines (host/shell_words.h): a pasted replay line reads back as written.
#include "host/shell_words.h"

#include <gtest/gtest.h>

namespace aotfuzz::host {
namespace {

TEST(ShellQuote, LeavesPlainWordsAndQuotesEverythingElse) {
  EXPECT_EQ(shell_quote("my_mod"), "my_mod");
  EXPECT_EQ(shell_quote("/a/b-c.relay"), "/a/b-c.relay");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("$(rm -rf x)"), "'$(rm -rf x)'");
}

TEST(ShellQuote, APathIsQuotedAndNeverReadsAsAnOption) {
  EXPECT_EQ(shell_quote_path("findings/a b'c/reduced.relay"), "'findings/a b'\\''c/reduced.relay'");
  EXPECT_EQ(shell_quote_path("-x.relay"), "./-x.relay");
  EXPECT_EQ(shell_quote_path("--help"), "./--help");
  EXPECT_EQ(shell_quote_path("/tmp/x.relay"), "/tmp/x.relay");
}

}  // namespace
}  // namespace aotfuzz::host
