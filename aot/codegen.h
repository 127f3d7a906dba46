// C code generation for a fused module: host kernels, external (ccompiler-style) functions, the
// AoT executor `tvmgen_<mod>_run_model` and the `tvmgen_<mod>_run` entry point, as TVM v0.8's AoT
// C backend emits them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "aot/call_site.h"
#include "aot/codegen_error.h"
#include "aot/options.h"
#include "aot/runtime_header.h"
#include "ir/module.h"

namespace aotfuzz::aot {

/// The generated files.
struct CSources {
  /// File name -> content, in this order: `aotfuzz_runtime.h`, `tvmgen_<mod>.h`,
  /// `tvmgen_<mod>_lib.c`. Only the `.c` file is compiled; the headers sit next to it.
  std::vector<std::pair<std::string, std::string>> files;
  /// What each executor call site must pass, derived from the IR (flattened parameters plus
  /// flattened results of the callee) independently of the emitter.
  std::vector<CallSiteInfo> expected_arity;

  /// The content of `name`; throws CodegenError when there is no such file.
  const std::string& file(const std::string& name) const;
};

/// "tvmgen_<mod_name>" ("tvmgen" for an empty name, as TVM mangles it).
std::string symbol_prefix(const Options& options);
/// "tvmgen_<mod_name>.h", "tvmgen_<mod_name>_lib.c".
std::string header_file_name(const Options& options);
std::string lib_file_name(const Options& options);

/// The fields of `struct tvmgen_<mod>_inputs`, one per flattened main parameter (`<name>_<k>` for
/// the fields of a tuple parameter), each character outside [A-Za-z0-9_] replaced by '_', as
/// TVM's interface header names them. Throws CodegenRefusal where TVM fails: two names that are
/// one field (TVM raises), or a field that is no C identifier (TVM's header does not compile).
/// And the fields of `struct tvmgen_<mod>_outputs` (`output`, or `output0`, `output1`, ...).
std::vector<std::string> input_field_names(const ir::Function& main, BugSet bugs = {});
std::vector<std::string> output_field_names(const ir::Function& main);

/// The expected arity of each executor call site, from the IR alone.
std::vector<CallSiteInfo> expected_call_arity(const ir::Module& fused, const Options& options);

/// Generates the C sources of `fused` (the output of FuseOps). Throws CodegenError for options
/// TVM refuses (interface c with the packed API, a bad mod_name) and for constructs outside the
/// fused-module shape (an unfused operator in @main, a call of a global function without a
/// `Compiler` attribute, an annotation or call inside a primitive function, ...).
/// Deterministic: the same module and options give the same bytes.
CSources generate_c(const ir::Module& fused, const Options& options = {});

}  // namespace aotfuzz::aot
