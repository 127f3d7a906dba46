// Verdict names, signatures, exit codes, summaries, JSON round trip, and mapping of compiler
// and run outcomes onto verdicts.
#include "oracle/verdict.h"

#include <cctype>

#include <array>
#include <chrono>
#include <type_traits>

namespace aotfuzz::oracle {
namespace {

using json = nlohmann::json;

constexpr std::array<std::string_view, kNumVerdictKinds> kKindNames = {"pass",
                                                                       "mismatch",
                                                                       "arity",
                                                                       "input-clobbered",
                                                                       "output-unwritten",
                                                                       "crash",
                                                                       "timeout",
                                                                       "compile-error",
                                                                       "pipeline-error",
                                                                       "invalid-input",
                                                                       "toolchain-error",
                                                                       "sut-error",
                                                                       "sut-crash",
                                                                       "fidelity",
                                                                       "structure",
                                                                       "nondeterministic",
                                                                       "error-ignored",
                                                                       "workspace-oversized",
                                                                       "pool-overlap",
                                                                       "pool-misaligned",
                                                                       "pool-too-small",
                                                                       "pool-size-disagreement",
                                                                       "workspace-leftover",
                                                                       "known"};
constexpr std::array<std::string_view, kNumCalleeKinds> kCalleeNames = {
    "kernel", "external", "executor", "entry", "hook-lowered"};
constexpr std::array<std::string_view, 2> kEvidenceNames = {"static", "dynamic"};

template <class Enum, std::size_t N>
std::optional<Enum> parse_name(const std::array<std::string_view, N>& names, std::string_view s) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == s) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

// Messages can be long and multi-line (compiler output): summaries keep one short line.
std::string one_line(std::string_view text, std::size_t max = 160) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > max) out = out.substr(0, max - 3) + "...";
  return out;
}

std::string tail(const std::string& text, std::size_t max) {
  return text.size() <= max ? text : text.substr(text.size() - max);
}

// A compiler's first error names the cause (and signatures of TVM's C are drawn from it); the
// last lines say where it stopped: both ends of a long log.
std::string ends(const std::string& text, std::size_t max) {
  if (text.size() <= max) return text;
  return text.substr(0, max / 2) + "\n[...]\n" + text.substr(text.size() - max / 2);
}

// Field access for from_json: each failure names the field and the kind it belongs to.
class Reader {
 public:
  Reader(const json& j, std::string_view kind) : j_(j), kind_(kind) {}

  template <class T>
  T get(const char* field) const {
    auto it = j_.find(field);
    if (it == j_.end()) fail(field, "is missing");
    if constexpr (std::is_same_v<T, std::string>) {
      if (!it->is_string()) fail(field, "must be a string");
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!it->is_boolean()) fail(field, "must be a boolean");
    } else if constexpr (std::is_integral_v<T>) {
      if (!it->is_number_integer()) fail(field, "must be an integer");
    } else if constexpr (std::is_same_v<T, std::map<std::string, std::int64_t>>) {
      if (!it->is_object()) fail(field, "must be an object");
      for (const auto& [key, value] : it->items()) {
        if (!value.is_number_integer()) fail(field, "must map names to integers");
      }
    }
    return it->template get<T>();
  }

  template <class Enum, std::size_t N>
  Enum get_enum(const char* field, const std::array<std::string_view, N>& names) const {
    auto s = get<std::string>(field);
    auto v = parse_name<Enum>(names, s);
    if (!v) fail(field, "has unknown value \"" + s + "\"");
    return *v;
  }

  Stage get_stage(const char* field) const {
    auto s = get<std::string>(field);
    auto v = parse_stage(s);
    if (!v) fail(field, "has unknown value \"" + s + "\"");
    return *v;
  }

  bool has(const char* field) const { return j_.contains(field) && !j_.at(field).is_null(); }

 private:
  [[noreturn]] void fail(const char* field, const std::string& what) const {
    throw VerdictError("verdict JSON (" + std::string(kind_) + "): field \"" + field + "\" " +
                       what);
  }
  const json& j_;
  std::string_view kind_;
};

// A pool's name as one word of a signature: `:` separates the words, and a name TVM did not
// sanitize must not bring spaces or control characters into a key.
std::string signature_word(const std::string& name) {
  std::string out;
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    out += (std::isalnum(u) != 0 || c == '_' || c == '-' || c == '.' || c == '+') ? c : '_';
  }
  return out.empty() ? "unnamed" : out;
}

std::string range(std::int64_t begin, std::int64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

}  // namespace

std::string_view verdict_kind_name(VerdictKind kind) {
  return kKindNames.at(static_cast<int>(kind));
}
std::optional<VerdictKind> parse_verdict_kind(std::string_view name) {
  return parse_name<VerdictKind>(kKindNames, name);
}
std::string_view callee_kind_name(CalleeKind kind) {
  return kCalleeNames.at(static_cast<int>(kind));
}
CalleeKind callee_kind_of(const std::string& callee, const std::string& mod_name) {
  const std::string prefix = aot::mangled_module_name(mod_name) + "_";
  if (callee == prefix + "run_model" || callee == prefix + "__tvm_main__") {
    return CalleeKind::kExecutor;
  }
  if (callee == prefix + "run") return CalleeKind::kEntry;
  if (callee.rfind(prefix + "fused_", 0) == 0) return CalleeKind::kKernel;
  // PartitionGraph names every region tvmgen_<mod>_<target>_main_<k>: the target says how TVM
  // lowered it.
  for (std::string_view target : kHookLoweredTargets) {
    if (callee.rfind(prefix + std::string(target) + "_", 0) == 0) return CalleeKind::kHookLowered;
  }
  return CalleeKind::kExternal;
}
std::string_view arity_evidence_name(ArityEvidence evidence) {
  return kEvidenceNames.at(static_cast<int>(evidence));
}

std::string signature(const Verdict& verdict) {
  std::string sig(verdict_kind_name(verdict.kind()));
  sig += ':';
  sig += stage_name(verdict.stage);
  if (const auto* a = std::get_if<Arity>(&verdict.detail)) {
    sig += ':';
    sig += callee_kind_name(a->callee_kind);
  } else if (const auto* k = std::get_if<Known>(&verdict.detail)) {
    sig += ':';
    sig += k->id;
  } else if (const auto* w = std::get_if<WorkspaceLeftover>(&verdict.detail)) {
    sig += ':';
    sig += callee_kind_name(w->function_kind);
  } else if (const auto* o = std::get_if<PoolOverlap>(&verdict.detail)) {
    sig += ':' + signature_word(o->pool);
  } else if (const auto* m = std::get_if<PoolMisaligned>(&verdict.detail)) {
    sig += ':' + signature_word(m->pool);
  } else if (const auto* t = std::get_if<PoolTooSmall>(&verdict.detail)) {
    sig += ':' + signature_word(t->pool);
  } else if (const auto* d = std::get_if<PoolSizeDisagreement>(&verdict.detail)) {
    sig += ':' + signature_word(d->pool);
  } else if (const auto* e = std::get_if<SutError>(&verdict.detail); e && !e->where.empty()) {
    sig += ':';
    sig += e->where;
  } else if (const auto* c = std::get_if<CompileError>(&verdict.detail);
             c && !c->diagnostic.empty()) {
    sig += ':';
    sig += c->diagnostic;
  } else if (const auto* c = std::get_if<Crash>(&verdict.detail)) {
    if (c->callee_kind) {
      sig += ':';
      sig += callee_kind_name(*c->callee_kind);
    }
    // Signal names only: a bare number would look like (and be filtered as) a varying value.
    std::string name = c->signal == 0 ? "NOSIGNAL" : host::signal_name(c->signal);
    bool named = name.find_first_of("0123456789") == std::string::npos;
    sig += named ? ":" + name : ":SIGOTHER";
  }
  return sig;
}

namespace {

// `text` as lower-case words joined by '-', quoted parts and numbers left out.
std::string words_of(std::string_view text, std::size_t max_length) {
  std::string out;
  bool quoted = false;
  bool gap = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    // Quotes: ' " ` and the UTF-8 curly quotes gcc prints (E2 80 98/99, E2 80 9C/9D).
    if (ch == '\'' || ch == '"' || ch == '`') {
      quoted = !quoted;
      gap = true;
      continue;
    }
    if (ch == 0xE2 && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x80) {
      const unsigned char q = static_cast<unsigned char>(text[i + 2]);
      if (q >= 0x98 && q <= 0x9D) {
        quoted = q == 0x98 || q == 0x9C;
        gap = true;
        i += 2;
        continue;
      }
    }
    if (quoted) continue;
    if (std::isalpha(ch) != 0 || ch == '_') {
      if (gap && !out.empty()) out.push_back('-');
      gap = false;
      out.push_back(static_cast<char>(std::tolower(ch)));
    } else {
      gap = true;
    }
  }
  if (out.size() > max_length) out.resize(max_length);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

}  // namespace

std::string diagnostic_class(std::string_view diagnostics) {
  // The compiler's own errors first, then the linker's (whose "collect2: error: ld returned"
  // line says nothing of the cause), then any line that mentions an error.
  std::string_view linker, any;
  std::size_t start = 0;
  while (start < diagnostics.size()) {
    std::size_t end = diagnostics.find('\n', start);
    if (end == std::string_view::npos) end = diagnostics.size();
    const std::string_view line = diagnostics.substr(start, end - start);
    start = end + 1;
    const std::size_t error = line.find("error:");
    if (error != std::string_view::npos && line.find("ld returned") == std::string_view::npos) {
      const std::string words = words_of(line.substr(error + 6), 60);
      if (!words.empty()) return words;
    }
    const std::size_t undefined = line.find("undefined reference");
    if (linker.empty() && undefined != std::string_view::npos) linker = line.substr(undefined);
    if (any.empty() && line.find("error") != std::string_view::npos) any = line;
  }
  std::string words = words_of(!linker.empty() ? linker : any, 60);
  return words.empty() ? "unclassified" : words;
}

std::string tvm_error_site(std::string_view where, std::string_view message) {
  std::string site(where);
  constexpr std::string_view kCheck = "Check failed: ";
  const std::size_t at = message.find(kCheck);
  if (at == std::string_view::npos) return site;
  std::string_view condition = message.substr(at + kCheck.size());
  // TVM prints "Check failed: (cond) is false: message" or "Check failed: a == b (1 vs. 2) :".
  for (std::string_view stop : {" is false", " (", ": ", "\n"}) {
    const std::size_t end = condition.find(stop);
    if (end != std::string_view::npos && end > 0) condition = condition.substr(0, end);
  }
  std::string words;
  for (char ch : condition) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (std::isalnum(u) != 0 || ch == '_') {
      if (std::isdigit(u) == 0) words.push_back(ch);
    } else if (!words.empty() && words.back() != '-') {
      words.push_back('-');
    }
  }
  while (!words.empty() && words.back() == '-') words.pop_back();
  while (!words.empty() && words.front() == '-') words.erase(words.begin());
  if (words.size() > 48) words.resize(48);
  if (!words.empty()) site += ":" + words;
  return site;
}

bool is_finding(const Verdict& verdict) {
  switch (verdict.kind()) {
    case VerdictKind::kPass:
    case VerdictKind::kKnown:
    case VerdictKind::kInvalidInput:
    case VerdictKind::kToolchainError:
      return false;
    default:
      return true;
  }
}

int exit_code(const Verdict& verdict) {
  switch (verdict.kind()) {
    case VerdictKind::kPass:
    case VerdictKind::kKnown:
      return 0;
    case VerdictKind::kInvalidInput:
      return 2;
    case VerdictKind::kToolchainError:
      return 3;
    default:
      return 1;
  }
}

std::string summary(const Verdict& verdict) {
  std::string head = std::string(verdict_kind_name(verdict.kind())) + " at " +
                     std::string(stage_name(verdict.stage));
  return std::visit(
      [&](const auto& d) -> std::string {
        using T = std::decay_t<decltype(d)>;
        if constexpr (std::is_same_v<T, Pass>) {
          return "pass";
        } else if constexpr (std::is_same_v<T, Mismatch>) {
          return head + ": output " + std::to_string(d.output_index) + " element " +
                 std::to_string(d.element_index) + ": expected " + one_line(d.expected, 40) +
                 ", got " + one_line(d.actual, 40);
        } else if constexpr (std::is_same_v<T, Arity>) {
          return head + ": " + std::string(callee_kind_name(d.callee_kind)) + " " + d.callee +
                 " called with " + std::to_string(d.actual_args) + " arguments, takes " +
                 std::to_string(d.expected_args) +
                 (d.evidence == ArityEvidence::kStatic ? " (emitted C)" : " (call trace)");
        } else if constexpr (std::is_same_v<T, InputClobbered>) {
          return head + ": input " + std::to_string(d.input_index) + " element " +
                 std::to_string(d.element_index) + " changed from " + one_line(d.expected, 40) +
                 " to " + one_line(d.actual, 40);
        } else if constexpr (std::is_same_v<T, OutputUnwritten>) {
          return head + ": output " + std::to_string(d.output_index) + " element " +
                 std::to_string(d.element_index) + " never written";
        } else if constexpr (std::is_same_v<T, Crash>) {
          std::string s =
              head + ": " + (d.signal == 0 ? "abnormal exit" : host::signal_name(d.signal));
          if (d.callee_kind) {
            s += " in " + std::string(callee_kind_name(*d.callee_kind));
            if (!d.callee.empty()) s += " " + d.callee;
          }
          return s;
        } else if constexpr (std::is_same_v<T, Timeout>) {
          return head + ": killed after " + std::to_string(d.limit_ms) + " ms" +
                 (d.detail.empty() ? "" : " (" + one_line(d.detail, 60) + ")");
        } else if constexpr (std::is_same_v<T, CompileError>) {
          return head + " (" + d.compiler + "): " + one_line(d.diagnostics);
        } else if constexpr (std::is_same_v<T, Fidelity>) {
          return head + ": the builtin pipeline's module differs from the system under test's";
        } else if constexpr (std::is_same_v<T, Structure>) {
          if (verdict.stage == Stage::kCodegen) {
            return head +
                   ": the pipeline and TVM's C interface rules disagree on whether to "
                   "refuse the input";
          }
          return head + ": the module differs from what TVM v0.8's rules give";
        } else if constexpr (std::is_same_v<T, Nondeterministic>) {
          return head + ": generating the C twice from one module gave different bytes";
        } else if constexpr (std::is_same_v<T, ErrorIgnored>) {
          return head + ": " +
                 (d.fail_at == 0 ? std::string("the workspace allocation")
                                 : "call " + std::to_string(d.fail_at)) +
                 " failed, the run returned " + std::to_string(d.rc) + " after " +
                 std::to_string(d.calls_after) + " more calls";
        } else if constexpr (std::is_same_v<T, WorkspaceOversized>) {
          return head + ": call " + std::to_string(d.call) + " (" + d.callee + ") opens sid_" +
                 std::to_string(d.sid) + " (" + std::to_string(d.bytes) + " bytes) while sid_" +
                 std::to_string(d.dead_sid) + " (" + std::to_string(d.dead_bytes) +
                 " bytes) holds nothing live after call " + std::to_string(d.dead_since) +
                 "; the workspace is " + std::to_string(d.workspace_bytes) + " bytes";
        } else if constexpr (std::is_same_v<T, PoolOverlap>) {
          return head + ": in pool " + d.pool + ", " + d.first + " " +
                 range(d.first_offset, d.first_end) + " and " + d.second + " " +
                 range(d.second_offset, d.second_end) + " share bytes while both are live (" +
                 (d.tvm_conflict ? std::string("TVM's plan lists them as conflicting")
                                 : "only the executor's call order says so") +
                 (d.live_at_call > 0 ? ", both live at call " + std::to_string(d.live_at_call)
                                     : std::string()) +
                 ")";
        } else if constexpr (std::is_same_v<T, PoolMisaligned>) {
          return head + ": in pool " + d.pool + ", " + d.buffer + " is at offset " +
                 std::to_string(d.offset) + ", not a multiple of its alignment " +
                 std::to_string(d.alignment);
        } else if constexpr (std::is_same_v<T, PoolTooSmall>) {
          return head + ": pool " + d.pool + " has " + std::to_string(d.size) + " bytes (" +
                 d.source + ") but " + d.buffer + " ends at " + std::to_string(d.needed);
        } else if constexpr (std::is_same_v<T, PoolSizeDisagreement>) {
          std::string sizes;
          for (const auto& [where, size] : d.sizes) {
            sizes += (sizes.empty() ? "" : ", ") + where + " " + std::to_string(size);
          }
          return head + ": the size of " + d.pool + " differs: " + sizes;
        } else if constexpr (std::is_same_v<T, WorkspaceLeftover>) {
          return head + ": " + std::string(callee_kind_name(d.function_kind)) + " " + d.function +
                 " still calls TVMBackendAllocWorkspace with the memory planner on";
        } else if constexpr (std::is_same_v<T, Known>) {
          return head + ": " + d.id + " (" + d.source + "): " + one_line(d.hidden);
        } else {
          return head + ": " + one_line(d.message);
        }
      },
      verdict.detail);
}

nlohmann::json to_json(const Verdict& verdict) {
  json j;
  j["kind"] = verdict_kind_name(verdict.kind());
  j["stage"] = stage_name(verdict.stage);
  j["signature"] = signature(verdict);
  j["summary"] = summary(verdict);
  std::visit(
      [&](const auto& d) {
        using T = std::decay_t<decltype(d)>;
        if constexpr (std::is_same_v<T, Mismatch>) {
          j["output_index"] = d.output_index;
          j["element_index"] = d.element_index;
          j["expected"] = d.expected;
          j["actual"] = d.actual;
        } else if constexpr (std::is_same_v<T, Arity>) {
          j["callee"] = d.callee;
          j["callee_kind"] = callee_kind_name(d.callee_kind);
          j["expected_args"] = d.expected_args;
          j["actual_args"] = d.actual_args;
          j["evidence"] = arity_evidence_name(d.evidence);
        } else if constexpr (std::is_same_v<T, InputClobbered>) {
          j["input_index"] = d.input_index;
          j["element_index"] = d.element_index;
          j["expected"] = d.expected;
          j["actual"] = d.actual;
        } else if constexpr (std::is_same_v<T, OutputUnwritten>) {
          j["output_index"] = d.output_index;
          j["element_index"] = d.element_index;
        } else if constexpr (std::is_same_v<T, Crash>) {
          j["signal"] = d.signal;
          j["host::signal_name"] = host::signal_name(d.signal);
          if (d.callee_kind) j["callee_kind"] = callee_kind_name(*d.callee_kind);
          j["callee"] = d.callee;
          j["stderr_tail"] = d.stderr_tail;
        } else if constexpr (std::is_same_v<T, Timeout>) {
          j["limit_ms"] = d.limit_ms;
          j["detail"] = d.detail;
        } else if constexpr (std::is_same_v<T, CompileError>) {
          j["compiler"] = d.compiler;
          j["diagnostics"] = d.diagnostics;
          if (!d.diagnostic.empty()) j["diagnostic"] = d.diagnostic;
        } else if constexpr (std::is_same_v<T, PipelineError> || std::is_same_v<T, InvalidInput> ||
                             std::is_same_v<T, ToolchainError> || std::is_same_v<T, SutError> ||
                             std::is_same_v<T, SutCrash>) {
          j["message"] = d.message;
          if constexpr (std::is_same_v<T, SutError>) j["where"] = d.where;
        } else if constexpr (std::is_same_v<T, Fidelity> || std::is_same_v<T, Structure> ||
                             std::is_same_v<T, Nondeterministic>) {
          j["diff"] = d.diff;
        } else if constexpr (std::is_same_v<T, ErrorIgnored>) {
          j["fail_at"] = d.fail_at;
          j["rc"] = d.rc;
          j["calls_after"] = d.calls_after;
        } else if constexpr (std::is_same_v<T, WorkspaceOversized>) {
          j["call"] = d.call;
          j["callee"] = d.callee;
          j["sid"] = d.sid;
          j["bytes"] = d.bytes;
          j["dead_sid"] = d.dead_sid;
          j["dead_bytes"] = d.dead_bytes;
          j["dead_since"] = d.dead_since;
          j["workspace_bytes"] = d.workspace_bytes;
        } else if constexpr (std::is_same_v<T, PoolOverlap>) {
          j["pool"] = d.pool;
          j["first"] = d.first;
          j["first_offset"] = d.first_offset;
          j["first_end"] = d.first_end;
          j["second"] = d.second;
          j["second_offset"] = d.second_offset;
          j["second_end"] = d.second_end;
          j["tvm_conflict"] = d.tvm_conflict;
          j["live_at_call"] = d.live_at_call;
        } else if constexpr (std::is_same_v<T, PoolMisaligned>) {
          j["pool"] = d.pool;
          j["buffer"] = d.buffer;
          j["offset"] = d.offset;
          j["alignment"] = d.alignment;
        } else if constexpr (std::is_same_v<T, PoolTooSmall>) {
          j["pool"] = d.pool;
          j["size"] = d.size;
          j["source"] = d.source;
          j["needed"] = d.needed;
          j["buffer"] = d.buffer;
        } else if constexpr (std::is_same_v<T, PoolSizeDisagreement>) {
          j["pool"] = d.pool;
          j["sizes"] = d.sizes;
        } else if constexpr (std::is_same_v<T, WorkspaceLeftover>) {
          j["function"] = d.function;
          j["function_kind"] = callee_kind_name(d.function_kind);
        } else if constexpr (std::is_same_v<T, Known>) {
          j["id"] = d.id;
          j["source"] = d.source;
          j["hidden"] = d.hidden;
        }
      },
      verdict.detail);
  return j;
}

Verdict from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw VerdictError("verdict JSON: expected an object");
  Reader top(j, "verdict");
  auto kind = top.get_enum<VerdictKind>("kind", kKindNames);
  Reader r(j, verdict_kind_name(kind));
  Verdict v;
  v.stage = r.get_stage("stage");
  switch (kind) {
    case VerdictKind::kPass:
      v.detail = Pass{};
      break;
    case VerdictKind::kMismatch:
      v.detail = Mismatch{r.get<int>("output_index"), r.get<std::int64_t>("element_index"),
                          r.get<std::string>("expected"), r.get<std::string>("actual")};
      break;
    case VerdictKind::kArity:
      v.detail =
          Arity{r.get<std::string>("callee"), r.get_enum<CalleeKind>("callee_kind", kCalleeNames),
                r.get<int>("expected_args"), r.get<int>("actual_args"),
                r.get_enum<ArityEvidence>("evidence", kEvidenceNames)};
      break;
    case VerdictKind::kInputClobbered:
      v.detail = InputClobbered{r.get<int>("input_index"), r.get<std::int64_t>("element_index"),
                                r.get<std::string>("expected"), r.get<std::string>("actual")};
      break;
    case VerdictKind::kOutputUnwritten:
      v.detail = OutputUnwritten{r.get<int>("output_index"), r.get<std::int64_t>("element_index")};
      break;
    case VerdictKind::kCrash: {
      Crash c;
      c.signal = r.get<int>("signal");
      if (r.has("callee_kind")) c.callee_kind = r.get_enum<CalleeKind>("callee_kind", kCalleeNames);
      c.callee = r.get<std::string>("callee");
      c.stderr_tail = r.get<std::string>("stderr_tail");
      v.detail = std::move(c);
      break;
    }
    case VerdictKind::kTimeout:
      v.detail = Timeout{r.get<std::int64_t>("limit_ms"), r.get<std::string>("detail")};
      break;
    case VerdictKind::kCompileError:
      v.detail = CompileError{r.get<std::string>("compiler"), r.get<std::string>("diagnostics"),
                              r.has("diagnostic") ? r.get<std::string>("diagnostic") : ""};
      break;
    case VerdictKind::kPipelineError:
      v.detail = PipelineError{r.get<std::string>("message")};
      break;
    case VerdictKind::kInvalidInput:
      v.detail = InvalidInput{r.get<std::string>("message")};
      break;
    case VerdictKind::kToolchainError:
      v.detail = ToolchainError{r.get<std::string>("message")};
      break;
    case VerdictKind::kSutError:
      v.detail = SutError{r.get<std::string>("message"),
                          r.has("where") ? r.get<std::string>("where") : std::string()};
      break;
    case VerdictKind::kSutCrash:
      v.detail = SutCrash{r.get<std::string>("message")};
      break;
    case VerdictKind::kFidelity:
      v.detail = Fidelity{r.get<std::string>("diff")};
      break;
    case VerdictKind::kStructure:
      v.detail = Structure{r.get<std::string>("diff")};
      break;
    case VerdictKind::kNondeterministic:
      v.detail = Nondeterministic{r.get<std::string>("diff")};
      break;
    case VerdictKind::kErrorIgnored:
      v.detail = ErrorIgnored{r.get<int>("fail_at"), r.get<int>("rc"), r.get<int>("calls_after")};
      break;
    case VerdictKind::kWorkspaceOversized:
      v.detail =
          WorkspaceOversized{r.get<int>("call"),       r.get<std::string>("callee"),
                             r.get<int>("sid"),        r.get<std::uint64_t>("bytes"),
                             r.get<int>("dead_sid"),   r.get<std::uint64_t>("dead_bytes"),
                             r.get<int>("dead_since"), r.get<std::uint64_t>("workspace_bytes")};
      break;
    case VerdictKind::kPoolOverlap:
      v.detail =
          PoolOverlap{r.get<std::string>("pool"),        r.get<std::string>("first"),
                      r.get<std::string>("second"),      r.get<std::int64_t>("first_offset"),
                      r.get<std::int64_t>("first_end"),  r.get<std::int64_t>("second_offset"),
                      r.get<std::int64_t>("second_end"), r.get<bool>("tvm_conflict"),
                      r.get<int>("live_at_call")};
      break;
    case VerdictKind::kPoolMisaligned:
      v.detail = PoolMisaligned{r.get<std::string>("pool"), r.get<std::string>("buffer"),
                                r.get<std::int64_t>("offset"), r.get<std::int64_t>("alignment")};
      break;
    case VerdictKind::kPoolTooSmall:
      v.detail = PoolTooSmall{r.get<std::string>("pool"), r.get<std::int64_t>("size"),
                              r.get<std::string>("source"), r.get<std::int64_t>("needed"),
                              r.get<std::string>("buffer")};
      break;
    case VerdictKind::kPoolSizeDisagreement:
      v.detail = PoolSizeDisagreement{r.get<std::string>("pool"),
                                      r.get<std::map<std::string, std::int64_t>>("sizes")};
      break;
    case VerdictKind::kWorkspaceLeftover:
      v.detail = WorkspaceLeftover{r.get<std::string>("function"),
                                   r.get_enum<CalleeKind>("function_kind", kCalleeNames)};
      break;
    case VerdictKind::kKnown:
      v.detail = Known{r.get<std::string>("id"), r.get<std::string>("source"),
                       r.get<std::string>("hidden")};
      break;
  }
  return v;
}

std::optional<Verdict> verdict_from_compile(const host::CompileResult& result,
                                            host::CompilerKind compiler) {
  switch (result.status) {
    case host::CompileStatus::kOk:
      return std::nullopt;
    case host::CompileStatus::kCompileError:
      return Verdict{Stage::kCodegen, CompileError{std::string(host::compiler_kind_name(compiler)),
                                                   ends(result.diagnostics, 8192), ""}};
    case host::CompileStatus::kToolchainError:
      break;
  }
  return Verdict{Stage::kCodegen, ToolchainError{result.message}};
}

std::optional<Verdict> verdict_from_run(const host::RunResult& result,
                                        const host::RunLimits& limits, Stage stage) {
  switch (result.kind) {
    case host::ExitKind::kExited:
      return std::nullopt;
    case host::ExitKind::kSignaled: {
      Crash c;
      c.signal = result.signal;
      c.stderr_tail = tail(result.stderr_text, 4096);
      return Verdict{stage, std::move(c)};
    }
    case host::ExitKind::kTimedOut:
      return Verdict{stage,
                     Timeout{static_cast<std::int64_t>(limits.timeout.count()), result.message}};
    case host::ExitKind::kStartFailed:
      break;
  }
  return Verdict{stage, ToolchainError{"cannot run the test program: " + result.message}};
}

}  // namespace aotfuzz::oracle
