// The TVM driver process: spawn, line protocol, deadlines, restart.
#include "tvm/driver.h"

#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <variant>

#include "host/child.h"
#include "host/process.h"
#include "host/toolchain.h"
#include "ir/expr.h"
#include "ir/printer.h"
#include "ir/type.h"
#include "tvm/driver_py.h"

namespace aotfuzz::tvm {
namespace {

using Clock = std::chrono::steady_clock;

// The end of the driver's stderr kept for the message of its death.
constexpr std::size_t kStderrKeep = 4096;

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

std::string_view uma_backend_source() {
  const std::string_view source = kTvmDriverSource;
  const auto begin = source.find("# >>> aotfuzz_uma backend");
  const auto end = source.find("# <<< aotfuzz_uma backend");
  if (begin == std::string_view::npos || end == std::string_view::npos || end < begin) {
    // driver.py is this program's own file: a missing marker is a bug of the build.
    throw std::logic_error("tvm/driver.py lacks its aotfuzz_uma backend markers");
  }
  const auto last = source.find('\n', end);
  return source.substr(begin,
                       last == std::string_view::npos ? std::string_view::npos : last + 1 - begin);
}

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
    if (function_start == std::string::npos && line.rfind("def @", 0) == 0 && !trimmed.empty() &&
        trimmed.back() == '{') {
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
    return timed_build_locked(request);
  }

  std::vector<TvmBuild> build_batch(const std::vector<nlohmann::json>& requests,
                                    const TvmDriver::OnAnswer& on_answer) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<TvmBuild> out(requests.size());
    std::size_t next = 0;
    while (next < requests.size()) {
      if (requests.size() - next == 1) {
        out[next] = timed_build_locked(requests[next]);
        if (on_answer) on_answer(next, out[next]);
        ++next;
      } else {
        next = batch_from(requests, next, out, on_answer);
      }
    }
    return out;
  }

  std::string crt_dir() { return info(&Info::crt_dir); }
  std::string version() { return info(&Info::version); }
  std::string commit() { return info(&Info::commit); }
  std::string api() { return info(&Info::api); }
  std::string features() { return info(&Info::features); }

  int starts() const { return starts_; }
  int retries() const { return retries_; }

 private:
  // A line of the driver's stdout, or why there is none.
  struct Reply {
    std::optional<nlohmann::json> message;
    enum class Failure { kNone, kDied, kTimedOut, kGarbage } failure = Failure::kNone;
  };

  struct Info {
    // features: the driver's "features", each followed by a space.
    std::string crt_dir, version, commit, api, features;
  };

  static std::chrono::microseconds since(Clock::time_point t0) {
    return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
  }

  // What the driver said when it started; a build in progress does not hold it up.
  std::string info(std::string Info::*field) {
    {
      std::lock_guard<std::mutex> lock(info_mutex_);
      if (!info_.version.empty()) return info_.*field;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!child_.running()) start();
    std::lock_guard<std::mutex> info_lock(info_mutex_);
    return info_.*field;
  }

  // Sends `line`, starting the driver first when it is not running; false (and `out` says why)
  // when it cannot be started or does not take the line.
  bool send_line(const std::string& line, TvmBuild& out) {
    if (!child_.running() && !start()) {
      out.status = TvmBuild::Status::kUnavailable;
      out.message = start_error_;
      return false;
    }
    stage_ = "merge";
    if (write_line(line)) return true;
    // The driver died between requests; one fresh start, then the request once more.
    stop();
    if (start() && write_line(line)) return true;
    out.status = TvmBuild::Status::kUnavailable;
    out.message = start_error_.empty() ? "the TVM driver does not accept requests" : start_error_;
    return false;
  }

  // The failure of the request in progress (the driver is stopped).
  TvmBuild failed(Reply::Failure failure) {
    TvmBuild out;
    out.stage = stage_;
    out.status = failure == Reply::Failure::kTimedOut ? TvmBuild::Status::kTimedOut
                                                      : TvmBuild::Status::kCrashed;
    out.message =
        failure == Reply::Failure::kTimedOut
            ? "no answer from TVM after " + std::to_string(opt_.request_timeout.count()) + " ms"
            : ended_text();
    stop();
    return out;
  }

  // The answer of a request (anything but a progress line); nullopt when it is not one.
  std::optional<TvmBuild> answer(const nlohmann::json& m) try {
    TvmBuild out;
    if (m.value("ok", false)) {
      out.status = TvmBuild::Status::kOk;
      out.partitioned =
          with_constants(m.value("partitioned", ""), m.value("constants", nlohmann::json::array()));
      for (const auto& f : m.at("files")) {
        out.files.emplace_back(f.at(0).get<std::string>(), f.at(1).get<std::string>());
      }
      const auto times = m.value("times", nlohmann::json::object());
      auto us = [&](const char* key) {
        return std::chrono::microseconds(static_cast<std::int64_t>(times.value(key, 0.0) * 1e6));
      };
      if (const auto plan = m.find("plan"); plan != m.end() && plan->is_object()) out.plan = *plan;
      out.metadata = m.value("metadata", "");
      out.partition_time = us("partition_s");
      out.build_time = us("build_s");
      out.export_time = us("export_s");
      return out;
    }
    out.status = m.value("unsupported", false) ? TvmBuild::Status::kUnsupported
                                               : TvmBuild::Status::kTvmError;
    out.stage = m.value("stage", stage_);
    out.message = m.value("error", "");
    out.where = m.value("where", "");
    return out;
  } catch (const nlohmann::json::exception&) {
    keep_stderr("an answer of the wrong shape: " + m.dump().substr(0, 2000));
    return std::nullopt;
  }

  // Reads until the answer of the request in progress: its own deadline, progress lines noted.
  // `index`: the batch index its lines must carry (nullopt: a single request's, which carry none).
  std::variant<nlohmann::json, Reply::Failure> read_answer(std::optional<std::size_t> index) {
    const auto deadline = Clock::now() + opt_.request_timeout;
    for (;;) {
      Reply reply = read_reply(deadline);
      if (reply.failure != Reply::Failure::kNone) return reply.failure;
      nlohmann::json& m = *reply.message;
      if (index && (!m.contains("index") || !m["index"].is_number_unsigned() ||
                    m["index"].get<std::size_t>() != *index)) {
        keep_stderr("an answer out of order: " + m.dump());
        return Reply::Failure::kGarbage;
      }
      if (m.contains("progress")) {
        stage_ = m.value("progress", stage_);
        continue;
      }
      return std::move(m);
    }
  }

  TvmBuild build_locked(const nlohmann::json& request) {
    TvmBuild out;
    if (!send_line(request.dump() + "\n", out)) return out;
    auto got = read_answer(std::nullopt);
    if (auto* failure = std::get_if<Reply::Failure>(&got)) return failed(*failure);
    if (auto built = answer(std::get<nlohmann::json>(got))) return *built;
    return failed(Reply::Failure::kGarbage);
  }

  // build_locked with the time it took.
  TvmBuild timed_build_locked(const nlohmann::json& request) {
    const auto t0 = Clock::now();
    TvmBuild out = build_locked(request);
    out.elapsed = since(t0);
    return out;
  }

  // Sends requests[from...] as one batch and reads their answers into `out` (and to on_answer),
  // each timed from the answer before it. A request the driver died, hung or answered garbage
  // on is built again alone by a fresh driver, so that its outcome is its own and not the
  // batch's; the index to go on from is returned.
  std::size_t batch_from(const std::vector<nlohmann::json>& requests, std::size_t from,
                         std::vector<TvmBuild>& out, const TvmDriver::OnAnswer& on_answer) {
    nlohmann::json batch = {{"batch", nlohmann::json::array()}};
    for (std::size_t i = from; i < requests.size(); ++i) batch["batch"].push_back(requests[i]);
    auto t0 = Clock::now();
    if (!send_line(batch.dump() + "\n", out[from])) {
      for (std::size_t i = from; i < requests.size(); ++i) {
        out[i] = out[from];
        if (on_answer) on_answer(i, out[i]);
      }
      return requests.size();
    }
    for (std::size_t i = from; i < requests.size(); ++i) {
      stage_ = "merge";
      auto got = read_answer(i - from);
      std::optional<TvmBuild> built;
      if (auto* m = std::get_if<nlohmann::json>(&got)) built = answer(*m);
      if (!built) {
        stop();
        ++retries_;
        out[i] = timed_build_locked(requests[i]);
        if (on_answer) on_answer(i, out[i]);
        return i + 1;
      }
      out[i] = std::move(*built);
      out[i].elapsed = since(t0);
      if (on_answer) on_answer(i, out[i]);
      t0 = Clock::now();
    }
    return requests.size();
  }

  bool start() {
    stop();
    start_error_.clear();
    if (auto problem = tvm_home_problem(opt_.home)) {
      start_error_ = *problem;
      return false;
    }
    // host::Child: stdin and stdout a socket, so that writing to a dead driver fails with EPIPE
    // instead of raising SIGPIPE here; its own process group, so that a kill ends what TVM
    // started; stderr kept for the message of its death.
    auto env_map = host::RunLimits::minimal_environment();
    if (const char* home = std::getenv("HOME")) env_map["HOME"] = home;
    env_map["TVM_LIBRARY_PATH"] = opt_.home + "/build";
    env_map["OMP_NUM_THREADS"] = "1";
    env_map["TVM_NUM_THREADS"] = "1";
    env_map["PYTHONDONTWRITEBYTECODE"] = "1";
    host::ChildSpec spec{.argv = {opt_.python, "-c", std::string(kTvmDriverSource), opt_.home},
                         .env = std::move(env_map),
                         .capture_stderr = true,
                         .stderr_cap = kStderrKeep,
                         .address_space = opt_.address_space};
    if (!child_.start(spec)) {
      start_error_ = child_.error();
      return false;
    }
    ++starts_;
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
    std::lock_guard<std::mutex> info_lock(info_mutex_);
    info_.crt_dir = ready.message->value("crt_dir", "");
    info_.version = ready.message->value("tvm_version", "");
    info_.commit = ready.message->value("tvm_commit", "");
    info_.api = ready.message->value("api", "");
    info_.features.clear();
    if (const auto f = ready.message->find("features");
        f != ready.message->end() && f->is_array()) {
      for (const auto& name : *f) {
        if (name.is_string()) info_.features += name.get<std::string>() + " ";
      }
    }
    return true;
  }

  void stop() { child_.kill(); }

  std::string ended_text() {
    std::string how = "the TVM driver died";
    // It may still be exiting: give it a moment before deciding how it ended.
    if (const auto status = child_.wait_for(std::chrono::milliseconds(500))) {
      if (status->signal != 0) how = "the TVM driver was killed by " + signal_text(status->signal);
      if (status->exited()) {
        how = "the TVM driver exited with status " + std::to_string(status->exit_code);
      }
    }
    keep_stderr(child_.take_stderr());
    if (!err_tail_.empty()) how += "\n" + err_tail_;
    return how;
  }

  void keep_stderr(const std::string& text) { keep_stderr(text.data(), text.size()); }

  void keep_stderr(const char* data, std::size_t n) {
    err_tail_.append(data, n);
    if (err_tail_.size() > 2 * kStderrKeep) err_tail_.erase(0, err_tail_.size() - kStderrKeep);
  }

  // A request line: the driver reads it at once, or is stuck for longer than a request may take.
  bool write_line(const std::string& line) {
    return child_.write(line, Clock::now() + opt_.request_timeout) == host::ChildIo::kOk;
  }

  // The next JSON line on the driver's stdout; host::Child drains its stderr meanwhile, so the
  // driver never blocks on it.
  Reply read_reply(Clock::time_point deadline) {
    Reply reply;
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
      switch (child_.read_some(out_buffer_, deadline)) {
        case host::ChildIo::kOk:
          continue;
        case host::ChildIo::kTimedOut:
          reply.failure = Reply::Failure::kTimedOut;
          return reply;
        case host::ChildIo::kClosed:
        case host::ChildIo::kCancelled:
          reply.failure = Reply::Failure::kDied;
          return reply;
      }
    }
  }

  TvmDriverOptions opt_;
  std::mutex mutex_;
  host::Child child_;
  int starts_ = 0;
  std::string out_buffer_, err_tail_;
  std::string stage_ = "merge";
  std::string start_error_;
  int retries_ = 0;
  std::mutex info_mutex_;
  Info info_;
};

TvmDriver::TvmDriver(TvmDriverOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
TvmDriver::~TvmDriver() = default;
TvmBuild TvmDriver::build(const nlohmann::json& request) { return impl_->build(request); }
std::vector<TvmBuild> TvmDriver::build_batch(const std::vector<nlohmann::json>& requests,
                                             const OnAnswer& on_answer) {
  return impl_->build_batch(requests, on_answer);
}
std::string TvmDriver::crt_dir() { return impl_->crt_dir(); }
std::string TvmDriver::tvm_version() { return impl_->version(); }
std::string TvmDriver::tvm_commit() { return impl_->commit(); }
std::string TvmDriver::api() { return impl_->api(); }
bool TvmDriver::has_feature(std::string_view name) {
  const std::string features = impl_->features();
  return features.find(std::string(name) + " ") == 0 ||
         features.find(" " + std::string(name) + " ") != std::string::npos;
}
int TvmDriver::starts() const { return impl_->starts(); }
int TvmDriver::retries() const { return impl_->retries(); }

}  // namespace aotfuzz::tvm
