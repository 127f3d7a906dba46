#include "reference/c_interface.h"

#include <algorithm>
#include <array>
#include <set>
#include <string_view>

#include "reference/tvm_passes.h"

namespace aotfuzz::reference {
namespace {

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// C11's keywords and the common extensions: a field spelled like one does not compile.
constexpr std::array<std::string_view, 37> kCKeywords = {
    "auto",     "break",  "case",   "char",     "const",     "continue", "default",  "do",
    "double",   "else",   "enum",   "extern",   "float",     "for",      "goto",     "if",
    "inline",   "int",    "long",   "register", "restrict",  "return",   "short",    "signed",
    "sizeof",   "static", "struct", "switch",   "typedef",   "union",    "unsigned", "void",
    "volatile", "while",  "_Bool",  "_Complex", "_Imaginary"};

}  // namespace

std::vector<std::string> c_interface_input_names(const ir::Function& main) {
  std::vector<std::string> names;
  for (const auto& p : main->params()) {
    if (p->type()->is_tensor()) {
      names.push_back(p->name());
      continue;
    }
    const std::size_t n = ir::flat_count(p->type());
    for (std::size_t k = 0; k < n; ++k) names.push_back(p->name() + "_" + std::to_string(k));
  }
  std::vector<std::string> fields;
  std::set<std::string> emitted;
  for (std::string field : names) {
    std::replace_if(
        field.begin(), field.end(), [](char c) { return !word_char(c); }, '_');
    if (!emitted.insert(field).second) {
      throw TvmRefuses("Sanitized input tensor name clash: " + field);
    }
    if (field.empty() || (field[0] >= '0' && field[0] <= '9') ||
        std::find(kCKeywords.begin(), kCKeywords.end(), field) != kCKeywords.end()) {
      throw TvmRefuses("the input field " + field +
                       " is not a C identifier: TVM's header does "
                       "not compile");
    }
    fields.push_back(std::move(field));
  }
  return fields;
}

}  // namespace aotfuzz::reference
