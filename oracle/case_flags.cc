// Case options to replay flags and back (oracle/case_flags.h).
#include "oracle/case_flags.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "aot/bugs.h"
#include "host/shell_words.h"

namespace aotfuzz::oracle {

using host::shell_quote;

namespace {

std::uint64_t parse_u64(const std::string& flag, const std::string& value) {
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos ||
      value.size() > 19) {
    throw FlagError(flag + " expects a non-negative integer, got '" + value + "'");
  }
  return std::stoull(value);
}

}  // namespace

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

CaseOptions parse_case_flags(std::string_view flags, const SystemMaker& make_system) {
  CaseOptions o;
  SutSpec sut;
  // A case from a file is judged as `aotfuzz run` judges it: a crashing pass is a verdict.
  o.isolate_in_process = true;
  o.check_warnings = true;
  const auto tokens = split_flags(flags);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string flag = tokens[i];
    std::optional<std::string> inline_value;
    if (auto eq = flag.find('='); eq != std::string::npos && flag.rfind("--", 0) == 0) {
      inline_value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= tokens.size()) throw FlagError(flag + " needs a value");
      return tokens[++i];
    };
    auto no_value = [&] {
      if (inline_value) throw FlagError(flag + " takes no value");
    };
    if (flag == "--merge") {
      no_value();
      o.aot.merge = true;
    } else if (flag == "--no-merge") {
      no_value();
      o.aot.merge = false;
    } else if (flag == "--mod-name") {
      o.aot.mod_name = value();
    } else if (flag == "--api") {
      std::string v = value();
      if (v != "packed" && v != "unpacked")
        throw FlagError("--api: packed or unpacked, got " + v);
      o.aot.api = v == "packed" ? aot::Options::Api::kPacked : aot::Options::Api::kUnpacked;
    } else if (flag == "--interface") {
      std::string v = value();
      if (v != "packed" && v != "c") throw FlagError("--interface: packed or c, got " + v);
      o.aot.interface =
          v == "packed" ? aot::Options::Interface::kPacked : aot::Options::Interface::kC;
    } else if (flag == "--storage-reuse") {
      no_value();
      o.aot.storage_reuse = true;
    } else if (flag == "--no-storage-reuse") {
      no_value();
      o.aot.storage_reuse = false;
    } else if (flag == "--max-fuse-depth") {
      const auto v = parse_u64(flag, value());
      if (v < 1 || v > (1u << 20)) throw FlagError("--max-fuse-depth: 1 to 1048576");
      o.aot.max_fuse_depth = static_cast<int>(v);
    } else if (flag == "--check-num-args") {
      no_value();
      o.aot.check_num_args = true;
    } else if (flag == "--inject") {
      std::string v = value();
      auto bug = aot::parse_bug(v);
      if (!bug) throw FlagError("unknown bug '" + v + "' (see `aotfuzz bugs`)");
      o.aot.bugs.enable(*bug);
    } else if (flag == "--cc") {
      std::string v = value();
      auto kind = host::parse_compiler_kind(v);
      if (!kind) throw FlagError("--cc: tcc, gcc or clang, got " + v);
      o.compiler = *kind;
    } else if (flag == "--sanitize") {
      no_value();
      o.sanitize = true;
    } else if (flag == "--input-seed") {
      o.input_seed = parse_u64(flag, value());
    } else if (flag == "--ulp") {
      auto v = parse_u64(flag, value());
      if (v > 0xffffffffu) throw FlagError("--ulp is too large");
      o.max_ulp = static_cast<std::uint32_t>(v);
    } else if (flag == "--memory-budget") {
      const auto mib = parse_u64(flag, value());
      if (mib < 1) throw FlagError("--memory-budget: MiB, at least 1");
      o.memory_budget = mib >= (std::uint64_t{1} << 44) ? UINT64_MAX : mib << 20;
    } else if (flag == "--no-run") {
      no_value();
      o.in_process_only = true;
    } else if (flag == "--structure") {
      no_value();
      o.check_structure = true;
    } else if (flag == "--no-structure") {
      no_value();
      o.check_structure = false;
    } else if (flag == "--determinism") {
      no_value();
      o.check_determinism = true;
    } else if (flag == "--no-determinism") {
      no_value();
      o.check_determinism = false;
    } else if (flag == "--warnings") {
      no_value();
      o.check_warnings = true;
    } else if (flag == "--no-warnings") {
      no_value();
      o.check_warnings = false;
    } else if (flag == "--sut") {
      sut.name = value();
    } else if (flag == "--tvm-home") {
      sut.home = value();
    } else if (flag == "--in-process-time") {
      const std::string v = value();
      char* end = nullptr;
      const double seconds = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(seconds > 0) || seconds > 1e6) {
        throw FlagError("--in-process-time: seconds above 0, got " + v);
      }
      o.in_process_budget =
          std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
    } else if (flag == "--debug-fault") {
      const std::string v = value();
      if (!aot::parse_debug_fault(v, o.aot)) {
        throw FlagError("--debug-fault: PASS:crash, PASS:hang or PASS:overflow, got " + v);
      }
    } else {
      throw FlagError("unknown flag '" + tokens[i] + "'");
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
  if (auto why = system_of(o).refuses(o)) throw FlagError(*why);
  if (o.aot.interface == aot::Options::Interface::kC && o.aot.api == aot::Options::Api::kPacked) {
    throw FlagError("--interface c requires --api unpacked (as in TVM)");
  }
  if (o.sanitize && o.compiler == host::CompilerKind::kTcc) {
    throw FlagError("--sanitize needs --cc gcc or --cc clang");
  }
  if (o.sanitize && !o.compiler) o.compiler = host::sanitizing_compiler();
  return o;
}

std::string replay_flags(const CaseOptions& o) {
  std::string f = o.aot.merge ? "--merge" : "--no-merge";
  if (o.aot.mod_name != "default") f += " --mod-name " + shell_quote(o.aot.mod_name);
  f += o.aot.api == aot::Options::Api::kPacked ? " --api packed" : " --api unpacked";
  f += o.aot.interface == aot::Options::Interface::kPacked ? " --interface packed"
                                                           : " --interface c";
  f += o.aot.storage_reuse ? " --storage-reuse" : " --no-storage-reuse";
  if (o.aot.max_fuse_depth != aot::kDefaultMaxFuseDepth) {
    f += " --max-fuse-depth " + std::to_string(o.aot.max_fuse_depth);
  }
  if (o.compiler) f += " --cc " + std::string(host::compiler_kind_name(*o.compiler));
  if (o.sanitize) f += " --sanitize";
  if (o.aot.check_num_args) f += " --check-num-args";
  if (o.input_seed != 1) f += " --input-seed " + std::to_string(o.input_seed);
  if (o.max_ulp != 0) f += " --ulp " + std::to_string(o.max_ulp);
  if (o.memory_budget != CaseOptions().memory_budget) {
    // In MiB as on the command line (rounded up); no budget is the largest one it takes.
    const std::uint64_t mib = o.memory_budget == 0 || o.memory_budget >= (std::uint64_t{1} << 63)
                                  ? std::uint64_t{1} << 44
                                  : (o.memory_budget + (std::uint64_t{1} << 20) - 1) >> 20;
    f += " --memory-budget " + std::to_string(mib);
  }
  for (const auto& row : aot::bug_table()) {
    if (o.aot.bugs.on(row.bug)) f += " --inject " + std::string(row.name);
  }
  if (o.in_process_only) f += " --no-run";
  if (!o.check_structure) f += " --no-structure";
  if (!o.check_determinism) f += " --no-determinism";
  if (!o.check_warnings) f += " --no-warnings";
  f += sut_replay_flags(system_of(o).spec());
  if (o.in_process_budget != CaseOptions().in_process_budget) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", o.in_process_budget.count() / 1000.0);
    f += " --in-process-time " + std::string(seconds);
  }
  if (o.aot.debug_fault != aot::Options::DebugFault::kNone) {
    f += " --debug-fault " + shell_quote(aot::debug_fault_spec(o.aot));
  }
  return f;
}

}  // namespace aotfuzz::oracle
