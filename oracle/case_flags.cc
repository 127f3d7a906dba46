// Case options to replay flags and back (oracle/case_flags.h).
#include "oracle/case_flags.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "aot/bugs.h"
#include "aot/c_writer.h"
#include "aot/pipeline.h"
#include "host/shell_words.h"

namespace aotfuzz::oracle {

using host::shell_quote;

namespace {

// Each row's apply throws with what was wrong with the value; the caller names the flag.
std::uint64_t parse_u64(const std::string& value, std::uint64_t min = 0,
                        std::uint64_t max = UINT64_MAX) {
  std::uint64_t v = 0;
  const char* end = value.data() + value.size();
  // from_chars takes decimal digits only (no sign, no base prefix) and reports overflow.
  const auto [ptr, ec] = std::from_chars(value.data(), end, v);
  if (value.empty() || ec != std::errc() || ptr != end || v < min || v > max) {
    throw FlagError("expects a whole number from " + std::to_string(min) + " to " +
                    std::to_string(max) + ", got '" + value + "'");
  }
  return v;
}

std::string one_of(const std::string& value, std::initializer_list<std::string_view> choices) {
  std::string list;
  for (auto c : choices) {
    if (value == c) return value;
    list += (list.empty() ? "" : ", ") + std::string(c);
  }
  throw FlagError("expects one of " + list + ", got '" + value + "'");
}

bool on(const std::string& value) { return value == "1"; }

std::string print_nothing(const CaseOptions&) { return ""; }

void apply_merge(CaseFlagTarget& t, const std::string& v) { t.options.aot.merge = on(v); }
std::string print_merge(const CaseOptions& o) { return o.aot.merge ? " --merge" : " --no-merge"; }

// The name becomes part of C identifiers and file names: one identifier fragment of bounded
// length. Empty is TVM's default, the prefix "tvmgen" alone.
constexpr std::size_t kMaxModuleName = 64;
void apply_mod_name(CaseFlagTarget& t, const std::string& v) {
  if (v.size() > kMaxModuleName) {
    throw FlagError("expects at most " + std::to_string(kMaxModuleName) + " characters, got " +
                    std::to_string(v.size()));
  }
  if (!v.empty() && !aot::is_c_identifier(v)) {
    throw FlagError(
        "expects a C identifier fragment ([A-Za-z0-9_], not starting with a digit), got '" + v +
        "'");
  }
  t.options.aot.mod_name = v;
}
std::string print_mod_name(const CaseOptions& o) {
  return o.aot.mod_name == aot::Options().mod_name ? ""
                                                   : " --mod-name " + shell_quote(o.aot.mod_name);
}

void apply_api(CaseFlagTarget& t, const std::string& v) {
  t.options.aot.api = one_of(v, {"packed", "unpacked"}) == "packed" ? aot::Options::Api::kPacked
                                                                    : aot::Options::Api::kUnpacked;
}
std::string print_api(const CaseOptions& o) {
  return o.aot.api == aot::Options::Api::kPacked ? " --api packed" : " --api unpacked";
}

void apply_interface(CaseFlagTarget& t, const std::string& v) {
  t.options.aot.interface = one_of(v, {"packed", "c"}) == "packed"
                                ? aot::Options::Interface::kPacked
                                : aot::Options::Interface::kC;
}
std::string print_interface(const CaseOptions& o) {
  return o.aot.interface == aot::Options::Interface::kPacked ? " --interface packed"
                                                             : " --interface c";
}

void apply_storage_reuse(CaseFlagTarget& t, const std::string& v) {
  t.options.aot.storage_reuse = on(v);
}
std::string print_storage_reuse(const CaseOptions& o) {
  return o.aot.storage_reuse ? " --storage-reuse" : " --no-storage-reuse";
}

void apply_max_fuse_depth(CaseFlagTarget& t, const std::string& v) {
  t.options.aot.max_fuse_depth = static_cast<int>(parse_u64(v, 1, 1u << 20));
}
std::string print_max_fuse_depth(const CaseOptions& o) {
  return o.aot.max_fuse_depth == aot::kDefaultMaxFuseDepth
             ? ""
             : " --max-fuse-depth " + std::to_string(o.aot.max_fuse_depth);
}

void apply_cc(CaseFlagTarget& t, const std::string& v) {
  t.options.compiler = host::parse_compiler_kind(one_of(v, {"tcc", "gcc", "clang"}));
}
std::string print_cc(const CaseOptions& o) {
  return o.compiler ? " --cc " + std::string(host::compiler_kind_name(*o.compiler)) : "";
}

void apply_sanitize(CaseFlagTarget& t, const std::string&) { t.options.sanitize = true; }
std::string print_sanitize(const CaseOptions& o) { return o.sanitize ? " --sanitize" : ""; }

void apply_check_num_args(CaseFlagTarget& t, const std::string&) {
  t.options.aot.check_num_args = true;
}
std::string print_check_num_args(const CaseOptions& o) {
  return o.aot.check_num_args ? " --check-num-args" : "";
}

void apply_input_seed(CaseFlagTarget& t, const std::string& v) {
  t.options.input_seed = parse_u64(v);
}
std::string print_input_seed(const CaseOptions& o) {
  return o.input_seed == CaseOptions().input_seed ? ""
                                                  : " --input-seed " + std::to_string(o.input_seed);
}

void apply_ulp(CaseFlagTarget& t, const std::string& v) {
  t.options.max_ulp = static_cast<std::uint32_t>(parse_u64(v, 0, UINT32_MAX));
}
std::string print_ulp(const CaseOptions& o) {
  return o.max_ulp == 0 ? "" : " --ulp " + std::to_string(o.max_ulp);
}

// In MiB on the command line; 2^44 MiB and more is no budget.
constexpr std::uint64_t kNoBudgetMib = std::uint64_t{1} << 44;
void apply_memory_budget(CaseFlagTarget& t, const std::string& v) {
  const std::uint64_t mib = parse_u64(v, 1);
  t.options.memory_budget = mib >= kNoBudgetMib ? UINT64_MAX : mib << 20;
}
std::string print_memory_budget(const CaseOptions& o) {
  if (o.memory_budget == CaseOptions().memory_budget) return "";
  // Rounded up; no budget is the largest one the flag takes.
  const std::uint64_t mib = o.memory_budget == 0 || o.memory_budget >= (std::uint64_t{1} << 63)
                                ? kNoBudgetMib
                                : (o.memory_budget + (std::uint64_t{1} << 20) - 1) >> 20;
  return " --memory-budget " + std::to_string(mib);
}

void apply_inject(CaseFlagTarget& t, const std::string& v) {
  auto bug = aot::parse_bug(v);
  if (!bug) throw FlagError("unknown bug '" + v + "' (see `aotfuzz bugs`)");
  t.options.aot.bugs.enable(*bug);
}
std::string print_inject(const CaseOptions& o) {
  std::string f;
  for (const auto& row : aot::bug_table()) {
    if (o.aot.bugs.on(row.bug)) f += " --inject " + std::string(row.name);
  }
  return f;
}

void apply_no_run(CaseFlagTarget& t, const std::string&) { t.options.in_process_only = true; }
std::string print_no_run(const CaseOptions& o) { return o.in_process_only ? " --no-run" : ""; }

void apply_structure(CaseFlagTarget& t, const std::string& v) { t.options.check_structure = on(v); }
std::string print_structure(const CaseOptions& o) {
  return o.check_structure ? "" : " --no-structure";
}
void apply_known(CaseFlagTarget& t, const std::string& v) { t.options.see_past_known = on(v); }
std::string print_known(const CaseOptions& o) { return o.see_past_known ? "" : " --no-known"; }

void apply_determinism(CaseFlagTarget& t, const std::string& v) {
  t.options.check_determinism = on(v);
}
std::string print_determinism(const CaseOptions& o) {
  return o.check_determinism ? "" : " --no-determinism";
}

void apply_warnings(CaseFlagTarget& t, const std::string& v) { t.options.check_warnings = on(v); }
std::string print_warnings(const CaseOptions& o) {
  return o.check_warnings ? "" : " --no-warnings";
}

void apply_usmp(CaseFlagTarget& t, const std::string& v) {
  t.options.memory.usmp = one_of(v, {"on", "off"}) == "on";
}
std::string print_usmp(const CaseOptions& o) { return o.memory.usmp ? " --usmp on" : ""; }

void apply_usmp_algorithm(CaseFlagTarget& t, const std::string& v) {
  t.options.memory.usmp_algorithm =
      one_of(v, {"greedy_by_size", "greedy_by_conflicts", "hill_climb"});
}
std::string print_usmp_algorithm(const CaseOptions& o) {
  return o.memory.usmp_algorithm == MemoryOptions().usmp_algorithm
             ? ""
             : " --usmp-algorithm " + o.memory.usmp_algorithm;
}

void apply_pools(CaseFlagTarget& t, const std::string& v) {
  t.options.memory.pools = one_of(v, {"internal", "external"}) == "external"
                               ? MemoryOptions::Pools::kExternal
                               : MemoryOptions::Pools::kInternal;
}
std::string print_pools(const CaseOptions& o) {
  return o.memory.pools == MemoryOptions::Pools::kExternal ? " --pools external" : "";
}

void apply_workspace_io(CaseFlagTarget& t, const std::string& v) {
  t.options.memory.workspace_io = on(v);
}
std::string print_workspace_io(const CaseOptions& o) {
  return o.memory.workspace_io ? " --workspace-io" : "";
}

// TVM takes any positive alignment; a power of two is what hardware asks for, and the bound
// keeps pools of a small graph small.
int parse_alignment(const std::string& v) {
  const auto n = parse_u64(v, 1, 4096);
  if ((n & (n - 1)) != 0) throw FlagError("expects a power of two, got '" + v + "'");
  return static_cast<int>(n);
}
void apply_workspace_alignment(CaseFlagTarget& t, const std::string& v) {
  t.options.memory.workspace_alignment = parse_alignment(v);
}
std::string print_workspace_alignment(const CaseOptions& o) {
  return o.memory.workspace_alignment == MemoryOptions().workspace_alignment
             ? ""
             : " --workspace-alignment " + std::to_string(o.memory.workspace_alignment);
}
void apply_constant_alignment(CaseFlagTarget& t, const std::string& v) {
  t.options.memory.constant_alignment = parse_alignment(v);
}
std::string print_constant_alignment(const CaseOptions& o) {
  return o.memory.constant_alignment == MemoryOptions().constant_alignment
             ? ""
             : " --constant-alignment " + std::to_string(o.memory.constant_alignment);
}

void apply_link_params(CaseFlagTarget& t, const std::string& v) {
  t.options.memory.link_params = on(v);
}
std::string print_link_params(const CaseOptions& o) {
  return o.memory.link_params ? "" : " --no-link-params";
}

void apply_sut(CaseFlagTarget& t, const std::string& v) {
  if (v.empty()) throw FlagError("expects the name of a system under test");
  t.sut.name = v;
}
// The system's whole spec, home included (sut_replay_flags): the home's own row prints nothing.
std::string print_sut(const CaseOptions& o) { return sut_replay_flags(system_of(o)); }

void apply_tvm_home(CaseFlagTarget& t, const std::string& v) {
  if (v.empty()) throw FlagError("expects a directory");
  t.sut.home = v;
}

void apply_tvm_fixed_home(CaseFlagTarget& t, const std::string& v) {
  if (v.empty()) throw FlagError("expects a directory");
  t.sut.fixed_home = v;
}

std::chrono::milliseconds parse_seconds(const std::string& v) {
  char* end = nullptr;
  const double seconds = std::strtod(v.c_str(), &end);
  // 1e9 s keeps the budget in milliseconds far inside an int64; under a millisecond is none.
  if (v.empty() || *end != '\0' || !std::isfinite(seconds) || seconds < 0.001 || seconds > 1e9) {
    throw FlagError("expects seconds, at least 0.001 and at most 1e9, got '" + v + "'");
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
}
std::string print_seconds(const char* flag, std::chrono::milliseconds ms) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", ms.count() / 1000.0);
  return " --" + std::string(flag) + " " + seconds;
}

void apply_in_process_time(CaseFlagTarget& t, const std::string& v) {
  t.options.in_process_budget = parse_seconds(v);
}
std::string print_in_process_time(const CaseOptions& o) {
  if (o.in_process_budget == CaseOptions().in_process_budget) return "";
  return print_seconds("in-process-time", o.in_process_budget);
}

void apply_run_timeout(CaseFlagTarget& t, const std::string& v) {
  t.options.limits.timeout = parse_seconds(v);
}
std::string print_run_timeout(const CaseOptions& o) {
  if (o.limits.timeout == CaseOptions().limits.timeout) return "";
  return print_seconds("run-timeout", o.limits.timeout);
}

std::string pass_names() {
  std::string names;
  for (const auto& row : aot::pass_table()) {
    names += (names.empty() ? "" : ", ") + std::string(row.name);
  }
  return names;
}

// usmp:overlap is TVM's planner's fault (MemoryOptions::debug_overlap), the others aotfuzz's own.
constexpr std::string_view kUsmpOverlap = "usmp:overlap";
void apply_debug_fault(CaseFlagTarget& t, const std::string& v) {
  if (v == kUsmpOverlap) {
    t.options.memory.debug_overlap = true;
    return;
  }
  if (!aot::parse_debug_fault(v, t.options.aot)) {
    throw FlagError("expects PASS:crash, PASS:hang, PASS:overflow or PASS:throw, PASS a pass (" +
                    pass_names() + "), or usmp:overlap, got '" + v + "'");
  }
}
std::string print_debug_fault(const CaseOptions& o) {
  std::string out;
  if (o.aot.debug_fault != aot::Options::DebugFault::kNone) {
    out += " --debug-fault " + shell_quote(aot::debug_fault_spec(o.aot));
  }
  if (o.memory.debug_overlap) out += " --debug-fault " + std::string(kUsmpOverlap);
  return out;
}

}  // namespace

const std::vector<CaseFlagRow>& case_flag_table() {
  static const std::vector<CaseFlagRow> table = {
#define AOTFUZZ_CASE_FLAG(Id, name, kind, value_name, commands, drawn, replay, apply, print,     \
                          default_text, help)                                                    \
  {CaseFlag::Id, name,  CaseFlagKind::kind, value_name, commands, drawn, CaseFlagReplay::replay, \
   apply,        print, default_text,       help},
#include "oracle/case_flags.def"
#undef AOTFUZZ_CASE_FLAG
  };
  return table;
}

const CaseFlagRow& case_flag(CaseFlag id) {
  return case_flag_table()[static_cast<std::size_t>(id)];
}

const CaseFlagRow* find_case_flag(std::string_view flag) {
  if (flag.rfind("--", 0) != 0) return nullptr;
  flag.remove_prefix(2);
  for (const auto& row : case_flag_table()) {
    if (flag == row.name) return &row;
    if (row.kind == CaseFlagKind::kPair && flag.rfind("no-", 0) == 0 &&
        flag.substr(3) == row.name) {
      return &row;
    }
  }
  return nullptr;
}

std::vector<std::string> split_flags(std::string_view flags) {
  // POSIX shell words, as replay_flags quotes them (shell_quote): blanks separate words,
  // '...' is literal, "..." keeps \\, \", \$ and \` escapes, a backslash outside quotes escapes
  // the next character; '' is an empty word.
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    const char c = flags[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      if (in_word) out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else if (c == '\'') {
      const std::size_t end = flags.find('\'', i + 1);
      if (end == std::string_view::npos) throw FlagError("unterminated ' in flags");
      cur.append(flags.substr(i + 1, end - i - 1));
      i = end;
      in_word = true;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < flags.size() && flags[j] != '"'; ++j) {
        if (flags[j] == '\\' && j + 1 < flags.size() &&
            std::string_view("\\\"$`").find(flags[j + 1]) != std::string_view::npos) {
          ++j;
        }
        cur += flags[j];
      }
      if (j >= flags.size()) throw FlagError("unterminated \" in flags");
      i = j;
      in_word = true;
    } else if (c == '\\' && i + 1 < flags.size()) {
      cur += flags[++i];
      in_word = true;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(std::move(cur));
  return out;
}

std::optional<std::string> memory_options_problem(const CaseOptions& o) {
  const MemoryOptions& m = o.memory;
  if (!m.usmp) {
    if (m.usmp_algorithm != MemoryOptions().usmp_algorithm)
      return "--usmp-algorithm needs --usmp on";
    if (m.pools == MemoryOptions::Pools::kExternal) return "--pools external needs --usmp on";
    if (m.workspace_io) return "--workspace-io needs --usmp on";
    if (m.debug_overlap) return "--debug-fault usmp:overlap needs --usmp on";
  }
  if (m.workspace_io && o.aot.interface != aot::Options::Interface::kC) {
    return "--workspace-io needs --interface c (as in TVM)";
  }
  return std::nullopt;
}

CaseOptions case_options_from_words(const std::vector<std::string>& words,
                                    const SystemMaker& make_system, bool command_line,
                                    bool system_refusals) {
  CaseOptions o;
  SutSpec sut;
  CaseFlagTarget target{o, sut};
  // A case from a file is judged as `aotfuzz run` judges it: a crashing pass is a verdict.
  o.isolate_in_process = true;
  o.check_warnings = true;
  // Both halves of a pair say two things of one case, whichever the order: refused, as the
  // command line refuses them.
  std::map<const CaseFlagRow*, std::string> pair_given;
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string flag = words[i];
    std::optional<std::string> inline_value;
    if (auto eq = flag.find('='); eq != std::string::npos && flag.rfind("--", 0) == 0) {
      inline_value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    const CaseFlagRow* row = find_case_flag(flag);
    if (row == nullptr || (row->replay == CaseFlagReplay::kNever && !command_line)) {
      throw FlagError("unknown flag '" + words[i] + "'");
    }
    std::string value;
    if (row->kind == CaseFlagKind::kValue || row->kind == CaseFlagKind::kList) {
      if (inline_value) {
        value = *inline_value;
      } else if (i + 1 < words.size()) {
        value = words[++i];
      } else {
        throw FlagError(flag + " needs a value");
      }
    } else if (inline_value) {
      throw FlagError(flag + " takes no value");
    } else {
      // One character, not a literal assigned: GCC 12 warns falsely (-Wrestrict) on that at -O2.
      value = std::string(1, flag.substr(2) == row->name ? '1' : '0');
      if (row->kind == CaseFlagKind::kPair) {
        auto [given, fresh] = pair_given.emplace(row, value);
        if (!fresh && given->second != value) {
          throw FlagError("--" + std::string(row->name) + " and --no-" + std::string(row->name) +
                          " together");
        }
      }
    }
    try {
      row->apply(target, value);
    } catch (const FlagError& e) {
      throw FlagError(flag + ": " + e.what());
    }
  }
  if (sut != SutSpec()) {
    try {
      o.sut = make_system ? make_system(sut) : nullptr;
    } catch (const std::invalid_argument& e) {
      throw FlagError(e.what());
    }
    if (!o.sut) throw FlagError("--sut " + sut.name + ": not a system under test here");
  }
  if (system_refusals) {
    if (auto why = system_of(o).refuses(o)) throw FlagError(*why);
  }
  if (o.aot.interface == aot::Options::Interface::kC && o.aot.api == aot::Options::Api::kPacked) {
    throw FlagError("--interface c requires --api unpacked (as in TVM)");
  }
  if (auto why = memory_options_problem(o)) throw FlagError(*why);
  if (o.sanitize && o.compiler == host::CompilerKind::kTcc) {
    throw FlagError("--sanitize needs --cc gcc or --cc clang");
  }
  if (o.sanitize && !o.compiler) o.compiler = host::sanitizing_compiler();
  return o;
}

CaseOptions parse_case_flags(std::string_view flags, const SystemMaker& make_system) {
  return case_options_from_words(split_flags(flags), make_system);
}

std::string replay_flags(const CaseOptions& o) {
  std::string f;
  for (const auto& row : case_flag_table()) f += row.print(o);
  // Without a leading blank, as the flags follow the command's own words.
  return f.empty() ? f : f.substr(1);
}

}  // namespace aotfuzz::oracle
