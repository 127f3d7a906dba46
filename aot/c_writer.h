// A small indenting writer for generated C, plus the identifier and comment sanitising that every
// emitter shares.
#pragma once

#include <string>
#include <string_view>

namespace aotfuzz::aot {

/// Accumulates C text line by line with two-space indentation.
class CWriter {
 public:
  /// A writer whose lines start `depth` levels deep (for bodies emitted separately).
  explicit CWriter(int depth = 0) : depth_(depth) {}
  /// Appends `text` at the current indentation, then a newline (an empty line has no spaces).
  CWriter& line(std::string_view text = {});
  /// Appends `head` followed by " {", and indents.
  CWriter& open(std::string_view head);
  /// Dedents and appends `tail` (default "}").
  CWriter& close(std::string_view tail = "}");
  /// Appends raw text as is (no indentation).
  CWriter& raw(std::string_view text);
  const std::string& str() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
  int depth_ = 0;
};

/// Whether `name` is a keyword of C (C11 and the common extensions).
bool is_c_keyword(std::string_view name);

/// Text safe inside a C block comment (no "*/", no newlines, printable ASCII only).
std::string comment_text(std::string_view text);
/// Whether `name` is a non-empty run of [A-Za-z0-9_] not starting with a digit.
bool is_c_identifier(std::string_view name);

}  // namespace aotfuzz::aot
