// The TVM driver process: spawn, line protocol, deadlines, restart.
#include "tvm/driver.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>

#include "host/process.h"
#include "host/toolchain.h"
#include "ir/expr.h"
#include "ir/printer.h"
#include "ir/type.h"
#include "tvm/driver_py.h"

namespace aotfuzz::tvm {
namespace {

using Clock = std::chrono::steady_clock;

std::string signal_text(int sig) {
  const char* name = ::sigabbrev_np(sig);
  return name != nullptr ? std::string("SIG") + name : "signal " + std::to_string(sig);
}

std::string default_python() {
  if (const char* env = std::getenv("AOTFUZZ_TVM_PYTHON"); env != nullptr && *env != '\0') {
    return env;
  }
  if (::access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  return host::find_in_path("python3").value_or("python3");
}

// `text` without TVM's declarations of the placeholders, which its printer puts first in a
// function (`free_var %aotfuzz_const_0;`).
std::string without_placeholder_declarations(const std::string& text, const std::string& name) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string_view line(text.data() + at, end - at);
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line.substr(first).rfind("free_var " + name, 0) != 0) {
      out.append(line);
    }
    at = end;
  }
  return out;
}

// The text form of `constant` ({"shape", "dtype", "values"}), or nullopt when it is none.
std::optional<std::string> constant_text(const nlohmann::json& constant) {
  const auto dtype = ir::parse_dtype(constant.value("dtype", ""));
  if (!dtype) return std::nullopt;
  try {
    return ir::print_expr(ir::ConstantNode::make(
        ir::TypeNode::tensor(constant.value("shape", std::vector<std::int64_t>{}), *dtype),
        constant.value("values", std::vector<std::int64_t>{})));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::string with_constants(const std::string& input, const nlohmann::json& constants) {
  static const std::string kPlaceholder = "%aotfuzz_const_";
  const std::string text = without_placeholder_declarations(input, kPlaceholder);
  // One TVM constant used twice is one node: each function binds each constant it uses once, in
  // a statement after its opening line, and its uses keep the placeholder's name. (Writing the
  // constant at every use would make equal twins of one node, and a comparison that sees them.)
  std::string out;
  std::size_t function_start = std::string::npos;  // where a function's bindings go in `out`
  std::string bindings;
  std::vector<bool> bound(constants.size(), false);
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string_view line(text.data() + at, end - at);
    at = end;
    std::string_view trimmed = line;
    while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back()))) {
      trimmed.remove_suffix(1);
    }
    if (function_start == std::string::npos && line.rfind("def @", 0) == 0 &&
        !trimmed.empty() && trimmed.back() == '{') {
      out.append(line);
      function_start = out.size();
      bindings.clear();
      bound.assign(constants.size(), false);
      continue;
    }
    if (function_start != std::string::npos && trimmed == "}") {
      out.insert(function_start, bindings);
      function_start = std::string::npos;
      out.append(line);
      continue;
    }
    for (std::size_t hit = 0; function_start != std::string::npos &&
                              (hit = line.find(kPlaceholder, hit)) != std::string_view::npos;) {
      const std::size_t digits = hit + kPlaceholder.size();
      std::size_t stop = digits;
      while (stop < line.size() && std::isdigit(static_cast<unsigned char>(line[stop]))) ++stop;
      hit = stop;
      const bool ends_name =
          stop == line.size() ||
          !(std::isalnum(static_cast<unsigned char>(line[stop])) || line[stop] == '_');
      if (!ends_name || stop == digits || stop - digits > 6) continue;
      const std::size_t k = std::stoul(std::string(line.substr(digits, stop - digits)));
      if (k >= constants.size() || bound[k]) continue;
      if (auto constant = constant_text(constants[k])) {
        bound[k] = true;
        bindings += "  " + kPlaceholder + std::to_string(k) + " = " + *constant + ";\n";
      }
    }
    out.append(line);
  }
  if (function_start != std::string::npos) out.insert(function_start, bindings);
  return out;
}


std::optional<std::string> tvm_home_from_env() {
  const char* env = std::getenv("AOTFUZZ_TVM_HOME");
  if (env == nullptr || *env == '\0') return std::nullopt;
  return std::string(env);
}

std::optional<std::string> tvm_home_problem(const std::string& home) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(home, ec)) return "TVM home " + home + " is not a directory";
  if (!fs::is_regular_file(fs::path(home) / "python" / "tvm" / "__init__.py", ec)) {
    return "TVM home " + home + " has no python/tvm/__init__.py";
  }
  if (!fs::exists(fs::path(home) / "build" / "libtvm.so", ec)) {
    return "TVM home " + home + " has no build/libtvm.so (build it with scripts/tvm/build.sh)";
  }
  return std::nullopt;
}

class TvmDriver::Impl {
 public:
  explicit Impl(TvmDriverOptions o) : opt_(std::move(o)) {
    if (opt_.python.empty()) opt_.python = default_python();
  }
  ~Impl() { stop(); }

  TvmBuild build(const nlohmann::json& request) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto t0 = Clock::now();
    TvmBuild out = build_locked(request);
    out.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
    return out;
  }

  std::string crt_dir() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pid_ <= 0) start();
    return crt_dir_;
  }

  std::string version() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pid_ <= 0) start();
    return version_;
  }

  std::string api() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pid_ <= 0) start();
    return api_;
  }

  int starts() const { return starts_; }

 private:
  // A line of the driver's stdout, or why there is none.
  struct Reply {
    std::optional<nlohmann::json> message;
    enum class Failure { kNone, kDied, kTimedOut, kGarbage } failure = Failure::kNone;
  };

  TvmBuild build_locked(const nlohmann::json& request) {
    TvmBuild out;
    if (pid_ <= 0 && !start()) {
      out.status = TvmBuild::Status::kUnavailable;
      out.message = start_error_;
      return out;
    }
    std::string line = request.dump() + "\n";
    stage_ = "merge";
    if (!write_all(in_fd_, line)) {
      // The driver died between requests; one fresh start, then the request once more.
      stop();
      if (!start() || !write_all(in_fd_, line)) {
        out.status = TvmBuild::Status::kUnavailable;
        out.message =
            start_error_.empty() ? "the TVM driver does not accept requests" : start_error_;
        return out;
      }
    }
    const auto deadline = Clock::now() + opt_.request_timeout;
    for (;;) {
      Reply reply = read_reply(deadline);
      if (reply.failure != Reply::Failure::kNone) {
        out.stage = stage_;
        out.status = reply.failure == Reply::Failure::kTimedOut ? TvmBuild::Status::kTimedOut
                                                                : TvmBuild::Status::kCrashed;
        out.message =
            reply.failure == Reply::Failure::kTimedOut
                ? "no answer from TVM after " + std::to_string(opt_.request_timeout.count()) + " ms"
                : ended_text();
        stop();
        return out;
      }
      const nlohmann::json& m = *reply.message;
      if (m.contains("progress")) {
        stage_ = m.value("progress", stage_);
        continue;
      }
      if (m.value("ok", false)) {
        out.status = TvmBuild::Status::kOk;
        out.partitioned = with_constants(m.value("partitioned", ""),
                                         m.value("constants", nlohmann::json::array()));
        for (const auto& f : m.at("files")) {
          out.files.emplace_back(f.at(0).get<std::string>(), f.at(1).get<std::string>());
        }
        const auto times = m.value("times", nlohmann::json::object());
        auto us = [&](const char* key) {
          return std::chrono::microseconds(static_cast<std::int64_t>(times.value(key, 0.0) * 1e6));
        };
        out.partition_time = us("partition_s");
        out.build_time = us("build_s");
        out.export_time = us("export_s");
        return out;
      }
      out.status = TvmBuild::Status::kTvmError;
      out.stage = m.value("stage", stage_);
      out.message = m.value("error", "");
      out.where = m.value("where", "");
      return out;
    }
  }

  bool start() {
    stop();
    start_error_.clear();
    if (auto problem = tvm_home_problem(opt_.home)) {
      start_error_ = *problem;
      return false;
    }
    // stdin is a socket so that writing to a dead driver fails with EPIPE (MSG_NOSIGNAL) instead
    // of raising SIGPIPE here.
    int in_pipe[2], out_pipe[2], err_pipe[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pipe) != 0) {
      return fail_start("socketpair");
    }
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
      close_pair(in_pipe);
      return fail_start("pipe2");
    }
    if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
      close_pair(in_pipe);
      close_pair(out_pipe);
      return fail_start("pipe2");
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in_pipe[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);

    std::vector<std::string> args = {opt_.python, "-c", std::string(kTvmDriverSource), opt_.home};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    auto env_map = host::RunLimits::minimal_environment();
    if (const char* home = std::getenv("HOME")) env_map["HOME"] = home;
    env_map["TVM_LIBRARY_PATH"] = opt_.home + "/build";
    env_map["OMP_NUM_THREADS"] = "1";
    env_map["TVM_NUM_THREADS"] = "1";
    env_map["PYTHONDONTWRITEBYTECODE"] = "1";
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : env_map) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);

    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, opt_.python.c_str(), &fa, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    if (rc != 0) {
      ::close(in_pipe[1]);
      ::close(out_pipe[0]);
      ::close(err_pipe[0]);
      start_error_ = "cannot start " + opt_.python + ": " + std::strerror(rc);
      return false;
    }
    pid_ = pid;
    in_fd_ = in_pipe[1];
    ::shutdown(in_fd_, SHUT_RD);
    out_fd_ = out_pipe[0];
    err_fd_ = err_pipe[0];
    ++starts_;
    if (opt_.address_space != 0) {
      struct rlimit lim = {opt_.address_space, opt_.address_space};
      ::prlimit(pid_, RLIMIT_AS, &lim, nullptr);
    }
    out_buffer_.clear();
    err_tail_.clear();
    stage_ = "import";
    Reply ready = read_reply(Clock::now() + opt_.startup_timeout);
    if (ready.failure != Reply::Failure::kNone || !ready.message->value("ready", false)) {
      if (ready.message && ready.message->contains("error")) {
        start_error_ =
            "TVM does not import from " + opt_.home + ":\n" + ready.message->value("error", "");
      } else if (ready.failure == Reply::Failure::kTimedOut) {
        start_error_ = "TVM's import did not finish within " +
                       std::to_string(opt_.startup_timeout.count()) + " ms";
      } else {
        start_error_ = "the TVM driver did not start: " + ended_text();
      }
      stop();
      return false;
    }
    crt_dir_ = ready.message->value("crt_dir", "");
    version_ = ready.message->value("tvm_version", "");
    api_ = ready.message->value("api", "");
    return true;
  }

  bool fail_start(const char* what) {
    start_error_ = std::string(what) + ": " + std::strerror(errno);
    return false;
  }

  static void close_pair(int fds[2]) {
    ::close(fds[0]);
    ::close(fds[1]);
  }

  void stop() {
    for (int* fd : {&in_fd_, &out_fd_, &err_fd_}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    pid_ = -1;
  }

  std::string ended_text() {
    std::string how = "the TVM driver died";
    if (pid_ > 0) {
      int status = 0;
      // It may still be exiting: give it a moment before deciding how it ended.
      for (int i = 0; i < 50; ++i) {
        const pid_t r = ::waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
          if (WIFSIGNALED(status))
            how = "the TVM driver was killed by " + signal_text(WTERMSIG(status));
          if (WIFEXITED(status))
            how = "the TVM driver exited with status " + std::to_string(WEXITSTATUS(status));
          pid_ = -1;
          break;
        }
        ::usleep(10'000);
      }
    }
    drain_stderr();
    if (!err_tail_.empty()) how += "\n" + err_tail_;
    return how;
  }

  void drain_stderr() {
    if (err_fd_ < 0) return;
    char buf[4096];
    for (;;) {
      struct pollfd p = {err_fd_, POLLIN, 0};
      if (::poll(&p, 1, 0) <= 0) return;
      const ssize_t n = ::read(err_fd_, buf, sizeof buf);
      if (n <= 0) return;
      keep_stderr(buf, static_cast<std::size_t>(n));
    }
  }

  void keep_stderr(const char* data, std::size_t n) {
    constexpr std::size_t kKeep = 4096;
    err_tail_.append(data, n);
    if (err_tail_.size() > 2 * kKeep) err_tail_.erase(0, err_tail_.size() - kKeep);
  }

  static bool write_all(int fd, const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  // The next JSON line on the driver's stdout; stderr is drained meanwhile so the driver never
  // blocks on it.
  Reply read_reply(Clock::time_point deadline) {
    Reply reply;
    char buf[65536];
    for (;;) {
      if (const auto nl = out_buffer_.find('\n'); nl != std::string::npos) {
        const std::string line = out_buffer_.substr(0, nl);
        out_buffer_.erase(0, nl + 1);
        try {
          reply.message = nlohmann::json::parse(line);
          if (!reply.message->is_object()) reply.failure = Reply::Failure::kGarbage;
        } catch (const nlohmann::json::exception&) {
          reply.failure = Reply::Failure::kGarbage;
        }
        if (reply.failure == Reply::Failure::kGarbage) keep_stderr(line.data(), line.size());
        return reply;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        reply.failure = Reply::Failure::kTimedOut;
        return reply;
      }
      struct pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
      const int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        reply.failure = Reply::Failure::kDied;
        return reply;
      }
      if (fds[1].revents & (POLLIN | POLLHUP)) {
        const ssize_t got = ::read(err_fd_, buf, sizeof buf);
        if (got > 0) keep_stderr(buf, static_cast<std::size_t>(got));
      }
      if (fds[0].revents & (POLLIN | POLLHUP)) {
        const ssize_t got = ::read(out_fd_, buf, sizeof buf);
        if (got <= 0) {
          reply.failure = Reply::Failure::kDied;
          return reply;
        }
        out_buffer_.append(buf, static_cast<std::size_t>(got));
      }
    }
  }

  TvmDriverOptions opt_;
  std::mutex mutex_;
  pid_t pid_ = -1;
  int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
  int starts_ = 0;
  std::string out_buffer_, err_tail_;
  std::string stage_ = "merge";
  std::string start_error_;
  std::string crt_dir_, version_, api_;
};

TvmDriver::TvmDriver(TvmDriverOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
TvmDriver::~TvmDriver() = default;
TvmBuild TvmDriver::build(const nlohmann::json& request) { return impl_->build(request); }
std::string TvmDriver::crt_dir() { return impl_->crt_dir(); }
std::string TvmDriver::tvm_version() { return impl_->version(); }
std::string TvmDriver::api() { return impl_->api(); }
int TvmDriver::starts() const { return impl_->starts(); }

}  // namespace aotfuzz::tvm
