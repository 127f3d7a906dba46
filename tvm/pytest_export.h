// Upstream repros: an annotated graph as a self-contained pytest file in the style of TVM's own AoT
// BYOC tests (tests/python/relay/aot/test_crt_aot.py::test_byoc_microtvm in TVM v0.8), so that a
// minimized finding can be filed against TVM as is.
#pragma once

#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/module.h"
#include "oracle/oracle.h"

namespace aotfuzz::tvm {

/// The module is not a single annotated @main the Python builder can express.
class PytestError : public ir::Error {
 public:
  using ir::Error::Error;
};

/// What the generated test says about itself.
struct PytestInfo {
  /// The test function's name suffix (`test_aotfuzz_<name>`); sanitized to an identifier.
  std::string name = "repro";
  /// Comment lines for the module docstring (origin, finding, replay command).
  std::vector<std::string> notes;
};

/// `note` with what only this machine has replaced: the value of --tvm-home / --tvm-fixed-home
/// becomes "$AOTFUZZ_TVM_HOME", the path of an `aotfuzz run` file its name.
std::string without_local_paths(const std::string& note);

/// A pytest file that builds `annotated`'s @main with the Relay Python API (relay.var,
/// relay.add/subtract/multiply, compiler_begin/compiler_end, relay.Tuple, relay.TupleGetItem;
/// tuple-typed parameters become one variable per field), computes the expected outputs twice
/// (NumPy, and the Relay interpreter on the graph without annotations) and checks they agree,
/// then applies MergeCompilerRegions (when `options.aot.merge`), PartitionGraph(mod_name) and
/// InferType, and builds and runs it with AoT through TVM's test helpers (compile_and_run with
/// AOTTestModel, AOT_DEFAULT_RUNNER, the interface and api of `options`), comparing with the
/// expected outputs. Inputs are drawn from a fixed NumPy seed. Throws PytestError for modules with
/// other functions than @main, local functions or calls of globals.
std::string tvm_pytest(const ir::Module& annotated, const oracle::CaseOptions& options,
                       const PytestInfo& info = {});

}  // namespace aotfuzz::tvm
