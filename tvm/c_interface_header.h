// What TVM's C interface header (`<prefix>.h`, TVM's src/target/source/interface_c.cc) declares
// about the entry point, read so that the harness calls it as declared: the parameters of
// `<prefix>_run` depend on the build (USMP's external pools add one, workspace-io drops two).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ir/error.h"

namespace aotfuzz::tvm {

/// The header is not in the form interface_c.cc emits (or names what the reader does not know).
class HeaderError : public ir::Error {
 public:
  using ir::Error::Error;
};

/// One field of `struct <prefix>_workspace_pools`: a pool the application allocates.
struct InterfacePool {
  std::string field;
  /// `<PREFIX>_<FIELD>_WORKSPACE_POOL_SIZE` (a workspace pool) or
  /// `<PREFIX>_<FIELD>_CONSTANT_POOL_SIZE` (a constant pool, whose bytes are
  /// `..._CONSTANT_POOL_DATA`).
  std::string size_macro;
  std::int64_t size = 0;
  bool constant = false;
  std::string data_macro;  // constant pools only
  friend bool operator==(const InterfacePool&, const InterfacePool&) = default;
};

/// The header, as far as a caller of the entry point needs it.
struct InterfaceHeader {
  /// The fields of `struct <prefix>_inputs`, `_outputs` and `_devices`, in order.
  std::vector<std::string> inputs, outputs, devices;
  std::vector<InterfacePool> pools;
  /// `<prefix>_map_inputs` and `<prefix>_map_outputs` (USMP's workspace-io): the inputs and
  /// outputs live in the pools, where these say.
  bool map_inputs = false, map_outputs = false;
  /// `<prefix>_run`'s parameters by what follows `<prefix>_` in their struct type, in order:
  /// "inputs", "outputs", "workspace_pools", "devices".
  std::vector<std::string> run_params;
  /// Every `#define NAME <integer>`.
  std::map<std::string, std::int64_t> integer_macros;
};

/// Reads `text`, the header of the module whose symbols start with `prefix` ("tvmgen_<mod>").
/// Throws HeaderError when it declares no `<prefix>_run`, a parameter of another type, or a pool
/// without its size macro.
InterfaceHeader read_interface_header(std::string_view text, const std::string& prefix);

/// The fields of `struct <name> { void* field; ... };` in `text`, in order; empty when there is
/// no such struct. Throws HeaderError when a member is not `void* <identifier>;`.
std::vector<std::string> struct_fields(std::string_view text, const std::string& name);

/// The parameters' struct types of the prototype `int32_t <function>(struct T* name, ...);`,
/// each as T. Throws HeaderError when there is no such prototype or a parameter is no struct
/// pointer.
std::vector<std::string> prototype_struct_params(std::string_view text,
                                                 const std::string& function);

/// The macro names interface_c.cc derives from the prefix ("tvmgen_default") and a name:
/// ToCConstantStyle, upper case.
std::string constant_style(const std::string& prefix, const std::string& name);

}  // namespace aotfuzz::tvm
