// The command-line tests' way of starting aotfuzz.
#include "tests/cli/run_aotfuzz.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "host/tempdir.h"

namespace aotfuzz::cli::test {

host::RunResult run_aotfuzz(const std::vector<std::string>& args, int timeout_s,
                              const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv = {AOTFUZZ_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  host::RunLimits limits;
  limits.timeout = std::chrono::seconds(timeout_s);
  limits.address_space = 0;  // the harness with its threads, not a generated test program
  limits.working_dir = AOTFUZZ_SOURCE_DIR;
  for (const auto& [name, value] : env) limits.env[name] = value;
  return host::run_process(argv, limits);
}

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Spawned spawn_aotfuzz(const std::vector<std::string>& args, const std::string& stdin_file,
                      bool closed_stdout) {
  host::TempDir dir("aotfuzz-cli-test");
  const std::string out_path = (dir.path() / "stdout").string();
  const std::string err_path = (dir.path() / "stderr").string();
  const std::string in_path = stdin_file.empty() ? "/dev/null" : stdin_file;
  std::vector<std::string> strings = {AOTFUZZ_BINARY};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  int pipe_fds[2] = {-1, -1};
  if (closed_stdout && ::pipe(pipe_fds) != 0) return {-1, "", "pipe failed"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    const int in = ::open(in_path.c_str(), O_RDONLY);
    const int out =
        closed_stdout ? pipe_fds[1] : ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) ::_exit(126);
    if (closed_stdout) ::close(pipe_fds[0]);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::signal(SIGPIPE, SIG_DFL);
    if (::chdir(AOTFUZZ_SOURCE_DIR) != 0) ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  if (closed_stdout) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
  }
  Spawned result;
  if (pid < 0) return {-1, "", "fork failed"};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  for (;;) {
    const pid_t done = ::waitpid(pid, &result.status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &result.status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  return result;
}

void expect_one_line_usage_error(const std::vector<std::string>& args,
                                 const std::string& mentions) {
  std::string shown;
  for (const auto& a : args) shown += " " + a;
  SCOPED_TRACE("aotfuzz" + shown);
  // A refused flag returns at once; a budget flag that slipped through would run for a while.
  const host::RunResult r = run_aotfuzz(args, 30);
  EXPECT_EQ(r.kind, host::ExitKind::kExited) << r.describe();
  EXPECT_EQ(r.exit_code, 2) << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "");
  EXPECT_EQ(line_count(r.stderr_text), 1) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find(mentions), std::string::npos) << r.stderr_text;
}

int line_count(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  if (!text.empty() && text.back() != '\n') ++n;
  return n;
}

}  // namespace aotfuzz::cli::test
