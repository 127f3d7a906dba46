// The common frame of every pass: verify the input, run, turn IR errors raised while building the
// output into PassError(kBrokenOutput), verify the output.
#pragma once

#include <string>

#include "aot/pass_error.h"
#include "ir/module.h"

namespace aotfuzz::aot {
namespace detail {
/// ir::verify(input) (out of line, so this header needs no ir/verify.h).
void verify_pass_input(const ir::Module& input);
/// Throws PassError(kBrokenOutput) for the ir::Error `e` raised while building the output.
[[noreturn]] void throw_build_failure(const std::string& name, const ir::Error& e);
/// ir::verify(output), an ir::Error turned into PassError(kBrokenOutput).
void verify_pass_output(const std::string& name, const ir::Module& output);
}  // namespace detail

/// Runs `body` on `input` as pass `name`. Throws ir::VerifyError when `input` is invalid (checked
/// only with `verify_input`),
/// PassError as raised by `body`, and PassError(kBrokenOutput) when `body` raises any other
/// ir::Error or its result fails ir::verify().
/// `body` is any callable `ir::Module(const ir::Module&)`: a template, so each pass's lambda is
/// called directly rather than through a std::function.
template <class Body>
ir::Module guarded_pass(const std::string& name, const ir::Module& input, bool verify_input,
                        const Body& body) {
  if (verify_input) detail::verify_pass_input(input);
  ir::Module output;
  try {
    output = body(input);
  } catch (const PassError&) {
    throw;
  } catch (const ir::Error& e) {
    detail::throw_build_failure(name, e);
  }
  detail::verify_pass_output(name, output);
  return output;
}

}  // namespace aotfuzz::aot
