// Shared helpers for the oracle tests: compilers, a multi-purpose child program, temp dirs.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "oracle/tempdir.h"
#include "oracle/toolchain.h"

namespace aotfuzz::oracle::testing {

/// The compiler of `kind`, looked up once per test binary.
inline const std::optional<Toolchain>& toolchain_of(CompilerKind kind) {
  static const std::optional<Toolchain> kTcc = find_toolchain(CompilerKind::kTcc);
  static const std::optional<Toolchain> kGcc = find_toolchain(CompilerKind::kGcc);
  static const std::optional<Toolchain> kClang = find_toolchain(CompilerKind::kClang);
  switch (kind) {
    case CompilerKind::kTcc:
      return kTcc;
    case CompilerKind::kGcc:
      return kGcc;
    case CompilerKind::kClang:
      break;
  }
  return kClang;
}

inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

inline std::size_t count_entries(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

/// A C program whose behaviour is chosen by argv[1]; the process tests run it.
inline constexpr const char* kChildSource = R"(#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

extern char** environ;

static void print_limit(const char* name, int resource) {
  struct rlimit lim;
  if (getrlimit(resource, &lim) != 0) {
    printf("%s error\n", name);
  } else if (lim.rlim_cur == RLIM_INFINITY) {
    printf("%s unlimited\n", name);
  } else {
    printf("%s %llu\n", name, (unsigned long long)lim.rlim_cur);
  }
}

static char flood_buf[1 << 20];

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "exit") == 0) return atoi(argv[2]);
  if (strcmp(mode, "segv") == 0) {
    *(volatile int*)0 = 1;
    return 0;
  }
  if (strcmp(mode, "abort") == 0) abort();
  if (strcmp(mode, "spin") == 0) {
    volatile unsigned long n = 0;
    for (;;) ++n;
  }
  if (strcmp(mode, "flood") == 0) {
    long i, mb = atol(argv[2]);
    memset(flood_buf, 'x', sizeof flood_buf);
    for (i = 0; i < mb; ++i) fwrite(flood_buf, 1, sizeof flood_buf, stdout);
    fflush(stdout);
    fputs("flooded\n", stderr);
    return 0;
  }
  if (strcmp(mode, "fork-sleep") == 0 || strcmp(mode, "fork-exit") == 0) {
    pid_t pid = fork();
    if (pid < 0) return 9;
    if (pid == 0) {
      for (;;) sleep(1);
    }
    printf("%d\n", (int)pid);
    fflush(stdout);
    if (strcmp(mode, "fork-exit") == 0) return 0;
    for (;;) sleep(1);
  }
  if (strcmp(mode, "malloc") == 0) {
    size_t mb = (size_t)atol(argv[2]);
    void* p = malloc(mb << 20);
    return p != NULL ? 0 : 7;
  }
  if (strcmp(mode, "write-file") == 0) {
    long i, kb = atol(argv[3]);
    char buf[1024];
    FILE* f = fopen(argv[2], "wb");
    if (f == NULL) return 8;
    memset(buf, 'y', sizeof buf);
    for (i = 0; i < kb; ++i) fwrite(buf, 1, sizeof buf, f);
    fclose(f);
    return 0;
  }
  if (strcmp(mode, "pwd") == 0) {
    char buf[4096];
    if (getcwd(buf, sizeof buf) == NULL) return 8;
    puts(buf);
    return 0;
  }
  if (strcmp(mode, "env") == 0) {
    char** e;
    for (e = environ; *e != NULL; ++e) puts(*e);
    return 0;
  }
  if (strcmp(mode, "stdin") == 0) {
    long n = 0;
    while (getchar() != EOF) ++n;
    printf("%ld\n", n);
    return 0;
  }
  if (strcmp(mode, "limits") == 0) {
    print_limit("core", RLIMIT_CORE);
    print_limit("cpu", RLIMIT_CPU);
    print_limit("as", RLIMIT_AS);
    print_limit("fsize", RLIMIT_FSIZE);
    print_limit("nproc", RLIMIT_NPROC);
    return 0;
  }
  if (strcmp(mode, "sigpipe") == 0) {
    struct sigaction old;
    sigaction(SIGPIPE, NULL, &old);
    puts(old.sa_handler == SIG_DFL ? "default" : "not default");
    return 0;
  }
  if (strcmp(mode, "streams") == 0) {
    fputs("to stderr\n", stderr);
    puts("to stdout");
    return 0;
  }
  return 100;
}
)";

/// kChildSource compiled once per test binary with the default compiler; its directory lives
/// until the binary exits.
inline const std::string& child_program() {
  static TempDir dir("aotfuzz-test-child");
  static std::string exe = [] {
    auto tc = default_toolchain();
    if (!tc) return std::string();
    std::ofstream(dir.file("child.c")) << kChildSource;
    std::string out = dir.file("child").string();
    CompileResult r = compile(*tc, {dir.file("child.c").string()}, out);
    if (!r.ok()) {
      ADD_FAILURE() << "cannot build the child program: " << r.message << "\n" << r.diagnostics;
      return std::string();
    }
    return out;
  }();
  return exe;
}

/// Points $TMPDIR at a fresh, empty directory for the lifetime of the object.
class ScopedTmpdir {
 public:
  ScopedTmpdir() : dir_("aotfuzz-test-tmpdir") {
    const char* old = std::getenv("TMPDIR");
    if (old != nullptr) old_ = old;
    ::setenv("TMPDIR", dir_.path().c_str(), 1);
  }
  ~ScopedTmpdir() {
    if (old_) {
      ::setenv("TMPDIR", old_->c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
  }
  const std::filesystem::path& path() const { return dir_.path(); }

 private:
  TempDir dir_;
  std::optional<std::string> old_;
};

}  // namespace aotfuzz::oracle::testing
