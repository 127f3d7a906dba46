// The client of the TVM driver (tvm/driver.py): one long-lived Python process that
// imports Apache TVM once and then compiles one annotated graph per request with TVM's own API
// (MergeCompilerRegions, PartitionGraph, relay.build for the AoT executor and the `c` target),
// answering with the partitioned module's text and the generated C.
//
// The process gets an argument vector (no shell), its own process group, an address-space limit,
// and a deadline per request; one that dies, hangs or answers garbage is killed and restarted
// on the next request. A request it died on is reported as a crash of TVM at the stage it had
// announced, one it hung on as a timeout.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace aotfuzz::tvm {

/// Where TVM is and how its driver runs.
struct TvmDriverOptions {
  /// A TVM tree with `python/tvm` and a build in `build/` (libtvm.so, standalone_crt/), as
  /// scripts/tvm/build.sh leaves it.
  std::string home;
  /// The Python interpreter: $AOTFUZZ_TVM_PYTHON, else /usr/bin/python3 (Debian's, which has the
  /// packages build.sh installs), else python3 from PATH.
  std::string python;
  /// Deadline of the import (TVM takes seconds) and of each request.
  std::chrono::milliseconds startup_timeout{180'000};
  std::chrono::milliseconds request_timeout{120'000};
  /// RLIMIT_AS of the driver process; 0 leaves it unchanged.
  std::uint64_t address_space = std::uint64_t{8} << 30;
};

/// What TVM made of one request.
struct TvmBuild {
  enum class Status {
    kOk,           ///< partitioned text and files are set
    kTvmError,     ///< TVM raised (message; stage)
    kCrashed,      ///< the driver died during the request (message: how, and its stderr's end)
    kTimedOut,     ///< no answer before the deadline; the driver was killed
    kUnavailable,  ///< the driver could not be started or TVM does not import (message)
    /// this TVM lacks what the request needs (message, one line: what and since when, e.g.
    /// aotfuzz_uma regions without UMA); the driver serves other requests
    kUnsupported,
  };
  Status status = Status::kUnavailable;
  /// The step TVM was in: "merge", "partition", "build" or "export".
  std::string stage;
  /// kTvmError: the error's last line first, then TVM's whole text; otherwise what happened.
  std::string message;
  /// kTvmError: the stem of the TVM source file that raised (from its `File "...", line N`), or
  /// the Python exception's class; a stable bucket for signatures.
  std::string where;
  std::string partitioned;
  /// Generated C sources and headers by file name, then the CRT's crt_backend_api.c and
  /// crt_config.h.
  std::vector<std::pair<std::string, std::string>> files;
  /// kOk with USMP on and a TVM that takes a custom planner (tir.usmp.custom_algorithm): the
  /// plan TVM made, as driver.py's recording planner saw it (its header states the form); null
  /// otherwise.
  nlohmann::json plan;
  /// kOk: the Model Library Format's metadata.json, as text ("" when the export has none).
  std::string metadata;
  /// The whole request as seen from here (graph in, files out).
  std::chrono::microseconds elapsed{0};
  /// kOk: TVM's own time as the driver measured it: building the graph and the passes up to
  /// PartitionGraph, relay.build, and the Model Library Format export.
  std::chrono::microseconds partition_time{0}, build_time{0}, export_time{0};
};

/// The TVM home named by $AOTFUZZ_TVM_HOME, if set and not empty.
std::optional<std::string> tvm_home_from_env();

/// Why `home` cannot be a TVM home (no python/tvm, no build/libtvm.so), or nullopt when it looks
/// like one.
std::optional<std::string> tvm_home_problem(const std::string& home);

class TvmDriver {
 public:
  explicit TvmDriver(TvmDriverOptions options);
  ~TvmDriver();
  TvmDriver(const TvmDriver&) = delete;
  TvmDriver& operator=(const TvmDriver&) = delete;

  /// Compiles one graph (the request object of driver.py's protocol). Starts the driver on first
  /// use. Thread-safe: concurrent calls are served one after the other.
  TvmBuild build(const nlohmann::json& request);

  /// Compiles several graphs with one message to the driver, which builds them one after the
  /// other as single requests: one result per request, each as build(request) gives it, its
  /// `elapsed` the time since the answer before it. When the driver dies, hangs or answers
  /// garbage on one, that one is built again alone by a fresh driver (its crash, hang or answer
  /// is then its own; retries() counts these) and the batch goes on from the next.
  /// `on_answer(i, result)`, when given, is called with each result as soon as it is known, in
  /// order, on the calling thread.
  using OnAnswer = std::function<void(std::size_t, const TvmBuild&)>;
  std::vector<TvmBuild> build_batch(const std::vector<nlohmann::json>& requests,
                                    const OnAnswer& on_answer = {});

  /// The standalone CRT directory of this TVM build (known once the driver has started). These
  /// three do not wait for a build in progress once the driver has started.
  std::string crt_dir();
  /// TVM's version string (known once the driver has started).
  std::string tvm_version();
  /// The commit libtvm was built from, as TVM records it; "" when it does not know (a tarball).
  std::string tvm_commit();
  /// How the driver builds with this TVM: "target-string" (v0.8's relay.build options in the
  /// target) or "executor" (Executor and Runtime objects, v0.9 on); known once it has started.
  std::string api();
  /// Whether this TVM has `name`, one of the driver's "features" (driver.py: what the release
  /// offers: memory configurations of the AoT executor, UMA; probed when it starts): "usmp",
  /// "external_pools", "workspace_io", "constant_alignment", "link_params_off", "uma" (the
  /// aotfuzz_uma backend can be built: tvm/driver.py). Starts the driver.
  bool has_feature(std::string_view name);
  /// Driver processes started so far.
  int starts() const;
  /// Requests of batches built again alone (build_batch).
  int retries() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// The region target of the driver's UMA backend (oracle::kHookLoweredTargets names it too).
inline constexpr std::string_view kUmaTarget = "aotfuzz_uma";

/// The block of driver.py that defines and registers the aotfuzz_uma backend (UMA_TARGET and
/// uma_target(), which returns its Target), from its `# >>> aotfuzz_uma backend` line to its
/// `# <<< aotfuzz_uma backend` line: the pytest export copies it, so that a repro defines the
/// backend the campaign built with. It needs `import tvm` before it.
std::string_view uma_backend_source();

/// `text` (the driver's printing of a module) with each `%aotfuzz_const_<k>` placeholder bound
/// to the k-th of `constants` ({"shape", "dtype", "values"}): every function that uses it gets
/// the statement `%aotfuzz_const_<k> = const(Tensor[(shape), dtype], [values]);` after its
/// opening line, so that uses of one constant read back as one node. A placeholder without a
/// constant stays unbound (and the text then does not read back).
std::string with_constants(const std::string& text, const nlohmann::json& constants);

}  // namespace aotfuzz::tvm
