// CWriter and the identifier/comment sanitisers.
#include "aot/c_writer.h"

#include <algorithm>
#include <array>

namespace aotfuzz::aot {

CWriter& CWriter::line(std::string_view text) {
  if (!text.empty()) out_.append(static_cast<std::size_t>(depth_) * 2, ' ');
  out_.append(text);
  out_.push_back('\n');
  return *this;
}

CWriter& CWriter::open(std::string_view head) {
  line(head.empty() ? std::string("{") : std::string(head) + " {");
  ++depth_;
  return *this;
}

CWriter& CWriter::close(std::string_view tail) {
  if (depth_ > 0) --depth_;
  return line(tail);
}

CWriter& CWriter::raw(std::string_view text) {
  out_.append(text);
  return *this;
}

namespace {

bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

constexpr std::array<std::string_view, 37> kKeywords = {
    "auto",     "break",  "case",   "char",     "const",     "continue", "default",  "do",
    "double",   "else",   "enum",   "extern",   "float",     "for",      "goto",     "if",
    "inline",   "int",    "long",   "register", "restrict",  "return",   "short",    "signed",
    "sizeof",   "static", "struct", "switch",   "typedef",   "union",    "unsigned", "void",
    "volatile", "while",  "_Bool",  "_Complex", "_Imaginary"};

}  // namespace

bool is_c_keyword(std::string_view name) {
  return std::find(kKeywords.begin(), kKeywords.end(), name) != kKeywords.end();
}

std::string comment_text(std::string_view text) {
  std::string out;
  for (char c : text) {
    const bool printable = c >= 0x20 && c < 0x7f;
    if (!printable) {
      out.push_back('?');
    } else if (!out.empty() &&
               ((c == '/' && out.back() == '*') || (c == '*' && out.back() == '/'))) {
      // "*/" would end the comment and "/*" inside one trips -Wcomment.
      out.push_back(' ');
      out.push_back(c);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

bool is_c_identifier(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), ident_char);
}

}  // namespace aotfuzz::aot
