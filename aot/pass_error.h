// The error the IR-to-IR passes raise: which pass refused, and whether the input was outside what
// the pass supports or the pass itself produced a broken module.
#pragma once

#include <string>

#include "ir/error.h"

namespace aotfuzz::aot {

/// A pass failed. what() is `<pass>: <message>`.
class PassError : public ir::Error {
 public:
  enum class Kind {
    /// The input is one the pass cannot handle (TVM v0.8 crashed or hung on it), e.g. a region
    /// that would become cyclic through a host op. The CLI treats it as bad input.
    kRejectedInput,
    /// The pass produced a module that fails ir::verify() or is ill-typed: a pipeline bug (or an
    /// injected one).
    kBrokenOutput,
  };

  PassError(std::string pass, Kind kind, const std::string& message)
      : ir::Error(pass + ": " + message), pass_(std::move(pass)), kind_(kind) {}

  /// The pass's CLI name ("merge", "partition", "fuse").
  const std::string& pass() const { return pass_; }
  Kind kind() const { return kind_; }

 private:
  std::string pass_;
  Kind kind_;
};

}  // namespace aotfuzz::aot
