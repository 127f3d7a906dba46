#include "tests/support/processes.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace aotfuzz::test_support {

namespace {

constexpr const char* kChildSource = R"(#define _GNU_SOURCE
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
  if (strcmp(mode, "touch") == 0) {
    /* Allocates and touches argv[2] MiB, one MiB at a time, then sleeps. */
    long i, mb = atol(argv[2]);
    for (i = 0; i < mb; ++i) {
      char* p = (char*)malloc((size_t)1 << 20);
      if (p == NULL) return 7;
      memset(p, 1, (size_t)1 << 20);
    }
    for (;;) sleep(1);
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

}  // namespace

const std::optional<host::Toolchain>& toolchain_of(host::CompilerKind kind) {
  static const std::optional<host::Toolchain> kTcc =
      host::find_toolchain(host::CompilerKind::kTcc);
  static const std::optional<host::Toolchain> kGcc =
      host::find_toolchain(host::CompilerKind::kGcc);
  static const std::optional<host::Toolchain> kClang =
      host::find_toolchain(host::CompilerKind::kClang);
  switch (kind) {
    case host::CompilerKind::kTcc:
      return kTcc;
    case host::CompilerKind::kGcc:
      return kGcc;
    case host::CompilerKind::kClang:
      break;
  }
  return kClang;
}

host::RunResult python(const std::vector<std::string>& args) {
  auto exe = host::find_in_path("python3");
  if (!exe) {
    host::RunResult r;
    r.message = "python3 is not installed (scripts/setup.sh installs it)";
    return r;
  }
  std::vector<std::string> argv{*exe};
  argv.insert(argv.end(), args.begin(), args.end());
  host::RunLimits limits;
  limits.timeout = std::chrono::seconds(60);
  limits.address_space = 0;
  return host::run_process(argv, limits);
}

const std::string& child_program() {
  static host::TempDir dir("aotfuzz-test-child");
  static std::string exe = [] {
    auto tc = host::default_toolchain();
    if (!tc) {
      ADD_FAILURE() << "no C compiler for the child program";
      return std::string();
    }
    std::ofstream(dir.file("child.c")) << kChildSource;
    std::string out = dir.file("child").string();
    host::CompileResult r = host::compile(*tc, {dir.file("child.c").string()}, out);
    if (!r.ok()) {
      ADD_FAILURE() << "cannot build the child program: " << r.message << "\n" << r.diagnostics;
      return std::string();
    }
    return out;
  }();
  return exe;
}

ScopedTmpdir::ScopedTmpdir() : root_("aotfuzz-test-tmpdir") {
  if (root_.root() == nullptr) throw std::runtime_error("cannot make a temporary directory");
}

}  // namespace aotfuzz::test_support
