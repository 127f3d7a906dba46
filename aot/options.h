// Everything that selects how the pipeline under test compiles a graph: the passes' switches and
// the code generator's. One struct, so the module name and the injected bugs, which both halves
// read, have one source of truth.
#pragma once

#include <string>
#include <string_view>

#include "aot/bugs.h"

namespace aotfuzz::aot {

/// TVM's default `relay.FuseOps.max_depth`: no fused function holds more nodes.
inline constexpr int kDefaultMaxFuseDepth = 256;

struct Options {
  /// Run MergeCompilerRegions (CLI --merge / --no-merge).
  bool merge = true;
  /// The `mod_name` of PartitionGraph and the prefix of every emitted symbol
  /// (`tvmgen_<mod_name>_...`).
  std::string mod_name = "default";
  /// Injected bugs; each pass and the code generator honour the switches of their stage.
  BugSet bugs;
  /// FuseOps' limit on nodes per fused function (TVM's relay.FuseOps.max_depth).
  int max_fuse_depth = kDefaultMaxFuseDepth;
  /// Every pass verifies its input. The pipeline driver verifies the annotated input and each
  /// pass's output once, so it turns this off for the passes it runs (verify() is the largest
  /// cost of a pass).
  bool verify_input = true;

  /// Calling convention of host kernels (external functions are always packed).
  enum class Api { kPacked, kUnpacked };
  Api api = Api::kPacked;
  /// Signature of the entry point `tvmgen_<mod_name>_run`. kC requires Api::kUnpacked.
  enum class Interface { kPacked, kC };
  Interface interface = Interface::kPacked;
  /// Liveness-based reuse of dead intermediate buffers.
  bool storage_reuse = true;
  /// Emit `if (num_args != N) return -1;` in every packed function (off by default, like TVM).
  bool check_num_args = false;

  /// A deliberate failure of the harness's own process when the pass named `debug_fault_pass`
  /// starts, to test that crashes, hangs and heap corruption inside the pipeline become findings
  /// (as clang's `#pragma clang __debug crash` tests its crash recovery), and that an internal
  /// error escaping a pass as an exception other than PassError (kThrow) is a crash of that pass,
  /// not a failure of the harness. Never drawn by campaigns.
  enum class DebugFault { kNone, kCrash, kHang, kOverflow, kThrow };
  DebugFault debug_fault = DebugFault::kNone;
  std::string debug_fault_pass;
};

/// TVM's mangle_module_name (python/tvm/relay/backend/utils.py): "tvmgen_<mod_name>", and
/// "tvmgen" for an empty name. Every generated global symbol starts with it.
inline std::string mangled_module_name(std::string_view mod_name) {
  return mod_name.empty() ? std::string("tvmgen") : "tvmgen_" + std::string(mod_name);
}

}  // namespace aotfuzz::aot
