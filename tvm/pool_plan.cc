// The pool-plan oracle: TVM's USMP plan against its own C, header and metadata.json.
#include "tvm/pool_plan.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <string_view>

#include "aot/codegen.h"

namespace aotfuzz::tvm {

using oracle::CalleeKind;
using oracle::PoolMisaligned;
using oracle::PoolOverlap;
using oracle::PoolSizeDisagreement;
using oracle::PoolTooSmall;
using oracle::Stage;
using oracle::Verdict;
using oracle::WorkspaceLeftover;

namespace {

using json = nlohmann::json;

// ---- The plan -------------------------------------------------------------------------------

struct PlanBuffer {
  std::string name;
  std::int64_t size = 0;
  std::int64_t alignment = 0;
  std::string pool;
  std::int64_t offset = 0;
  std::set<std::string> conflicts;
};

struct PlanPool {
  std::string name;
  bool internal = true;
  bool constant = false;
  std::optional<std::int64_t> size;
};

struct Plan {
  std::vector<PlanBuffer> buffers;
  std::vector<PlanPool> pools;
  const PlanPool* pool(const std::string& name) const {
    for (const auto& p : pools) {
      if (p.name == name) return &p;
    }
    return nullptr;
  }
};

bool is_int(const json& j, const char* key) {
  return j.contains(key) && j.at(key).is_number_integer();
}
bool is_string(const json& j, const char* key) { return j.contains(key) && j.at(key).is_string(); }

// The plan in driver.py's form, or nullopt: a plan of another shape is no evidence.
std::optional<Plan> read_plan(const json& j) {
  if (!j.is_object() || !j.contains("buffers") || !j.at("buffers").is_array() ||
      !j.contains("pools") || !j.at("pools").is_array()) {
    return std::nullopt;
  }
  Plan plan;
  for (const auto& p : j.at("pools")) {
    if (!p.is_object() || !is_string(p, "name")) return std::nullopt;
    PlanPool pool;
    pool.name = p.at("name").get<std::string>();
    if (p.contains("internal") && p.at("internal").is_boolean()) pool.internal = p.at("internal");
    if (p.contains("constant") && p.at("constant").is_boolean()) pool.constant = p.at("constant");
    if (is_int(p, "size")) pool.size = p.at("size").get<std::int64_t>();
    plan.pools.push_back(std::move(pool));
  }
  for (const auto& b : j.at("buffers")) {
    if (!b.is_object() || !is_string(b, "name") || !is_int(b, "size") || !is_int(b, "offset") ||
        !is_string(b, "pool")) {
      return std::nullopt;
    }
    PlanBuffer buffer;
    buffer.name = b.at("name").get<std::string>();
    buffer.size = b.at("size").get<std::int64_t>();
    buffer.offset = b.at("offset").get<std::int64_t>();
    buffer.pool = b.at("pool").get<std::string>();
    if (is_int(b, "alignment")) buffer.alignment = b.at("alignment").get<std::int64_t>();
    if (b.contains("conflicts") && b.at("conflicts").is_array()) {
      for (const auto& c : b.at("conflicts")) {
        if (c.is_string()) buffer.conflicts.insert(c.get<std::string>());
      }
    }
    if (buffer.size < 0 || buffer.offset < 0) return std::nullopt;
    plan.buffers.push_back(std::move(buffer));
  }
  return plan;
}

// ---- C text ---------------------------------------------------------------------------------

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

// `src` with comments, string and character literals' contents and preprocessor lines blanked
// (newlines kept), so that a name in a comment is no use of a buffer and a brace in a string
// opens nothing.
std::string code_only(std::string_view src) {
  std::string out(src);
  bool line_start = true;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    if (c == '\n') {
      line_start = true;
      continue;
    }
    if (line_start && c == '#') {
      for (; i < out.size() && out[i] != '\n'; ++i) {
        if (out[i] == '\\' && i + 1 < out.size() && out[i + 1] == '\n') {
          out[i] = ' ';
          ++i;  // the continued line's newline stays
          continue;
        }
        out[i] = ' ';
      }
      --i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c)) == 0) line_start = false;
    if (c == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      for (; i < out.size() && out[i] != '\n'; ++i) out[i] = ' ';
      --i;
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '*') {
      out[i] = out[i + 1] = ' ';
      for (i += 2; i < out.size() && !(out[i] == '*' && i + 1 < out.size() && out[i + 1] == '/');
           ++i) {
        if (out[i] != '\n') out[i] = ' ';
      }
      if (i < out.size()) out[i] = out[i + 1] = ' ', ++i;
    } else if (c == '"' || c == '\'') {
      for (++i; i < out.size() && out[i] != c && out[i] != '\n'; ++i) {
        if (out[i] == '\\' && i + 1 < out.size()) out[i++] = ' ';
        out[i] = ' ';
      }
    }
  }
  return out;
}

struct CFunction {
  std::string name;
  std::string params;
  std::string body;  // code only (code_only), between the braces
};

// The top-level function definitions of a C file. `extern "C" {` (TVM's files open one under
// `#ifdef __cplusplus`, which code_only blanks) is not a definition.
std::vector<CFunction> c_functions(std::string_view raw) {
  const std::string src = code_only(raw);
  std::vector<CFunction> out;
  std::string header;
  int depth = 0;
  bool in_function = false;
  std::size_t body_start = 0;
  CFunction current;
  for (std::size_t i = 0; i < src.size(); ++i) {
    const char c = src[i];
    if (c == '{') {
      if (depth == 0) {
        const std::string_view h = trim(header);
        if (!h.empty() && h.back() == ')') {
          int parens = 0;
          std::size_t open = h.size();
          for (std::size_t k = h.size(); k-- > 0;) {
            if (h[k] == ')') ++parens;
            if (h[k] == '(' && --parens == 0) {
              open = k;
              break;
            }
          }
          std::size_t end = open;
          while (end > 0 && std::isspace(static_cast<unsigned char>(h[end - 1])) != 0) --end;
          std::size_t begin = end;
          while (begin > 0 && ident_char(h[begin - 1])) --begin;
          if (open < h.size() && begin < end) {
            current.name = std::string(h.substr(begin, end - begin));
            current.params = std::string(h.substr(open + 1, h.size() - open - 2));
            in_function = true;
            body_start = i + 1;
          }
        } else if (h.starts_with("extern") && h.find_first_of("(=") == std::string_view::npos) {
          header.clear();
          continue;
        }
      }
      ++depth;
    } else if (c == '}') {
      if (depth == 0) continue;
      if (--depth == 0) {
        if (in_function) {
          current.body = src.substr(body_start, i - body_start);
          out.push_back(current);
          in_function = false;
        }
        header.clear();
      }
    } else if (depth == 0) {
      if (c == ';') {
        header.clear();
      } else {
        header += c;
      }
    }
  }
  return out;
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

// A binding ConvertPoolAllocationsToOffsets leaves and CodeGenC prints: `void* sid_2_let =
// (&(global_workspace_1_var[64]));`, the value possibly cast (`(uint8_t*)`), the pool variable
// possibly cast inside (`((uint8_t*)global_workspace_1_var)[64]`), the index possibly cast.
struct Let {
  std::string var;
  std::string pool_var;
  std::int64_t offset = 0;
};

std::optional<Let> read_let(std::string_view line) {
  static const std::regex kLet(
      R"(^\s*(?:[A-Za-z_]\w*\s*\**\s+)*\**\s*([A-Za-z_]\w*)\s*=\s*)"
      R"((?:\(\s*[A-Za-z_]\w*\s*\*+\s*\)\s*)?)"
      R"(\(\s*&\s*\(\s*(?:\(\s*\(\s*[A-Za-z_]\w*\s*\*+\s*\)\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*)))"
      R"(\s*\[\s*(?:\(\s*[A-Za-z_]\w*\s*\)\s*)?(\d+)\s*\]\s*\)\s*\)\s*;\s*$)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(line.begin(), line.end(), m, kLet)) return std::nullopt;
  Let let;
  let.var = m[1].str();
  let.pool_var = m[2].matched ? m[2].str() : m[3].str();
  try {
    let.offset = std::stoll(m[4].str());
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return let;
}

// The pool a pool variable stands for: UpdateFunctionScopeInfo names it
// `<pool>_<counter>_var`, and CodeGenC adds `_<k>` where a second variable has that name (the
// packed API's handle and the data pointer bound from it); "" for any other name.
std::string pool_of_var(const std::string& var) {
  static const std::regex kPoolVar(R"(^(.+)_\d+_var(?:_\d+)?$)");
  std::smatch m;
  if (!std::regex_match(var, m, kPoolVar)) return "";
  return m[1].str();
}

std::vector<std::string> identifiers(std::string_view line) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < line.size();) {
    if (ident_char(line[i]) && std::isdigit(static_cast<unsigned char>(line[i])) == 0 &&
        (i == 0 || !ident_char(line[i - 1]))) {
      std::size_t j = i;
      while (j < line.size() && ident_char(line[j])) ++j;
      out.emplace_back(line.substr(i, j - i));
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

// The function a line calls, when it calls one of the model's (`<prefix>_...(`) or TVM's packed
// call `TVMFuncCall(<handle>, ...)`; "" otherwise.
std::string callee_of(std::string_view line, const std::string& prefix) {
  for (std::size_t at = line.find(prefix); at != std::string_view::npos;
       at = line.find(prefix, at + 1)) {
    if (at > 0 && ident_char(line[at - 1])) continue;
    std::size_t j = at;
    while (j < line.size() && ident_char(line[j])) ++j;
    std::size_t k = j;
    while (k < line.size() && line[k] == ' ') ++k;
    if (k < line.size() && line[k] == '(') return std::string(line.substr(at, j - at));
  }
  const std::size_t call = line.find("TVMFuncCall(");
  if (call != std::string_view::npos) {
    const auto names = identifiers(line.substr(call + 12));
    return names.empty() ? "TVMFuncCall" : names.front();
  }
  return "";
}

// Which parameter positions of a callee's C definition its body touches: a host kernel may take a
// tensor it never reads (a field of a tuple parameter it does not use), and TVM's liveness,
// which follows the accesses inside a kernel, then ends that buffer earlier. Packed: the
// DLTensor of `((TVMValue*)args)[k]` and its data pointer; direct: the parameter itself.
std::map<int, bool> touched_params(const CFunction& f) {
  static const std::regex kArg(
      R"(\s*void\*\s+([A-Za-z_]\w*)\s*=\s*\(\(\(TVMValue\*\)args\)\[(\d+)\]\.v_handle\);\s*)");
  static const std::regex kData(
      R"(\s*void\*\s+([A-Za-z_]\w*)\s*=\s*\(\(\(DLTensor\*\)([A-Za-z_]\w*)\)\[0\]\.data\);\s*)");
  std::map<int, bool> out;
  const auto lines = lines_of(f.body);
  std::map<std::string, int> handle_at;  // packed: handle variable -> position
  std::map<std::string, int> data_at;    // packed: data pointer -> position
  std::map<std::string, std::size_t> defined_on;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::match_results<std::string_view::const_iterator> m;
    if (std::regex_match(lines[i].begin(), lines[i].end(), m, kArg)) {
      handle_at[m[1].str()] = std::stoi(m[2].str());
    } else if (std::regex_match(lines[i].begin(), lines[i].end(), m, kData)) {
      if (auto it = handle_at.find(m[2].str()); it != handle_at.end()) {
        data_at[m[1].str()] = it->second;
        defined_on[m[1].str()] = i;
      }
    }
  }
  if (!handle_at.empty()) {
    for (const auto& [name, at] : handle_at) out[at] = false;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      for (const auto& id : identifiers(lines[i])) {
        if (auto it = data_at.find(id); it != data_at.end() && defined_on[id] != i) {
          out[it->second] = true;
        }
      }
    }
    return out;
  }
  // Direct: `int32_t f(float* p0, float* p1, float* T_add, uint8_t* global_workspace_2_var)`.
  std::set<std::string> used;
  for (const auto& id : identifiers(f.body)) used.insert(id);
  int at = 0;
  std::size_t start = 0;
  const std::string_view params = f.params;
  while (start <= params.size()) {
    std::size_t end = params.find(',', start);
    if (end == std::string_view::npos) end = params.size();
    const auto names = identifiers(params.substr(start, end - start));
    if (!names.empty()) out[at] = used.contains(names.back());
    ++at;
    start = end + 1;
  }
  return out;
}

// The buffers a call passes, by argument position: a direct call's arguments, or a packed call's
// `((TVMValue*)stack_value)[j]` pointing at `((DLTensor*)stack_array)[i]` whose data was set
// from a buffer in the lines before it.
std::map<std::string, std::set<int>> call_arguments(const std::vector<std::string_view>& lines,
                                                    const std::string& callee) {
  static const std::regex kData(
      R"(\s*\(\(\(DLTensor\*\)stack_array\)\[(\d+)\]\.data\)\s*=\s*([A-Za-z_]\w*);\s*)");
  static const std::regex kValue(R"(\s*\(\(\(TVMValue\*\)stack_value\)\[(\d+)\]\.v_handle\)\s*=\s*)"
                                 R"(\(\(\(DLTensor\*\)stack_array\)\s*\+\s*(\d+)\);\s*)");
  std::map<std::string, std::set<int>> out;
  std::map<int, std::string> array_data;
  for (std::string_view line : lines) {
    std::match_results<std::string_view::const_iterator> m;
    if (std::regex_match(line.begin(), line.end(), m, kData)) {
      array_data[std::stoi(m[1].str())] = m[2].str();
    } else if (std::regex_match(line.begin(), line.end(), m, kValue)) {
      if (auto it = array_data.find(std::stoi(m[2].str())); it != array_data.end()) {
        out[it->second].insert(std::stoi(m[1].str()));
      }
    }
  }
  if (!out.empty()) return out;
  // A direct call: `if (callee(a, b, c) != 0 ) return -1;`.
  const std::string_view last = lines.empty() ? std::string_view() : lines.back();
  const std::size_t at = last.find(callee + "(");
  if (at == std::string_view::npos) return out;
  int depth = 0, position = 0;
  std::size_t arg_start = at + callee.size() + 1;
  for (std::size_t j = at + callee.size(); j < last.size(); ++j) {
    const char c = last[j];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if ((c == ',' && depth == 1) || (c == ')' && depth == 0)) {
      const std::string_view arg = trim(last.substr(arg_start, j - arg_start));
      const auto names = identifiers(arg);
      if (names.size() == 1 && names.front() == arg) out[names.front()].insert(position);
      ++position;
      arg_start = j + 1;
      if (depth == 0) break;
    }
  }
  return out;
}

// ---- Liveness --------------------------------------------------------------------------------

// The executor's steps: 0 before the first call (the application wrote the inputs), 1..calls the
// calls in order, then possibly the executor's own code after the last call, and `end` after the
// run (the application reads the outputs).
struct Steps {
  std::vector<std::string> callee;  // index = step; "" for steps that are no call
  // The step calls a function whose statements TVM's USMP sees (a function of TVM's own module:
  // a host kernel, or a region a RelayToTIR hook lowered, such as UMA's), so its liveness
  // follows the callee's loops, where an external function is one statement to it
  // (tir/usmp/analysis/extract_buffer_info.cc, VisitExpr_ of a call).
  std::vector<bool> seen_inside;
  int end = 0;
  bool is_call(int step) const {
    return step > 0 && step < static_cast<int>(callee.size()) && !callee[step].empty();
  }
};

struct Liveness {
  Steps steps;
  std::map<std::string, std::set<int>> live;     // plan buffer name -> steps at which it is live
  std::map<std::string, std::int64_t> c_offset;  // plan buffer name -> offset in the C
};

const PlanBuffer* buffer_of_let(const Plan& plan, const Let& let, bool in_main) {
  if (!let.var.ends_with("_let")) return nullptr;  // CodeGenC renamed it: which one is unknown
  const std::string stem = let.var.substr(0, let.var.size() - 4);
  const std::string pool = pool_of_var(let.pool_var);
  // Intermediates keep their variable's name (sid_<k>, unique in main); workspace-io's buffers
  // are named after the tensor, their variables `<name>_buffer_var` (AOTExecutorCodegen's
  // CreateIOVar). A callee's own allocation may share its name with another callee's: the plan
  // then appends a count (BufferInfoExtractor's GetUniqueBufferName: pool_sum, pool_sum2) and
  // the C does not, so such a name is used only when no counted one is in the plan.
  std::vector<const PlanBuffer*> candidates;
  for (const auto& b : plan.buffers) {
    if (b.pool != pool) continue;
    const bool counted = !in_main && b.name.size() > stem.size() && b.name.starts_with(stem) &&
                         std::all_of(b.name.begin() + static_cast<std::ptrdiff_t>(stem.size()),
                                     b.name.end(), [](char c) { return std::isdigit(c) != 0; });
    if (b.name == stem || b.name + "_buffer_var" == stem || counted) candidates.push_back(&b);
  }
  return candidates.size() == 1 ? candidates.front() : nullptr;
}

// The tensors workspace-io maps into pools (`struct ... <prefix>_map_inputs(...)`), by name.
std::set<std::string> io_names(const std::vector<CFunction>& functions, const std::string& name) {
  static const std::regex kField(R"(^\s*\.([A-Za-z_]\w*)\s*=)");
  std::set<std::string> out;
  for (const auto& f : functions) {
    if (f.name != name) continue;
    for (std::string_view line : lines_of(f.body)) {
      std::match_results<std::string_view::const_iterator> m;
      if (std::regex_search(line.begin(), line.end(), m, kField)) out.insert(m[1].str());
    }
  }
  return out;
}

// Liveness read off `__tvm_main__`, or nullopt when it is not there or not of TVM's shape.
std::optional<Liveness> read_liveness(const Plan& plan,
                                      const std::vector<std::pair<std::string, std::string>>& files,
                                      const std::string& prefix, const std::string& mod_name) {
  std::vector<CFunction> functions;
  for (const auto& [name, text] : files) {
    if (name.ends_with(".c")) {
      for (auto& f : c_functions(text)) functions.push_back(std::move(f));
    }
  }
  const CFunction* main = nullptr;
  for (const auto& f : functions) {
    if (f.name == prefix + "___tvm_main__" || f.name == prefix + "_run_model") main = &f;
  }
  if (main == nullptr) return std::nullopt;

  Liveness out;
  std::map<std::string, const PlanBuffer*> lets;  // let variable -> plan buffer
  std::map<const PlanBuffer*, std::set<int>> used;
  std::map<std::string, const CFunction*> by_name;
  for (const auto& f : functions) by_name.emplace(f.name, &f);
  std::vector<std::string_view> step_lines;
  out.steps.callee.push_back("");  // step 0
  out.steps.seen_inside.push_back(false);
  bool any_let = false;
  // A use is one TVM's liveness sees too: an argument of an external function (TVM visits a
  // call it has no function for as one statement), a host kernel's or hook-lowered function's
  // argument only where its body touches it, any use in the executor's own statements.
  auto close_step = [&](const std::string& callee) {
    const int step = static_cast<int>(out.steps.callee.size());
    out.steps.callee.push_back(callee);
    const auto kind = oracle::callee_kind_of(callee, mod_name);
    const bool inside =
        kind == oracle::CalleeKind::kKernel || kind == oracle::CalleeKind::kHookLowered;
    out.steps.seen_inside.push_back(inside);
    std::set<const PlanBuffer*> pending;
    for (std::string_view l : step_lines) {
      for (const auto& id : identifiers(l)) {
        if (auto it = lets.find(id); it != lets.end()) pending.insert(it->second);
      }
    }
    if (inside) {
      const auto def = by_name.find(callee);
      const auto touched =
          def == by_name.end() ? std::map<int, bool>{} : touched_params(*def->second);
      const auto args = call_arguments(step_lines, callee);
      std::set<const PlanBuffer*> kept;
      for (const auto& [var, positions] : args) {
        const auto let = lets.find(var);
        if (let == lets.end()) continue;
        for (int p : positions) {
          if (auto t = touched.find(p); t != touched.end() && t->second) kept.insert(let->second);
        }
      }
      pending = std::move(kept);
    }
    for (const PlanBuffer* b : pending) used[b].insert(step);
    step_lines.clear();
  };
  for (std::string_view line : lines_of(main->body)) {
    if (auto let = read_let(line)) {
      any_let = true;
      if (const PlanBuffer* b = buffer_of_let(plan, *let, /*in_main=*/true)) {
        lets[let->var] = b;
        out.c_offset[b->name] = let->offset;
      }
      continue;
    }
    step_lines.push_back(line);
    const std::string callee = callee_of(line, prefix + "_");
    if (!callee.empty()) close_step(callee);
  }
  bool trailing = false;
  for (std::string_view l : step_lines) {
    for (const auto& id : identifiers(l)) trailing = trailing || lets.contains(id);
  }
  if (trailing) close_step("");
  out.steps.end = static_cast<int>(out.steps.callee.size());
  // Bindings and no call read: not the executor this reader knows.
  if (any_let && out.steps.end == 1) return std::nullopt;

  const auto inputs = io_names(functions, prefix + "_map_inputs");
  const auto outputs = io_names(functions, prefix + "_map_outputs");
  for (const auto& [b, steps] : used) {
    int first = *steps.begin();
    int last = *steps.rbegin();
    if (inputs.contains(b->name)) first = 0;
    if (outputs.contains(b->name)) last = out.steps.end;
    auto& live = out.live[b->name];
    for (int s = first; s <= last; ++s) live.insert(s);
  }
  // Buffers bound inside a callee (its own temporaries) live at that callee's calls.
  for (const auto& f : functions) {
    if (&f == main) continue;
    std::vector<int> calls;
    for (int s = 1; s < out.steps.end; ++s) {
      if (out.steps.callee[s] == f.name) calls.push_back(s);
    }
    for (std::string_view line : lines_of(f.body)) {
      const auto let = read_let(line);
      if (!let) continue;
      const PlanBuffer* b = buffer_of_let(plan, *let, /*in_main=*/false);
      if (b == nullptr || out.c_offset.contains(b->name)) continue;
      out.c_offset[b->name] = let->offset;
      for (int s : calls) out.live[b->name].insert(s);
    }
  }
  // Constants are in the pool, initialised, for the whole run.
  for (const auto& b : plan.buffers) {
    const PlanPool* pool = plan.pool(b.pool);
    if (pool == nullptr || !pool->constant) continue;
    auto& live = out.live[b.name];
    for (int s = 0; s <= out.steps.end; ++s) live.insert(s);
  }
  return out;
}

// ---- The checks ------------------------------------------------------------------------------

struct Placed {
  const PlanBuffer* buffer;
  std::int64_t offset;
  std::int64_t end() const { return offset + buffer->size; }
};

// A step at which both are live that TVM's statement-level liveness cannot have ordered apart:
// any shared step but a call TVM sees inside (a host kernel's, a hook-lowered function's) or the
// executor's own code that is one's last and the other's first (TVM sees the statements inside
// it, so an input read in an earlier loop may share bytes with an output written in a later
// one; the run judges what the callee makes of that). An external function's arguments are all
// one statement to TVM, and steps 0 and end are the application's.
std::optional<int> live_at_once(const std::set<int>& a, const std::set<int>& b,
                                const Steps& steps) {
  for (int s : a) {
    if (!b.contains(s)) continue;
    const bool edge =
        (s == *a.rbegin() && s == *b.begin()) || (s == *b.rbegin() && s == *a.begin());
    const bool ordered_inside =
        s > 0 && s < steps.end &&
        (steps.callee[s].empty() || steps.seen_inside[s]);
    if (edge && ordered_inside) continue;
    return s;
  }
  return std::nullopt;
}

std::optional<Verdict> overlap(const std::vector<Placed>& placed,
                               const std::optional<Liveness>& liveness) {
  for (std::size_t i = 0; i < placed.size(); ++i) {
    for (std::size_t j = i + 1; j < placed.size(); ++j) {
      const Placed& a = placed[i];
      const Placed& b = placed[j];
      if (a.buffer->pool != b.buffer->pool || a.buffer->size == 0 || b.buffer->size == 0) continue;
      if (!(a.offset < b.end() && b.offset < a.end())) continue;
      const bool tvm = a.buffer->conflicts.contains(b.buffer->name) ||
                       b.buffer->conflicts.contains(a.buffer->name);
      std::optional<int> at;
      if (liveness) {
        const auto la = liveness->live.find(a.buffer->name);
        const auto lb = liveness->live.find(b.buffer->name);
        if (la != liveness->live.end() && lb != liveness->live.end()) {
          at = live_at_once(la->second, lb->second, liveness->steps);
        }
      }
      if (!tvm && !at) continue;
      const int call = at && liveness && liveness->steps.is_call(*at) ? *at : 0;
      return Verdict{Stage::kCodegen,
                     PoolOverlap{stable_pool_name(a.buffer->pool), a.buffer->name, b.buffer->name,
                                 a.offset, a.end(), b.offset, b.end(), tvm, call}};
    }
  }
  return std::nullopt;
}

std::optional<Verdict> misaligned(const Plan& plan, const std::vector<Placed>& placed,
                                  const oracle::CaseOptions& options) {
  for (const Placed& p : placed) {
    const PlanPool* pool = plan.pool(p.buffer->pool);
    const std::int64_t asked = pool != nullptr && pool->constant
                                   ? options.memory.constant_alignment
                                   : options.memory.workspace_alignment;
    for (std::int64_t alignment : {p.buffer->alignment, asked}) {
      if (alignment > 0 && p.offset % alignment != 0) {
        return Verdict{Stage::kCodegen, PoolMisaligned{stable_pool_name(p.buffer->pool),
                                                       p.buffer->name, p.offset, alignment}};
      }
    }
  }
  return std::nullopt;
}

// Each pool's sizes as TVM states them, by where they were read.
using PoolSizes = std::map<std::string, std::map<std::string, std::int64_t>>;

std::string upper_sanitized(const std::string& name) {
  std::string out;
  for (char c : name) {
    out += ident_char(c) ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : '_';
  }
  return out;
}

PoolSizes stated_sizes(const Plan& plan,
                       const std::vector<std::pair<std::string, std::string>>& files,
                       const std::string& prefix) {
  PoolSizes sizes;
  for (const auto& pool : plan.pools) {
    if (pool.size) sizes[pool.name]["plan"] = *pool.size;
  }
  // SourceModule's GenerateWorkspaceBuffer: `static uint8_t <pool>[N];` for an internal pool;
  // GenerateConstantBuffer ends an internal constant pool `static const struct <pool> {...}` with
  // `// of total size N bytes`. InterfaceCNode: `#define TVMGEN_<MOD>_<POOL>_WORKSPACE_POOL_SIZE
  // N` (and `_CONSTANT_POOL_SIZE`) for an external pool. Read line by line: the files hold the
  // constants' data too, too long for a regular expression over the whole text.
  static const std::regex kArray(R"(.*static\s+uint8_t\s+([A-Za-z_]\w*)\s*\[\s*(\d+)\s*\]\s*;\s*)");
  static const std::regex kTotal(R"(.*//\s*of total size (\d+) bytes\s*)");
  static const std::regex kMacro(
      R"(\s*#define\s+([A-Za-z_]\w*)_(?:WORKSPACE|CONSTANT)_POOL_SIZE\s+(\d+)\s*)");
  const std::string macro_prefix = upper_sanitized(prefix) + "_";
  for (const auto& [name, text] : files) {
    if (name == "crt_backend_api.c" || name == "crt_config.h") continue;
    std::string constant_pool;
    for (std::string_view line : lines_of(text)) {
      std::match_results<std::string_view::const_iterator> m;
      if (line.find("static const struct ") != std::string_view::npos) {
        const auto names = identifiers(line.substr(line.find("static const struct ") + 20));
        constant_pool = names.empty() ? "" : names.front();
      }
      if (line.find("static") != std::string_view::npos &&
          line.find("uint8_t") != std::string_view::npos &&
          std::regex_match(line.begin(), line.end(), m, kArray) && plan.pool(m[1].str())) {
        sizes[m[1].str()]["c"] = std::stoll(m[2].str());
      } else if (line.find("of total size") != std::string_view::npos &&
                 std::regex_match(line.begin(), line.end(), m, kTotal) &&
                 plan.pool(constant_pool)) {
        sizes[constant_pool]["c"] = std::stoll(m[1].str());
      } else if (line.find("_POOL_SIZE") != std::string_view::npos &&
                 std::regex_match(line.begin(), line.end(), m, kMacro)) {
        for (const auto& pool : plan.pools) {
          if (m[1].str() == macro_prefix + upper_sanitized(pool.name)) {
            sizes[pool.name]["header"] = std::stoll(m[2].str());
          }
        }
      }
    }
  }
  return sizes;
}

std::optional<Verdict> too_small(const Plan& plan, const std::vector<Placed>& placed,
                                 const PoolSizes& sizes) {
  for (const auto& pool : plan.pools) {
    const Placed* last = nullptr;
    for (const Placed& p : placed) {
      if (p.buffer->pool == pool.name && (last == nullptr || p.end() > last->end())) last = &p;
    }
    if (last == nullptr) continue;
    const auto it = sizes.find(pool.name);
    if (it == sizes.end()) continue;
    for (const char* source : {"plan", "c", "header"}) {
      const auto s = it->second.find(source);
      if (s != it->second.end() && s->second < last->end()) {
        return Verdict{Stage::kCodegen, PoolTooSmall{stable_pool_name(pool.name), s->second, source,
                                                     last->end(), last->buffer->name}};
      }
    }
  }
  return std::nullopt;
}

// metadata.json's main function: its workspace bytes, and the largest workspace an operator
// function of that device takes (Model Library Format's _build_function_memory_map adds it).
struct MainWorkspace {
  std::int64_t main = 0;
  std::int64_t largest_operator = 0;
};

std::optional<MainWorkspace> metadata_workspace(const std::string& metadata_json,
                                                const std::string& mod_name) {
  if (metadata_json.empty()) return std::nullopt;
  const json j = json::parse(metadata_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("modules") || !j.at("modules").is_object()) {
    return std::nullopt;
  }
  const json& modules = j.at("modules");
  const json* module = nullptr;
  if (modules.contains(mod_name)) {
    module = &modules.at(mod_name);
  } else if (modules.size() == 1) {
    module = &modules.begin().value();
  }
  if (module == nullptr || !module->is_object()) return std::nullopt;
  const json* functions = nullptr;
  if (module->contains("memory") && module->at("memory").is_object() &&
      module->at("memory").contains("functions")) {
    functions = &module->at("memory").at("functions");
  }
  if (functions == nullptr || !functions->is_object() || !functions->contains("main")) {
    return std::nullopt;
  }
  const json& main = functions->at("main");
  // One device: with several the entries are per device, and the pools' share is not known here.
  if (!main.is_array() || main.size() != 1 || !main[0].is_object() ||
      !is_int(main[0], "workspace_size_bytes")) {
    return std::nullopt;
  }
  MainWorkspace out;
  out.main = main[0].at("workspace_size_bytes").get<std::int64_t>();
  if (functions->contains("operator_functions") && functions->at("operator_functions").is_array()) {
    for (const auto& f : functions->at("operator_functions")) {
      if (!f.is_object() || !f.contains("workspace") || !f.at("workspace").is_array()) continue;
      for (const auto& w : f.at("workspace")) {
        if (w.is_object() && is_int(w, "workspace_size_bytes")) {
          out.largest_operator =
              std::max(out.largest_operator, w.at("workspace_size_bytes").get<std::int64_t>());
        }
      }
    }
  }
  return out;
}

std::optional<Verdict> disagreement(const Plan& plan, const PoolSizes& sizes,
                                    const std::string& metadata_json,
                                    const std::vector<std::pair<std::string, std::string>>& files,
                                    const std::string& prefix, const std::string& mod_name) {
  for (const auto& pool : plan.pools) {
    const auto it = sizes.find(pool.name);
    if (it == sizes.end() || it->second.size() < 2) continue;
    const std::int64_t first = it->second.begin()->second;
    for (const auto& [where, size] : it->second) {
      if (size != first) {
        return Verdict{Stage::kCodegen,
                       PoolSizeDisagreement{stable_pool_name(pool.name), it->second}};
      }
    }
  }
  // metadata.json states one workspace for main: the workspace pools' sizes summed (TVM's
  // PlanMemoryWithUSMP) plus the largest operator's own workspace.
  const auto meta = metadata_workspace(metadata_json, mod_name);
  if (!meta) return std::nullopt;
  std::int64_t sum = 0;
  std::string names;
  for (const auto& pool : plan.pools) {
    if (pool.constant) continue;
    if (!pool.size) return std::nullopt;
    sum += *pool.size;
    names += (names.empty() ? "" : "+") + stable_pool_name(pool.name);
  }
  if (names.empty()) return std::nullopt;
  if (meta->main != sum + meta->largest_operator) {
    return Verdict{Stage::kCodegen,
                   PoolSizeDisagreement{
                       names, {{"plan", sum + meta->largest_operator}, {"metadata", meta->main}}}};
  }
  // The header's `..._WORKSPACE_SIZE` is written from metadata.json's main workspace.
  static const std::regex kWorkspace(R"(\s*#define\s+([A-Za-z_]\w*)_WORKSPACE_SIZE\s+(\d+)\s*)");
  for (const auto& [name, text] : files) {
    if (!name.ends_with(".h") || name == "crt_config.h") continue;
    for (std::string_view line : lines_of(text)) {
      std::match_results<std::string_view::const_iterator> m;
      if (line.find("_WORKSPACE_SIZE") == std::string_view::npos ||
          !std::regex_match(line.begin(), line.end(), m, kWorkspace) ||
          m[1].str() != upper_sanitized(prefix)) {
        continue;
      }
      const std::int64_t header = std::stoll(m[2].str());
      if (header != meta->main) {
        return Verdict{Stage::kCodegen,
                       PoolSizeDisagreement{names, {{"header", header}, {"metadata", meta->main}}}};
      }
    }
  }
  return std::nullopt;
}

std::optional<Verdict> leftover(const std::vector<std::pair<std::string, std::string>>& files,
                                const std::string& mod_name) {
  for (const auto& [name, text] : files) {
    // The C runtime defines it; only TVM's generated code must not call it.
    if (!name.ends_with(".c") || name == "crt_backend_api.c") continue;
    if (text.find("TVMBackendAllocWorkspace") == std::string::npos) continue;
    for (const auto& f : c_functions(text)) {
      for (const auto& id : identifiers(f.body)) {
        if (id == "TVMBackendAllocWorkspace") {
          return Verdict{Stage::kCodegen,
                         WorkspaceLeftover{f.name, oracle::callee_kind_of(f.name, mod_name)}};
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::string stable_pool_name(const std::string& name) {
  const std::string pool = pool_of_var(name);
  return pool.empty() ? name : pool;
}

std::optional<Verdict> judge_pool_plan(
    const nlohmann::json& plan_json, const std::vector<std::pair<std::string, std::string>>& files,
    const std::string& metadata_json, const oracle::CaseOptions& options) {
  const std::string prefix = aot::symbol_prefix(options.aot);
  const std::string& mod_name = options.aot.mod_name;
  if (const auto plan = read_plan(plan_json)) {
    const auto liveness = read_liveness(*plan, files, prefix, mod_name);
    // Where TVM's plan put each buffer, then where its C puts it (the same, unless TVM's C
    // departs from its plan: then each is judged).
    std::vector<Placed> planned, in_c;
    bool departs = false;
    for (const auto& b : plan->buffers) {
      planned.push_back({&b, b.offset});
      std::int64_t offset = b.offset;
      if (liveness) {
        if (auto it = liveness->c_offset.find(b.name); it != liveness->c_offset.end()) {
          offset = it->second;
        }
      }
      departs = departs || offset != b.offset;
      in_c.push_back({&b, offset});
    }
    std::vector<const std::vector<Placed>*> placements{&planned};
    if (departs) placements.push_back(&in_c);
    for (const auto* placed : placements) {
      if (auto v = overlap(*placed, liveness)) return v;
    }
    const PoolSizes sizes = stated_sizes(*plan, files, prefix);
    for (const auto* placed : placements) {
      if (auto v = too_small(*plan, *placed, sizes)) return v;
    }
    for (const auto* placed : placements) {
      if (auto v = misaligned(*plan, *placed, options)) return v;
    }
    if (auto v = disagreement(*plan, sizes, metadata_json, files, prefix, mod_name)) return v;
  }
  return leftover(files, mod_name);
}

}  // namespace aotfuzz::tvm
