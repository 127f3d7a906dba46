// Error types raised by the IR layer; every message names the offending construct.
#pragma once

#include <stdexcept>
#include <string>

namespace aotfuzz::ir {

/// Base of all IR errors: invalid input, never an internal failure.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Ill-typed construction (shape mismatch, bad tuple index, arity).
class TypeError : public Error {
 public:
  using Error::Error;
};

/// A broken module invariant, found by verify().
class VerifyError : public Error {
 public:
  using Error::Error;
};

/// Text that does not parse; what() is `file:line:col: error: message`.
class ParseError : public Error {
 public:
  ParseError(std::string file, int line, int col, const std::string& message)
      : Error(file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": error: " + message),
        file_(std::move(file)),
        line_(line),
        col_(col) {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int col() const { return col_; }

 private:
  std::string file_;
  int line_;
  int col_;
};

}  // namespace aotfuzz::ir
