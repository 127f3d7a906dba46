// The reader of TVM's C interface header: line-oriented, as interface_c.cc writes it (one member
// per line, `#define NAME VALUE` on one line, the run prototype's parameters one per line).
#include "tvm/c_interface_header.h"

#include <cctype>
#include <charconv>

namespace aotfuzz::tvm {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// `text` from the first occurrence of `head` at the start of a line; npos if none.
std::size_t line_starting(std::string_view text, std::string_view head) {
  std::size_t at = 0;
  while ((at = text.find(head, at)) != std::string_view::npos) {
    if (at == 0 || text[at - 1] == '\n') return at;
    ++at;
  }
  return std::string_view::npos;
}

std::map<std::string, std::int64_t> integer_macros(std::string_view text) {
  std::map<std::string, std::int64_t> out;
  for (std::string_view line : lines_of(text)) {
    line = trim(line);
    if (line.rfind("#define ", 0) != 0) continue;
    line = trim(line.substr(8));
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos) continue;
    const std::string_view value = trim(line.substr(space + 1));
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec == std::errc() && ptr == value.data() + value.size()) {
      out[std::string(line.substr(0, space))] = v;
    }
  }
  return out;
}

bool declares_function(std::string_view text, const std::string& returns,
                       const std::string& function) {
  return line_starting(text, returns + " " + function + "(") != std::string_view::npos;
}

}  // namespace

std::string constant_style(const std::string& prefix, const std::string& name) {
  std::string out = prefix + "_" + name;
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> struct_fields(std::string_view text, const std::string& name) {
  const std::size_t at = line_starting(text, "struct " + name + " {");
  if (at == std::string_view::npos) return {};
  const std::size_t close = text.find("};", at);
  if (close == std::string_view::npos) {
    throw HeaderError("struct " + name + " has no end");
  }
  std::vector<std::string> out;
  const std::string_view body = text.substr(at, close - at);
  const auto lines = lines_of(body);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = trim(lines[i]);
    if (line.empty()) continue;
    if (line.rfind("void* ", 0) != 0 || line.back() != ';' ||
        !is_identifier(trim(line.substr(6, line.size() - 7)))) {
      throw HeaderError("struct " + name +
                        " has a member that is no `void* <name>;`: " + std::string(line));
    }
    out.emplace_back(trim(line.substr(6, line.size() - 7)));
  }
  return out;
}

std::vector<std::string> prototype_struct_params(std::string_view text,
                                                 const std::string& function) {
  const std::size_t at = line_starting(text, "int32_t " + function + "(");
  if (at == std::string_view::npos) throw HeaderError("no declaration of " + function);
  const std::size_t open = text.find('(', at);
  const std::size_t close = text.find(')', open);
  if (close == std::string_view::npos) throw HeaderError(function + "'s parameters have no end");
  std::vector<std::string> out;
  std::string_view params = text.substr(open + 1, close - open - 1);
  if (trim(params).empty() || trim(params) == "void") return out;
  while (!params.empty()) {
    const std::size_t comma = params.find(',');
    const std::string_view param =
        trim(params.substr(0, comma == std::string_view::npos ? params.size() : comma));
    params = comma == std::string_view::npos ? std::string_view() : params.substr(comma + 1);
    const std::size_t star = param.find('*');
    const std::string_view type = trim(param.substr(0, star));
    if (param.rfind("struct ", 0) != 0 || star == std::string_view::npos ||
        !is_identifier(trim(type.substr(7))) || !is_identifier(trim(param.substr(star + 1)))) {
      throw HeaderError(function +
                        " takes a parameter that is no struct pointer: " + std::string(param));
    }
    out.emplace_back(trim(type.substr(7)));
  }
  return out;
}

InterfaceHeader read_interface_header(std::string_view text, const std::string& prefix) {
  InterfaceHeader h;
  h.integer_macros = integer_macros(text);
  h.inputs = struct_fields(text, prefix + "_inputs");
  h.outputs = struct_fields(text, prefix + "_outputs");
  h.devices = struct_fields(text, prefix + "_devices");
  h.map_inputs = declares_function(text, "struct " + prefix + "_inputs", prefix + "_map_inputs");
  h.map_outputs = declares_function(text, "struct " + prefix + "_outputs", prefix + "_map_outputs");
  for (const std::string& field : struct_fields(text, prefix + "_workspace_pools")) {
    InterfacePool pool;
    pool.field = field;
    const std::string workspace = constant_style(prefix, field + "_WORKSPACE_POOL_SIZE");
    const std::string constant = constant_style(prefix, field + "_CONSTANT_POOL_SIZE");
    if (const auto it = h.integer_macros.find(workspace); it != h.integer_macros.end()) {
      pool.size_macro = workspace;
      pool.size = it->second;
    } else if (const auto c = h.integer_macros.find(constant); c != h.integer_macros.end()) {
      pool.constant = true;
      pool.size_macro = constant;
      pool.size = c->second;
      pool.data_macro = constant_style(prefix, field + "_CONSTANT_POOL_DATA");
      if (line_starting(text, "#define " + pool.data_macro) == std::string_view::npos) {
        throw HeaderError("constant pool " + field + " has no " + pool.data_macro);
      }
    } else {
      throw HeaderError("pool " + field + " has neither " + workspace + " nor " + constant);
    }
    if (pool.size < 0) throw HeaderError(pool.size_macro + " is negative");
    h.pools.push_back(std::move(pool));
  }
  for (const std::string& type : prototype_struct_params(text, prefix + "_run")) {
    const std::string what = type.rfind(prefix + "_", 0) == 0 ? type.substr(prefix.size() + 1) : "";
    if (what != "inputs" && what != "outputs" && what != "workspace_pools" && what != "devices") {
      throw HeaderError(prefix + "_run takes a struct " + type +
                        ", which the harness does not know");
    }
    h.run_params.push_back(what);
  }
  return h;
}

}  // namespace aotfuzz::tvm
