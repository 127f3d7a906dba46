// The system under test of a case: the builtin pipeline (aot/), or Apache TVM itself, driven
// through its Python API by a long-lived driver process (oracle/tvm_driver.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace aotfuzz::oracle {

class TvmDriver;

enum class SutKind { kBuiltin, kTvm };

/// "builtin", "tvm".
std::optional<SutKind> parse_sut_kind(std::string_view name);

struct Sut {
  SutKind kind = SutKind::kBuiltin;
  /// The TVM home (kTvm): a tree with python/tvm and build/libtvm.so.
  std::string tvm_home;
  /// The driver cases are sent to. Copies of the options share it (its calls are serialized);
  /// campaign workers each get their own. Unset: run_case starts one for the call.
  std::shared_ptr<TvmDriver> driver;
  /// A TVM with the bug fixed (kTvm, optional): a reduced finding must pass there, as a
  /// finding of an injected bug must pass without it (oracle::fixed_options).
  std::string tvm_home_fixed;
  std::shared_ptr<TvmDriver> fixed_driver;
};

}  // namespace aotfuzz::oracle
