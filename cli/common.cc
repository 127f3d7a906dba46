// File loading, error mapping, and the pipeline and policy flags shared by the subcommands.
#include "cli/common.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include "aot/bugs.h"
#include "aot/c_writer.h"
#include "aot/pipeline.h"
#include "generator/policy.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "ir/verify.h"
#include "systems/systems.h"

namespace aotfuzz::cli {

std::string read_file(const std::string& path) {
  if (path == "-") {
    // Standard input can be read once, and some commands read their file twice (reduce: the
    // text for its headers, then the module).
    static const std::string text = [] {
      std::ostringstream ss;
      ss << std::cin.rdbuf();
      return ss.str();
    }();
    return text;
  }
  // An ifstream opens a directory and reads nothing, which would be judged an empty module.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw CommandError(kBadInput, path + ": is a directory, not a Relay file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CommandError(kBadInput, path + ": cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw CommandError(kBadInput, path + ": read error");
  return ss.str();
}

ir::Module load_module(const std::string& path) {
  std::string text = read_file(path);
  const std::string name = path == "-" ? "<stdin>" : path;
  try {
    ir::Module m = ir::parse_module(text, name);
    ir::verify(m);
    return m;
  } catch (const ir::ParseError& e) {
    throw CommandError(kBadInput, e.what());
  } catch (const ir::Error& e) {
    throw CommandError(kBadInput, name + ": error: " + e.what());
  }
}

namespace {

[[noreturn]] void cannot_write(const std::string& path, const std::string& flag,
                               const std::string& command, const std::string& reason) {
  throw CommandError(kBadInput, command + ": cannot write " + flag + " " + path + ": " + reason);
}

}  // namespace

void check_output_file(const std::string& path, const std::string& flag,
                       const std::string& command) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) cannot_write(path, flag, command, "is a directory");
  const bool existed = fs::exists(fs::symlink_status(path, ec));
  // Opening is the only true test (permissions, read-only mounts, root); appending changes
  // nothing in a file that is there, and one that was not is removed again.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) cannot_write(path, flag, command, std::strerror(errno));
  ::close(fd);
  if (!existed) ::unlink(path.c_str());
}

void check_output_dir(const std::string& path, const std::string& flag,
                      const std::string& command) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::path(path).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();  // "findings/"
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    cannot_write(path, flag, command, "not a directory");
  }
  // The directories that are missing, deepest first: created for the probe, then removed, so
  // that a run which writes nothing leaves nothing behind (the campaign creates them on its
  // first finding).
  std::vector<fs::path> missing;
  for (fs::path p = dir; !p.empty() && !fs::exists(fs::symlink_status(p, ec));
       p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  std::string reason;
  fs::create_directories(dir, ec);
  if (ec) {
    reason = ec.message();
  } else {
    std::string probe = (dir / ".probe-XXXXXX").string();
    const int fd = ::mkstemp(probe.data());
    if (fd < 0) {
      reason = std::strerror(errno);
    } else {
      ::close(fd);
      ::unlink(probe.c_str());
    }
  }
  for (const auto& p : missing) fs::remove(p, ec);
  if (!reason.empty()) cannot_write(path, flag, command, reason);
}

CLI::Validator unsigned_decimal(std::uint64_t min) {
  const std::string expected =
      "expects a whole number from " + std::to_string(min) + " to 18446744073709551615, got '";
  return CLI::Validator(
      [min, expected](std::string& input) -> std::string {
        std::uint64_t value = 0;
        const char* end = input.data() + input.size();
        // from_chars takes decimal digits only (no sign, no base prefix) and reports overflow.
        const auto [ptr, ec] = std::from_chars(input.data(), end, value);
        if (input.empty() || ec != std::errc() || ptr != end || value < min) {
          return expected + input + "'";
        }
        input = std::to_string(value);  // "010" stays 10 when CLI11 reads it in base 0
        return {};
      },
      "", "");
}

CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(input.c_str(), &end);
        // 1e9 s keeps the budget in milliseconds far inside an int64.
        if (input.empty() || *end != '\0' || !std::isfinite(value) || value <= 0 || value > 1e9) {
          return "expects seconds, more than 0 and at most 1e9, got '" + input + "'";
        }
        return {};
      },
      "", "");
}

CLI::Validator module_name() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        // Empty is TVM's default: the prefix "tvmgen" alone. The name becomes part of C
        // identifiers and file names, so it is one identifier fragment of bounded length.
        if (input.size() > kMaxModuleName) {
          return "expects at most " + std::to_string(kMaxModuleName) + " characters, got " +
                 std::to_string(input.size());
        }
        if (!input.empty() && !aot::is_c_identifier(input)) {
          return "expects a C identifier fragment ([A-Za-z0-9_], not starting with a digit), got '" +
                 input + "'";
        }
        return {};
      },
      "", "");
}

void add_flag_pair(CLI::App* app, const std::string& name, bool& value, const std::string& help) {
  // No --x=false: a flag callback runs only for true, so the value would be ignored.
  const auto set_true = [&value] { value = true; };
  const auto set_false = [&value] { value = false; };
  CLI::Option* on = app->add_flag_callback("--" + name, set_true, help);
  CLI::Option* off = app->add_flag_callback("--no-" + name, set_false, "Opposite of --" + name);
  on->disable_flag_override()->excludes(off);
  off->disable_flag_override();
}

void add_pipeline_flags(CLI::App* app, PipelineFlags& f, bool toolchain, bool drawn_per_case) {
  // A campaign draws these per case unless the command line fixes them.
  const auto by_default = [drawn_per_case](const std::string& fixed) {
    return drawn_per_case ? std::string("default: drawn per case; given, fixed for every case")
                          : fixed;
  };
  add_flag_pair(app, "merge", f.merge,
                "Run MergeCompilerRegions (" + by_default("default on") + ")");
  app->add_option("--mod-name", f.mod_name, "Module name used in generated symbols")
      ->check(module_name());
  app->add_option("--api", f.api,
                  "Kernel calling convention" +
                      (drawn_per_case ? " (" + by_default("") + ")" : std::string()))
      ->check(CLI::IsMember({"packed", "unpacked"}));
  app->add_option("--interface", f.interface,
                  "Entry point interface (c needs --api unpacked)" +
                      (drawn_per_case ? " (" + by_default("") + ")" : std::string()))
      ->check(CLI::IsMember({"packed", "c"}));
  add_flag_pair(app, "storage-reuse", f.storage_reuse,
                "Reuse dead intermediates' storage (" + by_default("default on") + ")");
  app->add_flag("--check-num-args", f.check_num_args, "Emit num_args checks in packed functions");
  app->add_option("--max-fuse-depth", f.max_fuse_depth,
                  "FuseOps' limit on nodes per fused function (TVM's relay.FuseOps.max_depth; " +
                      by_default("default 256") + ")")
      ->check(CLI::Range(1, 1 << 20));
  app->add_option("--inject", f.inject, "Inject a bug from `aotfuzz bugs` (repeatable)");
  app->add_option("--in-process-time", f.in_process_time,
                  "Seconds the in-process steps of a case (reference, passes, C code) may take "
                  "before they are a timeout (default 10)")
      ->check(positive_seconds());
  // A testing aid, not a feature: kept out of the help (docs/fuzzing.md describes it).
  app->add_option("--debug-fault", f.debug_fault,
                  "Crash (PASS:crash), hang (PASS:hang) or write past a heap block (PASS:overflow) "
                  "in aotfuzz itself when pass PASS starts")
      ->group("");
  app->add_option("--memory-budget", f.memory_budget_mib,
                  "MiB of tensors a graph may need (inputs, intermediates, outputs; default " +
                      std::to_string(reference::kDefaultMemoryBudget >> 20) +
                      "): larger graphs are invalid input")
      ->transform(unsigned_decimal(1));
  if (!toolchain) return;
  app->add_option("--cc", f.cc, "Target C compiler")->check(CLI::IsMember({"tcc", "gcc", "clang"}));
  app->add_flag("--sanitize", f.sanitize, "Build the test program with ASan+UBSan (gcc/clang)");
  app->add_option("--input-seed", f.input_seed, "Seed of the input tensors")
      ->transform(unsigned_decimal(0));
  app->add_option("--ulp", f.ulp, "Tolerated float difference in ulps (default 0: bitwise)");
  add_flag_pair(app, "structure", f.structure,
                "Check every pass's module against TVM v0.8's rules (the reference passes; "
                "default on)");
  add_flag_pair(app, "determinism", f.determinism,
                "Generate the C twice (the second time from a copy of the module with fresh "
                "nodes) and require the same bytes (" + by_default("default on") + ")");
  add_flag_pair(app, "warnings", f.warnings,
                "Check a program compiled by tcc with gcc (else clang) -Wall -Wextra -Werror "
                "too (" + by_default("default on") + ")");
  app->add_flag("--no-run", f.no_run,
                "Stages and static checks only, nothing compiled or run (--sut tvm: TVM "
                "partitions, the modules are compared, nothing is built)");
  app->add_option("--sut", f.sut,
                  "System under test: builtin (this project's pipeline) or tvm (Apache TVM)")
      ->check(CLI::IsMember(systems::system_names()));
  app->add_option("--tvm-home", f.tvm_home,
                  "TVM tree with its build/ for --sut tvm (default $AOTFUZZ_TVM_HOME; "
                  "scripts/tvm/build.sh prints it)");
  app->add_option("--tvm-fixed-home", f.tvm_fixed_home,
                  "A TVM with the bug fixed: reduced findings must pass there (--sut tvm)");
}

namespace {

std::string pass_names() {
  std::string names;
  for (const auto& row : aot::pass_table()) names += (names.empty() ? "" : ", ") + std::string(row.name);
  return names;
}

}  // namespace

std::shared_ptr<const oracle::SystemUnderTest> make_sut(const std::string& sut,
                                                        const std::string& tvm_home,
                                                        const std::string& tvm_fixed_home) {
  if (sut == oracle::SutSpec().name) {
    if (!tvm_home.empty()) throw CommandError(kBadInput, "--tvm-home is for --sut tvm");
    if (!tvm_fixed_home.empty()) {
      throw CommandError(kBadInput, "--tvm-fixed-home is for --sut tvm");
    }
  }
  std::shared_ptr<const oracle::SystemUnderTest> system;
  try {
    system = systems::make_system({sut, tvm_home, tvm_fixed_home});
  } catch (const std::invalid_argument& e) {
    throw CommandError(kBadInput, e.what());
  }
  if (auto problem = system->problem()) throw CommandError(kBadInput, *problem);
  return system;
}

oracle::CaseOptions case_options(const PipelineFlags& f) {
  oracle::CaseOptions o;
  o.aot.merge = f.merge;
  o.aot.mod_name = f.mod_name;
  for (const auto& name : f.inject) {
    auto bug = aot::parse_bug(name);
    if (!bug) throw CommandError(kBadInput, "unknown bug '" + name + "' (see `aotfuzz bugs`)");
    o.aot.bugs.enable(*bug);
  }
  o.aot.api = f.api == "unpacked" ? aot::Options::Api::kUnpacked : aot::Options::Api::kPacked;
  o.aot.interface =
      f.interface == "c" ? aot::Options::Interface::kC : aot::Options::Interface::kPacked;
  if (o.aot.interface == aot::Options::Interface::kC && o.aot.api == aot::Options::Api::kPacked) {
    throw CommandError(kBadInput, "--interface c requires --api unpacked (as in TVM)");
  }
  o.aot.storage_reuse = f.storage_reuse;
  o.aot.check_num_args = f.check_num_args;
  o.aot.max_fuse_depth = f.max_fuse_depth;
  if (!f.cc.empty()) o.compiler = host::parse_compiler_kind(f.cc);
  o.sanitize = f.sanitize;
  if (o.sanitize && o.compiler == host::CompilerKind::kTcc) {
    throw CommandError(kBadInput, "--sanitize needs --cc gcc or --cc clang");
  }
  if (o.sanitize && !o.compiler) {
    o.compiler = host::sanitizing_compiler();
    if (!o.compiler) {
      throw CommandError(kInternal, "--sanitize needs gcc or clang, and neither is installed");
    }
  }
  o.input_seed = f.input_seed;
  o.max_ulp = f.ulp;
  o.memory_budget = f.memory_budget_mib >= (std::uint64_t{1} << 44) ? UINT64_MAX
                                                                   : f.memory_budget_mib << 20;
  o.in_process_only = f.no_run;
  o.check_structure = f.structure;
  o.check_determinism = f.determinism;
  o.check_warnings = f.warnings;
  o.isolate_in_process = true;
  o.in_process_budget =
      std::chrono::milliseconds(static_cast<std::int64_t>(f.in_process_time * 1000));
  if (!f.debug_fault.empty() && !aot::parse_debug_fault(f.debug_fault, o.aot)) {
    throw CommandError(kBadInput,
                       "--debug-fault expects PASS:crash, PASS:hang, PASS:overflow or PASS:throw, "
                       "PASS a pass (" + pass_names() + "), got '" + f.debug_fault + "'");
  }
  o.sut = make_sut(f.sut, f.tvm_home, f.tvm_fixed_home);
  if (auto why = oracle::system_of(o).refuses(o)) throw CommandError(kBadInput, *why);
  return o;
}

void add_policy_flags(CLI::App* app, std::vector<std::string>& knobs, int& size) {
  app->add_option("--knob", knobs, "Policy knob NAME=VALUE (see `aotfuzz gen --list-knobs`)");
  app->add_option("--size", size, "Builder steps per graph (0: the policy's range)")
      ->check(CLI::Range(0, std::numeric_limits<int>::max(), "NONNEGATIVE"));
}

generator::GenPolicy policy_from_flags(const std::vector<std::string>& knobs, int size,
                                       const std::string& command) {
  generator::GenPolicy policy;
  try {
    for (const auto& kv : knobs) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos) throw ir::Error("--knob expects NAME=VALUE, got '" + kv + "'");
      generator::set_knob(policy, kv.substr(0, eq), kv.substr(eq + 1));
    }
    if (size > 0) policy = generator::with_size(policy, size);
    generator::validate(policy);
  } catch (const ir::Error& e) {
    throw CommandError(kBadInput, command + ": " + e.what());
  }
  return policy;
}

std::string knob_flags(const generator::GenPolicy& policy) {
  const generator::GenPolicy defaults;
  std::string out;
  for (const auto& name : generator::knob_names()) {
    std::string value = generator::get_knob(policy, name);
    if (value != generator::get_knob(defaults, name)) out += " --knob " + name + "=" + value;
  }
  return out;
}

bool given(CLI::App* app, const std::string& name) {
  for (const std::string& n : {name, "--no-" + name.substr(2)}) {
    auto* opt = app->get_option_no_throw(n);
    if (opt != nullptr && opt->count() > 0) return true;
  }
  return false;
}

bool any_pipeline_flag(CLI::App* app) {
  for (const char* name :
       {"--merge", "--mod-name", "--api", "--interface", "--storage-reuse", "--check-num-args",
        "--max-fuse-depth", "--inject", "--cc", "--sanitize", "--input-seed", "--ulp",
        "--structure", "--no-structure", "--determinism", "--no-determinism",
        "--warnings", "--no-warnings"}) {
    if (given(app, name)) return true;
  }
  return false;
}

void require_findings_dir(const std::string& dir, const std::string& command) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const char* mark : {"fuzzer_stats", "plot_data", "campaigns"}) {
    if (fs::exists(fs::path(dir) / mark, ec)) return;
  }
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (fs::exists(it->path() / "verdict.json", ec)) return;
  }
  throw CommandError(kBadInput, command + ": " + dir +
                                    ": not a findings directory (no bundle, no campaign's status "
                                    "files; `aotfuzz fuzz --findings " + dir + "` makes one)");
}

}  // namespace aotfuzz::cli
