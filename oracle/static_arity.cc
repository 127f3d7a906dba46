// Reads the call sites of the emitted executor back from the C text.
#include "oracle/static_arity.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

namespace aotfuzz::oracle {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The body of the executor's definition (between its braces), skipping the prototype.
std::string_view executor_body(std::string_view src, std::string_view mod_name) {
  std::string executor = aot::mangled_module_name(mod_name) + std::string(kExecutorSuffixes[0]);
  for (std::string_view suffix : kExecutorSuffixes) {
    const std::string name = aot::mangled_module_name(mod_name) + std::string(suffix);
    if (src.find("int32_t " + name + "(") != std::string_view::npos) executor = name;
  }
  const std::string head = "int32_t " + executor + "(";
  for (std::size_t pos = src.find(head); pos != std::string_view::npos;
       pos = src.find(head, pos + 1)) {
    if (pos > 0 && ident_char(src[pos - 1])) continue;
    const std::size_t close = src.find(')', pos + head.size());
    if (close == std::string_view::npos) break;
    std::size_t i = close + 1;
    while (i < src.size() && (src[i] == ' ' || src[i] == '\t')) ++i;
    if (i >= src.size() || src[i] != '{') continue;  // a prototype
    int depth = 0;
    for (std::size_t j = i; j < src.size(); ++j) {
      if (src[j] == '{') ++depth;
      if (src[j] == '}' && --depth == 0) return src.substr(i + 1, j - i - 1);
    }
    throw StaticArityError("the body of " + executor + " is not closed");
  }
  throw StaticArityError("no definition of " + executor + " in the C source");
}

}  // namespace

std::vector<aot::CallSiteInfo> static_arity(std::string_view c_source, std::string_view mod_name) {
  const std::string_view body = executor_body(c_source, mod_name);
  std::vector<aot::CallSiteInfo> out;
  std::size_t start = 0;
  int line_no = 0;
  while (start < body.size()) {
    std::size_t end = body.find('\n', start);
    if (end == std::string_view::npos) end = body.size();
    const std::string_view line = trim(body.substr(start, end - start));
    start = end + 1;
    ++line_no;
    // `if (f(...) != 0) return -1;` (ours, and TVM's packed calls) or `(void)f(...);` (TVM's
    // unpacked calls).
    std::size_t first = 0;
    if (line.substr(0, 4) == "if (") {
      first = 4;
    } else if (line.substr(0, 6) == "(void)") {
      first = 6;
    } else {
      continue;
    }
    std::size_t i = first;
    while (i < line.size() && ident_char(line[i])) ++i;
    const std::string callee(line.substr(first, i - first));
    if (callee.empty() || i >= line.size() || line[i] != '(') continue;  // not a call
    // The C runtime's own functions (the workspace) are not calls of the model.
    if (callee.starts_with("TVMBackend")) continue;
    // Split the arguments at top-level commas.
    std::vector<std::string_view> args;
    int depth = 1;
    std::size_t arg_start = i + 1;
    std::size_t j = i + 1;
    for (; j < line.size() && depth > 0; ++j) {
      const char c = line[j];
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if ((c == ',' && depth == 1) || depth == 0) {
        args.push_back(trim(line.substr(arg_start, j - arg_start)));
        arg_start = j + 1;
      }
    }
    if (depth != 0) {
      throw StaticArityError("executor line " + std::to_string(line_no) + ": unbalanced call of " +
                             callee);
    }
    if (args.size() == 1 && args[0].empty()) args.clear();
    aot::CallSiteInfo site;
    site.callee = callee;
    if (!args.empty() && args[0] == "(TVMValue*) stack_value") {
      site.packed = true;
      if (args.size() < 3) {
        throw StaticArityError("executor line " + std::to_string(line_no) + ": packed call of " +
                               callee + " without num_args");
      }
      const std::string n(args[2]);
      std::size_t used = 0;
      try {
        site.num_args = std::stoi(n, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != n.size()) {
        throw StaticArityError("executor line " + std::to_string(line_no) + ": num_args \"" + n +
                               "\" of " + callee + " is not a number");
      }
    } else {
      site.packed = false;
      site.num_args = static_cast<int>(args.size());
    }
    out.push_back(std::move(site));
  }
  return out;
}

namespace {

// The parameter list and the body (between the braces) of the C definition of `name`.
struct Definition {
  std::string_view params, body;
};

std::optional<Definition> find_definition(std::string_view c_source, std::string_view name) {
  const std::string head = std::string(name) + "(";
  for (std::size_t pos = c_source.find(head); pos != std::string_view::npos;
       pos = c_source.find(head, pos + 1)) {
    if (pos > 0 && ident_char(c_source[pos - 1])) continue;
    // A definition: a type before the name on its line, and `{` after the closing parenthesis.
    const std::size_t line_start = c_source.rfind('\n', pos) + 1;
    const std::string_view before = trim(c_source.substr(line_start, pos - line_start));
    if (before.empty() || before.find_first_of("=(;,") != std::string_view::npos) continue;
    int depth = 0;
    std::size_t j = pos + head.size() - 1;
    for (; j < c_source.size(); ++j) {
      if (c_source[j] == '(') ++depth;
      if (c_source[j] == ')' && --depth == 0) break;
    }
    std::size_t k = j + 1;
    while (k < c_source.size() && std::isspace(static_cast<unsigned char>(c_source[k]))) ++k;
    if (k >= c_source.size() || c_source[k] != '{') continue;  // a prototype or a call
    std::size_t close = k;
    for (int braces = 0; close < c_source.size(); ++close) {
      if (c_source[close] == '{') ++braces;
      if (c_source[close] == '}' && --braces == 0) break;
    }
    return Definition{c_source.substr(pos + head.size(), j - pos - head.size()),
                      c_source.substr(k + 1, close - k - 1)};
  }
  return std::nullopt;
}

}  // namespace

std::optional<int> definition_arity(std::string_view c_source, std::string_view name) {
  const auto def = find_definition(c_source, name);
  if (!def) return std::nullopt;
  const std::string_view params = trim(def->params);
  if (params.empty() || params == "void") return 0;
  int depth = 0, commas = 0;
  for (char c : params) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) ++commas;
  }
  return commas + 1;
}

std::optional<int> packed_definition_arity(std::string_view c_source, std::string_view name) {
  const auto def = find_definition(c_source, name);
  if (!def) return std::nullopt;
  constexpr std::string_view kRead = "((TVMValue*)args)[";
  int most = -1;
  for (std::size_t at = def->body.find(kRead); at != std::string_view::npos;
       at = def->body.find(kRead, at + 1)) {
    std::size_t i = at + kRead.size();
    while (i < def->body.size() && (def->body[i] == '(' || def->body[i] == ' ')) ++i;
    int index = 0;
    bool digits = false;
    for (; i < def->body.size() && std::isdigit(static_cast<unsigned char>(def->body[i])); ++i) {
      index = index * 10 + (def->body[i] - '0');
      digits = true;
    }
    if (digits) most = std::max(most, index);
  }
  if (most < 0) return std::nullopt;
  return most + 1;
}

std::vector<std::pair<aot::CallSiteInfo, aot::CallSiteInfo>> arity_differences(
    const std::vector<aot::CallSiteInfo>& expected, const std::vector<aot::CallSiteInfo>& actual) {
  std::vector<std::pair<aot::CallSiteInfo, aot::CallSiteInfo>> out;
  const aot::CallSiteInfo none{"", -1, true};
  for (std::size_t i = 0; i < std::max(expected.size(), actual.size()); ++i) {
    const auto& e = i < expected.size() ? expected[i] : none;
    const auto& a = i < actual.size() ? actual[i] : none;
    if (e.callee != a.callee || e.num_args != a.num_args) out.emplace_back(e, a);
  }
  return out;
}

}  // namespace aotfuzz::oracle
